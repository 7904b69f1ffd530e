#!/usr/bin/env python3
"""No installed header (every */include/ directory) includes nlohmann_json, and only
kjit/ffi/ffi.hpp includes the XLA ABI mirror (kjit/ffi/xla_abi.hpp): what <kjit/ffi.hpp> opts in.

The compiler's and codegen's headers listed in JSON_PENDING still include nlohmann_json: their
sources (compiler/src) were off-limits for issue 14 part 4. They are not reachable from
<kjit/dsl.hpp>, <kjit/kjit.hpp> or <kjit/ffi.hpp> (header_size.py checks that); the list may
only shrink.

usage: installed_headers.py PROJECT_ROOT
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
JSON_PENDING = {
    "codegen/include/kjit/codegen/codegen.hpp",
    "compiler/include/kjit/compiler/artifact.hpp",
    "compiler/include/kjit/compiler/kernel_description.hpp",
    "compiler/include/kjit/compiler/module_source.hpp",
}
XLA_ALLOWED = {"ffi/include/kjit/ffi/ffi.hpp"}
include = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
failed = False
seen_pending = set()
for inc_dir in sorted([*root.glob("*/include"), *root.glob("*/*/include")]):
    for path in sorted(inc_dir.rglob("*")):
        if not path.is_file() or path.suffix not in (".hpp", ".h", ".def"):
            continue
        rel = path.relative_to(root).as_posix()
        for target in include.findall(path.read_text()):
            if target.startswith("nlohmann/"):
                if rel in JSON_PENDING:
                    seen_pending.add(rel)
                else:
                    print(f"FAIL: {rel} includes <{target}>")
                    failed = True
            if target.endswith("xla_abi.hpp") and rel not in XLA_ALLOWED:
                print(f"FAIL: {rel} includes {target} (only kjit/ffi/ffi.hpp may)")
                failed = True
for rel in sorted(JSON_PENDING - seen_pending):
    print(f"FAIL: {rel} no longer includes nlohmann_json: remove it from JSON_PENDING")
    failed = True
print("installed headers: " + ("FAILED" if failed else "no nlohmann_json, XLA ABI only behind kjit/ffi.hpp"))
sys.exit(1 if failed else 0)
