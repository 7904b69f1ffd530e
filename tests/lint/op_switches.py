#!/usr/bin/env python3
"""Fails when a switch over IR ops (ir::Op, ir::AtomicOp), shapes (ir::Shape) or scalar kinds
(ir::Scalar) has a `default:` label.

With every case listed, -Werror=switch makes a new op, shape or scalar kind fail to compile
until each pass has decided what to do with it; a `default:` would silently swallow it. A
switch counts as one over ops when its condition is `<x>.op`, `<x>->op` or `<x>.atomic_op()`
(statements are always reached through a reference or pointer), over shapes or scalars when
it is `<x>.shape`, `<x>.scalar` (a type's fields) or a variable named `shape` or `scalar`.
"""
import pathlib
import re
import sys

SWITCH = re.compile(r"\bswitch\s*\(\s*([^()]*(?:\([^()]*\))?[^()]*)\)\s*\{")
CONDITIONS = {
    "ops": re.compile(r"[.>]\s*(op|atomic_op\(\))\s*$"),
    "shapes": re.compile(r"(^|[.>]\s*)shape\s*$"),
    "scalars": re.compile(r"(^|[.>]\s*)scalar\s*$"),
}
FOLDERS = ["kernels_dsl", "codegen", "compiler", "runtime", "ffi", "tools", "tests"]


def strip_comments_and_strings(text):
    text = re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), text)
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', text)


def defaults_in_op_switches(path):
    text = strip_comments_and_strings(path.read_text(errors="replace"))
    problems = []
    for m in SWITCH.finditer(text):
        kind = next((k for k, c in CONDITIONS.items() if c.search(m.group(1).strip())), None)
        if not kind:
            continue
        depth, i = 1, m.end()
        while i < len(text) and depth:
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            elif depth == 1 and text.startswith("default", i) and re.match(r"default\s*:", text[i:]):
                line = text.count("\n", 0, i) + 1
                problems.append(f"{path}:{line}: `default:` in a switch over {kind} ({m.group(1).strip()})")
            i += 1
    return problems


def main(root):
    root = pathlib.Path(root)
    problems, switches = [], 0
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".cpp", ".hpp", ".h") and path.is_file() and "lint/fixture" not in path.relative_to(root).as_posix():
                problems += defaults_in_op_switches(path)
    for p in problems:
        print(p)
    print(f"{len(problems)} switches over ops, shapes or scalars with a default label")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
