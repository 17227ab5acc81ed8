#!/usr/bin/env python3
"""Regenerate Sources/payservice/link-order.txt, the order the linker lays out the functions a
start and a session run (profile-guided layout; see README, Building).

usage: scripts/link-order.py   (after `swift build -c release`; needs valgrind. It repeats the
release link once with a map, and profiles that binary.)

A release payservice is one static executable of about 190 MB, and the kernel maps the pages of
the text a process touches 64 KiB at a time: functions used at start and per request, scattered
over 35 MB of text, made a one-request start resident in 17 MB. Runs under callgrind list the
functions executed, in this priority: a one-request start, 10,000 pricing requests, the example
checkout (orders, a store file).

lld moves input sections, not functions. This project's modules are built with a section per
function (Package.swift, `leanCodegen`), but prebuilt and dependency code comes in larger
sections: the standard library's main text is one 1.6 MB section, Foundation has one per source
file. Naming one function of such a section moves all of it, so the script repeats the release
link once with a map, and lists first the functions whose sections are small (up to 4 KiB: a
function, or a file with little in it), in priority order, so that they lie together; then one
function for each larger section that runs, in the order they first run. The same goes for data
(the kernel maps it 64 KiB at a time too): valgrind's lackey lists the sections of .data,
.rodata, .data.rel.ro and .bss that a start and some pricing read or write, and one symbol of
each is listed after the functions. A name that no longer exists is skipped by the linker, so a
stale list costs only locality, never correctness.
"""
import bisect
import json
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
            name = m.group(1) if m else ""
            if name and "'" not in name and not name.startswith("0x") and name not in seen:
                seen.add(name)
                names.append(name)
    return names


SMALL_SECTION = 4 * 1024
TEXT = ".text"
DATA = (".data.rel.ro", ".data", ".rodata", ".bss")


def relink(work):
    """Repeats the release link of payservice with a map. Returns the binary and, per output
    section of TEXT and DATA, its input sections as (start, size, symbols)."""
    with open(os.path.join(ROOT, ".build", "release.yaml")) as f:
        manifest = f.read()
    at = manifest.index("--symbol-ordering-file")
    start = manifest.rindex("args: [", 0, at) + len("args: ")
    args, _ = json.JSONDecoder().raw_decode(manifest[start:])
    binary = os.path.join(work, "relinked")
    args[args.index("-o") + 1] = binary
    link_map = os.path.join(work, "link.map")
    subprocess.run(args + ["-Xlinker", f"-Map={link_map}", "-Xlinker", "--no-demangle"], check=True,
                   stdout=subprocess.DEVNULL)
    sections, output = {}, None
    with open(link_map) as f:
        next(f)
        for line in f:
            # VMA LMA Size Align, then the output section, an input section or a symbol, each
            # indented one step further.
            fields = line[:48].split()
            if len(fields) < 4:
                continue
            rest = line[48:].rstrip("\n")
            depth = len(rest) - len(rest.lstrip(" "))
            if depth <= 1:
                output = rest.strip()
            elif output != TEXT and output not in DATA:
                continue
            elif depth <= 9:
                sections.setdefault(output, []).append((int(fields[0], 16), int(fields[2], 16), []))
            elif output in sections:
                sections[output][-1][2].append(rest.strip())
    return binary, sections


def data_touched(command, stdin, work, index, sections):
    """The input sections of DATA that `command` reads or writes (valgrind lackey), first touch first."""
    trace = os.path.join(work, f"lackey.{index}")
    with open(stdin, "rb") as f:
        subprocess.run(["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={trace}"] + command,
                       stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    spans = sorted((start, start + size, name, i) for name in DATA for i, (start, size, _) in
                   enumerate(sections.get(name, [])) if size)
    starts = [span[0] for span in spans]
    low, high = spans[0][0], spans[-1][1]
    touched, seen = [], set()
    with open(trace) as f:
        for line in f:
            if line[:2] not in (" L", " S", " M"):
                continue
            address = int(line[3:line.index(",")], 16)
            if not low <= address < high:
                continue
            k = bisect.bisect_right(starts, address) - 1
            if k >= 0 and address < spans[k][1] and k not in seen:
                seen.add(k)
                touched.append((spans[k][2], spans[k][3]))
    os.remove(trace)
    return touched


def main():
    work = tempfile.mkdtemp(prefix="payservice-link-order-")
    binary, sections = relink(work)
    # valgrind cannot read the binary's compressed debug info: profile a copy without it.
    plain = os.path.join(work, "payservice")
    subprocess.run(["strip", "--strip-debug", "-o", plain, binary], check=True)
    bench = os.path.join(ROOT, "Benchmarks", "bench-config.yaml")
    one = os.path.join(work, "one.jsonl")
    with open(one, "w") as f:
        f.write('{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{"items":[{"sku":"clock"}]}}\n')
    sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
    import bench as benchmark  # the benchmark's request mix
    pricing, some_pricing = os.path.join(work, "pricing.jsonl"), os.path.join(work, "some-pricing.jsonl")
    with open(pricing, "w") as f:
        f.write(benchmark.pricing_requests(10_000))
    with open(some_pricing, "w") as f:
        f.write(benchmark.pricing_requests(300))
    start = [plain, "--config", bench, "--database", ":memory:"]
    runs = [
        (start, one),
        (start, pricing),
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
    section_of = {symbol: (i, size) for i, (_, size, symbols) in enumerate(sections[TEXT]) for symbol in symbols}
    small, large, placed = [], [], set()
    for name in order:
        if name not in section_of:
            continue
        key, size = section_of[name]
        if size <= SMALL_SECTION:
            small.append(name)
        elif key not in placed:
            placed.add(key)
            large.append(name)
    # Data: each input section the start and some pricing touch, named by one of its symbols (a
    # section without any cannot be named and stays where it is).
    data_small, data_large, data_seen = [], [], set()
    for index, (command, stdin) in enumerate([(start, one), (start, some_pricing)]):
        for output, i in data_touched(command, stdin, work, index, sections):
            _, size, symbols = sections[output][i]
            if (output, i) in data_seen or not symbols:
                continue
            data_seen.add((output, i))
            (data_small if size <= SMALL_SECTION else data_large).append(symbols[0])
    with open(OUT, "w") as f:
        f.write("\n".join(small + large + data_small + data_large) + "\n")
    print(f"{len(small)} functions with sections of their own, {len(large)} larger text sections and "
          f"{len(data_small) + len(data_large)} data sections written to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
