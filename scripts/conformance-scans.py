#!/usr/bin/env python3
"""Counts the times a start and a pricing session make the Swift runtime read every protocol
conformance record of the binary, and names the code that asked.

usage: scripts/conformance-scans.py [BINARY] [--requests N]   (default .build/release/payservice,
1,000 requests; needs valgrind)

The runtime answers "does type T conform to protocol P?" from a cache, and on a miss reads all
12,000 conformance descriptors of the static executable, which lie over about 800 KiB of read-only
data: every page of it becomes resident, and the scan costs about 340,000 instructions. Code compiled
by this package builds its generic metadata without asking (Package.swift, `leanCodegen`), but
precompiled code does ask: the standard library's prespecialized `[String: Int]` and
`[String: String]` (their first growth), and swift-crypto's digests. The session is the pricing one
of Benchmarks/bench.py, with its config; the answer is 0 scans when nothing on that path asks.
Exit status 1 when there is a scan.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
from bench import pricing_requests  # noqa: E402


def main():
    args = sys.argv[1:]
    count = 1000
    if "--requests" in args:
        i = args.index("--requests")
        count = int(args[i + 1])
        del args[i:i + 2]
    binary = args[0] if args else os.path.join(ROOT, ".build", "release", "payservice")
    work = tempfile.mkdtemp(prefix="payservice-scans-")
    # valgrind cannot read the DWARF 5 the release build carries: profile a copy without it.
    plain = os.path.join(work, "payservice")
    subprocess.run(["strip", "--strip-debug", "-o", plain, binary], check=True)
    requests = os.path.join(work, "requests.jsonl")
    with open(requests, "w") as f:
        f.write("\n".join(pricing_requests(count)) + "\n")
    out = os.path.join(work, "callgrind.out")
    with open(requests) as stdin:
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", plain, "--config",
                        os.path.join(ROOT, "Benchmarks", "bench-config.yaml"), "--database", ":memory:"],
                       stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    records = section_size(plain, "swift5_protocol_conformances") // 4
    visits = descriptor_visits(out)
    scans = round(visits / records) if records else 0
    print(f"{scans} conformance scans ({visits:,} descriptor visits, {records:,} records) in a start and "
          f"{count:,} pricing requests")
    if scans:
        annotate = subprocess.run(["callgrind_annotate", "--tree=caller", "--inclusive=yes", out],
                                  capture_output=True, text=True).stdout
        block = annotate.split("*  ???:__swift_instantiateConcreteTypeFromMangledName ")[0].rsplit("\n\n", 1)[-1]
        print("asked by (instructions, caller):")
        for line in block.splitlines():
            m = re.match(r"\s*([\d,]+) \([^)]*\)\s+<\s+\?\?\?:(\S+)", line)
            if m and int(m.group(1).replace(",", "")) > 100_000:
                print(f"  {m.group(1):>10}  {m.group(2)[:160]}")
    sys.exit(1 if scans else 0)


def section_size(binary, name):
    for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True).stdout.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 5 and parts[1] == name:
            return int(parts[5], 16)
    return 0


def descriptor_visits(callgrind_out):
    """Calls of the scan's per-descriptor function, from callgrind's call records."""
    names, visits, target = {}, 0, None
    with open(callgrind_out, errors="replace") as f:
        for line in f:
            m = re.match(r"^cfn=\((\d+)\)(?: (.*))?$", line)
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                target = names.get(m.group(1), "")
                continue
            m = re.match(r"^fn=\((\d+)\)(?: (.*))?$", line)
            if m and m.group(2):
                names[m.group(1)] = m.group(2)
            m = re.match(r"^calls=(\d+)", line)
            if m and target and "ConformanceSection const&) const::{lambda" in target:
                visits += int(m.group(1))
    return visits


if __name__ == "__main__":
    main()
