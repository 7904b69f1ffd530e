"""docs/TORCH.md's example runs as it stands: the first ```python block after its
"## Example" heading, executed (its own asserts check the fit, eager and compiled)."""

from __future__ import annotations

import os
import re
import sys


def main() -> int:
    with open(os.environ["KJIT_TORCH_DOCS"], encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## Example"):]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block, "docs/TORCH.md: no python block after '## Example'"
    exec(compile(block.group(1), "docs/TORCH.md example", "exec"), {"__name__": "__main__"})
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
