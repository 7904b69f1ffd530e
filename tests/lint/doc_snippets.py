"""Compiles the docs' C++ blocks so that they cannot drift from the headers.

Every ```cpp block of docs/DSL.md is kernel code at namespace scope; in the other docs a block
is compiled when the line before it is a marker:

    <!-- compile: namespace -->          the block at namespace scope, as in DSL.md
    <!-- compile: body; DECLARATIONS --> the block inside a function, after DECLARATIONS
                                         (what the prose around it assumes: `int n = 4;`)

Each block is compiled alone with `CXX -std=c++17 -fsyntax-only -Wall -Wextra -Werror`
(less the unused-name warnings: snippets declare what they show),
including <kjit/kjit.hpp> (and <vector>), `using namespace kjit::dsl;` at namespace scope.
Usage: doc_snippets.py CXX PROJECT_ROOT
"""
import os
import re
import subprocess
import sys
import tempfile

INCLUDE_DIRS = ["kernels_dsl/include", "kernels_dsl/ir/include", "codegen/include", "compiler/include",
                "runtime/include", "ffi/include"]
MARKER = re.compile(r"<!--\s*compile:\s*(namespace|body)\s*(?:;(.*?))?-->")


def blocks(path, all_namespace):
    """(line, mode, context, code) of each block to compile in the markdown file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```cpp":
            marker = MARKER.search(lines[i - 1]) if i > 0 else None
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            code = "\n".join(lines[i + 1:j])
            if all_namespace:
                out.append((i + 1, "namespace", "", code))
            elif marker:
                out.append((i + 1, marker.group(1), (marker.group(2) or "").strip(), code))
            i = j
        i += 1
    return out


def source(mode, context, code, name, where):
    """The translation unit of one block; `where` is a #line directive naming the doc's line."""
    head = "#include <kjit/kjit.hpp>\n#include <vector>\n"
    if mode == "namespace":
        return (head + "namespace %s {\nusing namespace kjit::dsl;\nKJIT_MODULE(%s)\n%s\n%s\n}\n" %
                (name, name, where, code))
    return head + "void %s() {\n%s\n%s\n%s\n}\n" % (name, context, where, code)


def main():
    cxx, root = sys.argv[1], sys.argv[2]
    # The project's warnings (-Wno-unused-parameter), and none for names a snippet only shows.
    flags = ["-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
             "-Wno-unused-variable", "-Wno-unused-but-set-variable"] + ["-I" + os.path.join(root, d) for d in INCLUDE_DIRS]
    docs = sorted(f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
    failures, count = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for doc in docs:
            path = os.path.join(root, "docs", doc)
            for line, mode, context, code in blocks(path, doc == "DSL.md"):
                count += 1
                name = "doc_snippet_%d" % count
                src = os.path.join(tmp, name + ".cpp")
                where = '#line %d "docs/%s"' % (line + 1, doc)
                open(src, "w").write(source(mode, context, code, name, where))
                r = subprocess.run([cxx] + flags + [src], capture_output=True, text=True)
                if r.returncode != 0:
                    failures.append("docs/%s:%d: the block does not compile:\n%s" % (doc, line, r.stderr[:3000]))
    for f in failures:
        print(f)
    print("%d blocks compiled, %d failed" % (count, len(failures)))
    return 1 if failures or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
