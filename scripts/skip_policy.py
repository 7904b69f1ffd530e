#!/usr/bin/env python3
"""scripts/skip_policy.py — after a ctest run, fails it when a test that this machine should
run was skipped, naming the test and why it skipped; prints the run's summary either way.

A test run that did not run a suite is not green: only `gpu`-labelled tests may skip, and only
on a machine without an NVIDIA GPU, and `mount_namespace`-labelled ones where no mount namespace
can be made. Anything else that skips (the JAX tests when a venv could
not be made, the CUDA declaration checks without headers, ...) fails the run unless
KJIT_ALLOW_SKIP names it: a comma-separated list of test names, labels or shell globs over
names ("jax_newest", "ffi_abi_layout_*"), or "all". The summary lists what it allowed.

Usage: skip_policy.py JUNIT_XML TESTS_JSON   (ctest --output-junit, ctest --show-only=json-v1)
"""

from __future__ import annotations

import fnmatch
import json
import os
import sys
import xml.etree.ElementTree as ET


def has_gpu() -> bool:
    """An NVIDIA GPU is visible to this machine (its driver's control node exists);
    KJIT_SKIP_POLICY_GPU=0/1 says so instead (the policy's own tests)."""
    forced = os.environ.get("KJIT_SKIP_POLICY_GPU")
    if forced in ("0", "1"):
        return forced == "1"
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")


def has_mount_namespaces() -> bool:
    """This machine lets the suite make a private mount namespace (as root, or in a user
    namespace): what tests labelled `mount_namespace` need."""
    import subprocess
    for cmd in (["unshare", "-m", "true"], ["unshare", "-rm", "true"]):
        try:
            if subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20).returncode == 0:
                return True
        except (OSError, subprocess.TimeoutExpired):
            pass
    return False


def labels_by_test(tests_json: str) -> dict[str, list[str]]:
    with open(tests_json, encoding="utf-8") as f:
        doc = json.load(f)
    out: dict[str, list[str]] = {}
    for t in doc.get("tests", []):
        labels: list[str] = []
        for p in t.get("properties", []):
            if p.get("name") == "LABELS":
                labels = list(p.get("value") or [])
        out[t["name"]] = labels
    return out


def skipped_tests(junit_xml: str) -> tuple[int, dict[str, str]]:
    """(tests run, {skipped test: the first line it printed that says why})."""
    root = ET.parse(junit_xml).getroot()
    cases = root.iter("testcase")
    total, skipped = 0, {}
    for c in cases:
        total += 1
        if c.get("status") in ("notrun", "disabled") or c.find("skipped") is not None:
            out = c.findtext("system-out") or ""
            why = next((line.strip() for line in out.splitlines() if "SKIP" in line or "skip" in line), "")
            if not why:
                s = c.find("skipped")
                why = (s.get("message") if s is not None else "") or "(it printed no reason)"
            skipped[c.get("name", "?")] = why
    return total, skipped


def allowed(name: str, labels: list[str], patterns: list[str]) -> bool:
    return any(p == "all" or fnmatch.fnmatchcase(name, p) or p in labels for p in patterns)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    total, skipped = skipped_tests(argv[1])
    labels = labels_by_test(argv[2])
    patterns = [p.strip() for p in os.environ.get("KJIT_ALLOW_SKIP", "").split(",") if p.strip()]
    gpu = has_gpu()
    namespaces = None  # asked only when a mount_namespace test skipped
    no_gpu, no_namespace, by_request, refused = [], [], [], []
    for name, why in sorted(skipped.items()):
        lab = labels.get(name, [])
        if "gpu" in lab and not gpu:
            no_gpu.append(name)
        elif "mount_namespace" in lab and not (namespaces if namespaces is not None else has_mount_namespaces()):
            namespaces = False
            no_namespace.append((name, why))
        elif allowed(name, lab, patterns):
            by_request.append((name, why))
        else:
            refused.append((name, why))
    ran = total - len(skipped)
    print(f"[kjit] tests: {ran} ran, {len(skipped)} skipped of {total}")
    if no_gpu:
        print(f"[kjit]   {len(no_gpu)} skipped as GPU tests on a machine without a GPU: {', '.join(no_gpu)}")
    for name, why in no_namespace:
        print(f"[kjit]   skipped, no mount namespace on this machine: {name}: {why}")
    for name, why in by_request:
        print(f"[kjit]   skipped, allowed by KJIT_ALLOW_SKIP: {name}: {why}")
    if refused:
        print(f"[kjit] FAILED: {len(refused)} tests this machine should run did not run:")
        for name, why in refused:
            print(f"[kjit]   {name}: {why}")
        print("[kjit] fix what they name, or let them skip explicitly with KJIT_ALLOW_SKIP=<names, labels or globs>")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
