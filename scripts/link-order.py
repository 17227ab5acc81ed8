#!/usr/bin/env python3
"""Regenerate Sources/payservice/link-order.txt, the order the linker lays out the functions a
start and a session run (profile-guided layout; see README, Performance).

usage: scripts/link-order.py [--binary PATH]   (default .build/release/payservice; needs valgrind)

A release payservice is one static executable of about 190 MB, and the kernel maps the pages of
the text a process touches 64 KiB at a time: functions used at start and per request, scattered
over 35 MB of text, made a one-request start resident in 17 MB. Runs under callgrind list the
functions executed, in this priority: a one-request start, 10,000 pricing requests, the example
checkout (orders, a store file). lld places them first, in that order. A name that no longer
exists is skipped by the linker, so a stale list costs only locality, never correctness.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Sources", "payservice", "link-order.txt")


def functions(callgrind_out):
    names, seen = [], set()
    with open(callgrind_out, errors="replace") as f:
        for line in f:
            m = re.match(r"^c?fn=\(\d+\) ?(.*)$", line)
            if m and m.group(1) and "'" not in m.group(1) and m.group(1) not in seen:
                seen.add(m.group(1))
                names.append(m.group(1))
    return names


def main():
    args = sys.argv[1:]
    binary = os.path.abspath(args[args.index("--binary") + 1]) if "--binary" in args else os.path.join(ROOT, ".build", "release", "payservice")
    work = tempfile.mkdtemp(prefix="payservice-link-order-")
    # callgrind cannot read the binary's compressed debug info: profile a copy without it.
    plain = os.path.join(work, "payservice")
    subprocess.run(["strip", "--strip-debug", "-o", plain, binary], check=True)
    bench = os.path.join(ROOT, "Benchmarks", "bench-config.yaml")
    one = os.path.join(work, "one.jsonl")
    with open(one, "w") as f:
        f.write('{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{"items":[{"sku":"clock"}]}}\n')
    pricing = os.path.join(work, "pricing.jsonl")
    sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
    import bench as benchmark  # the benchmark's request mix
    with open(pricing, "w") as f:
        f.write(benchmark.pricing_requests(10_000))
    runs = [
        ([plain, "--config", bench, "--database", ":memory:"], one),
        ([plain, "--config", bench, "--database", ":memory:"], pricing),
        ([plain, "--config", os.path.join(ROOT, "config.yaml"), "--database", os.path.join(work, "store.sqlite")],
         os.path.join(ROOT, "examples", "checkout.jsonl")),
    ]
    order, seen = [], set()
    for index, (command, stdin) in enumerate(runs):
        out = os.path.join(work, f"callgrind.{index}")
        with open(stdin, "rb") as f:
            subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}"] + command,
                           stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        for name in functions(out):
            if name not in seen:
                seen.add(name)
                order.append(name)
    with open(OUT, "w") as f:
        f.write("\n".join(order) + "\n")
    print(f"{len(order)} functions written to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
