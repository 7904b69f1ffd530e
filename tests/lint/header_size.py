#!/usr/bin/env python3
"""Preprocessed size of the public headers: `CXX -std=c++17 -E` of one #include, lines counted
as `wc -l` counts them (line markers included). Fails above the limits and when a header
reaches what it must not: <kjit/dsl.hpp> no IR header (kjit/ir/*.hpp), no <string> or
containers, no nlohmann_json, no XLA ABI mirror; <kjit/kjit.hpp> no nlohmann_json, no XLA ABI,
no <string>, <memory>, <functional> or the other heavy headers its API does without.

Issue 14's goals are the limits: 15,000 lines for <kjit/dsl.hpp> and 30,000 for <kjit/kjit.hpp>
(docs/BENCHMARKS.md "Header size").

usage: header_size.py CXX PROJECT_ROOT
"""
import re
import subprocess
import sys

cxx, root = sys.argv[1], sys.argv[2]
DSL_LIMIT = 15000   # issue 14's goal
KJIT_LIMIT = 30000  # issue 14's goal
include_dirs = ["kernels_dsl", "kernels_dsl/ir", "codegen", "compiler", "runtime", "ffi"]


def preprocess(header):
    cmd = [cxx, "-std=c++17", "-E", "-x", "c++", "-"] + [f"-I{root}/{d}/include" for d in include_dirs]
    out = subprocess.run(cmd, input=f"#include <{header}>\n", capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{header}: the preprocessor failed:\n{out.stderr}")
    return out.stdout


def files_of(text):
    return set(re.findall(r'^# \d+ "([^"]+)"', text, re.M))


failed = False


def check(header, limit, forbidden):
    global failed
    text = preprocess(header)
    lines = text.count("\n")
    print(f"<{header}>: {lines} preprocessed lines (limit {limit}: issue 14's goal)")
    if lines > limit:
        print(f"FAIL: <{header}> preprocesses to {lines} lines, above the limit of {limit}")
        failed = True
    for f in sorted(files_of(text)):
        for pattern, why in forbidden:
            if re.search(pattern, f):
                print(f"FAIL: <{header}> reaches {f} ({why})")
                failed = True


no_json = (r"nlohmann", "nlohmann_json stays out of installed headers")
no_xla = (r"kjit/ffi/xla_abi\.hpp$", "the XLA ABI mirror is for <kjit/ffi.hpp> only")
def heavy(names):
    return (r"/(" + "|".join(names) + r")$", "a heavy standard header")


check("kjit/dsl.hpp", DSL_LIMIT, [
    no_json, no_xla,
    (r"kjit/ir/[^/]+\.hpp$", "the IR stays internal; kernel code needs kjit/ir_vocab.hpp only"),
    (r"kjit/(kernel|error)\.hpp$", "KernelDef and kjit::Error are for programs, not kernel headers"),
    heavy(["string", "vector", "memory", "functional", "map", "mutex", "optional", "array", "cmath",
           "stdexcept"]),
])
check("kjit/kjit.hpp", KJIT_LIMIT, [
    no_json, no_xla,
    (r"kjit/ir/[^/]+\.hpp$", "the IR stays internal"),
    heavy(["string", "memory", "functional", "map", "unordered_map", "mutex", "array", "cmath",
           "stdexcept"]),
])
sys.exit(1 if failed else 0)
