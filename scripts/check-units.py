#!/usr/bin/env python3
"""Checks the systemd units in deploy/ against the payservice binary they run.

  scripts/check-units.py [--binary PATH] [--units DIR]

Each unit file is read as systemd reads it (sections, Key=Value lines, repeated keys kept). Then:

- every payservice command line (ExecStart, also inside `/bin/sh -c '…'`) names a subcommand that
  `payservice --help` lists and only options that `payservice SUBCOMMAND --help` lists. A
  subcommand or option still to come from the main branch (LATER) is skipped with a message
  instead of failing;
- the directories of --database and --to are writable under ProtectSystem=strict (ReadWritePaths);
- every service runs as User=payservice, every Accept=yes socket has its NAME@.service template and
  every timer its service;
- `systemd-analyze verify` (when installed) reports nothing, with /usr/local/bin/payservice
  replaced by the binary checked.

Prints `check-units: ok (N units)`, or each problem and exits 1. Python 3 standard library only.
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

INSTALLED_PATH = "/usr/local/bin/payservice"

# What the lead's branch adds (issue 33): skipped, not failed, when this build lacks it.
LATER_SUBCOMMANDS = {"stock", "erase", "retention"}
LATER_OPTIONS = {("serve", "--log-timestamps")}


def read_unit(path):
    """[(section, key, value)] of a unit file: comments and blank lines dropped, continuations joined."""
    entries = []
    section = None
    pending = ""
    with open(path, encoding="utf-8") as handle:
        for raw in handle:
            line = raw.rstrip("\n")
            if pending:
                line = pending + line.lstrip()
                pending = ""
            stripped = line.strip()
            if not stripped or stripped[0] in "#;":
                continue
            if stripped.endswith("\\"):
                pending = stripped[:-1] + " "
                continue
            if stripped.startswith("[") and stripped.endswith("]"):
                section = stripped[1:-1]
                continue
            if "=" not in stripped or section is None:
                raise ValueError(f"{path}: cannot read line {raw.rstrip()!r}")
            key, value = stripped.split("=", 1)
            entries.append((section, key.strip(), value.strip()))
    return entries


def values(entries, section, key):
    return [value for s, k, value in entries if s == section and k == key]


def unescape(value):
    """A command line as systemd passes it: %% is %, $$ is $."""
    return value.replace("%%", "%").replace("$$", "$")


def payservice_words(command):
    """The words of the payservice command in an Exec line, or None when it runs something else."""
    words = shlex.split(unescape(command).lstrip("-@:+!"))
    if len(words) >= 3 and words[0] in ("/bin/sh", "/usr/bin/sh") and words[1] == "-c":
        words = shlex.split(words[2])
        if words and words[0] == "exec":
            words = words[1:]
    if not words or os.path.basename(words[0]) != "payservice":
        return None
    return words


def help_text(binary, *arguments):
    result = subprocess.run([binary, *arguments, "--help"], capture_output=True, text=True, timeout=60)
    return result.stdout + result.stderr


def subcommands(binary):
    text = help_text(binary)
    names = set()
    in_list = False
    for line in text.splitlines():
        if line.startswith("SUBCOMMANDS:"):
            in_list = True
            continue
        if in_list:
            match = re.match(r"^  (\S+)", line)
            if match:
                names.add(match.group(1))
            elif line.strip() and not line.startswith(" "):
                in_list = False
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--binary", default=os.environ.get("PAYSERVICE_BINARY") or os.path.join(root, ".build/release/payservice"))
    parser.add_argument("--units", default=os.path.join(root, "deploy"))
    options = parser.parse_args()
    binary = os.path.abspath(options.binary)
    if not os.access(binary, os.X_OK):
        print(f"check-units: no payservice binary at {binary} (build it, or give --binary)", file=sys.stderr)
        return 1

    problems = []
    files = sorted(name for name in os.listdir(options.units) if name.endswith((".service", ".socket", ".timer")))
    known = subcommands(binary)
    if "serve" not in known:
        problems.append(f"`{binary} --help` lists no subcommands")
    option_help = {}

    for name in files:
        path = os.path.join(options.units, name)
        try:
            entries = read_unit(path)
        except ValueError as error:
            problems.append(str(error))
            continue
        stem, kind = name.rsplit(".", 1)
        if kind == "socket":
            if values(entries, "Socket", "Accept") == ["yes"] and f"{stem}@.service" not in files:
                problems.append(f"{name}: Accept=yes but there is no {stem}@.service")
            if not values(entries, "Socket", "ListenStream"):
                problems.append(f"{name}: no ListenStream")
            continue
        if kind == "timer":
            if f"{stem}.service" not in files:
                problems.append(f"{name}: there is no {stem}.service to start")
            continue
        if values(entries, "Service", "User") != ["payservice"]:
            problems.append(f"{name}: must run as User=payservice (the owner of the store's files)")
        exec_starts = values(entries, "Service", "ExecStart")
        if len(exec_starts) != 1:
            problems.append(f"{name}: needs exactly one ExecStart, has {len(exec_starts)}")
        for reload in values(entries, "Service", "ExecReload"):
            if reload != "/bin/kill -HUP $MAINPID":
                problems.append(f"{name}: ExecReload must send SIGHUP to the main process, got {reload!r}")
        writable = " ".join(values(entries, "Service", "ReadWritePaths")).split()
        for command in exec_starts:
            words = payservice_words(command)
            if words is None:
                problems.append(f"{name}: ExecStart runs no payservice: {command}")
                continue
            if words[0] != INSTALLED_PATH:
                problems.append(f"{name}: runs {words[0]}, not {INSTALLED_PATH}")
            arguments = words[1:]
            subcommand = arguments[0] if arguments and not arguments[0].startswith("-") else "serve"
            if arguments and arguments[0] == subcommand:
                arguments = arguments[1:]
            if subcommand not in known:
                if subcommand in LATER_SUBCOMMANDS:
                    print(f"check-units: skipped {name}: payservice {subcommand} (not in this build)")
                else:
                    problems.append(f"{name}: payservice has no subcommand {subcommand!r} (it has {', '.join(sorted(known))})")
                continue
            if subcommand not in option_help:
                option_help[subcommand] = set(re.findall(r"--[a-z][a-z-]*", help_text(binary, subcommand)))
            values_by_option = {}
            for index, word in enumerate(arguments):
                if not word.startswith("--"):
                    continue
                option, _, inline = word.partition("=")
                following = arguments[index + 1] if index + 1 < len(arguments) else ""
                values_by_option[option] = inline or ("" if following.startswith("--") else following)
                if option in option_help[subcommand]:
                    continue
                if (subcommand, option) in LATER_OPTIONS:
                    print(f"check-units: skipped {name}: payservice {subcommand} {option} (not in this build)")
                else:
                    problems.append(f"{name}: payservice {subcommand} has no option {option}")
            for option in ("--database", "--to"):
                target = values_by_option.get(option)
                if not target or target.startswith(("postgres://", "postgresql://")):
                    continue
                directory = os.path.dirname(target)
                if not any(directory == path or directory.startswith(path.rstrip("/") + "/") for path in writable):
                    problems.append(f"{name}: {option} {target} is in {directory}, which is not in ReadWritePaths")

    if shutil.which("systemd-analyze"):
        with tempfile.TemporaryDirectory() as scratch:
            for name in files:
                with open(os.path.join(options.units, name), encoding="utf-8") as source:
                    text = source.read().replace(INSTALLED_PATH, binary)
                with open(os.path.join(scratch, name), "w", encoding="utf-8") as target:
                    target.write(text)
            result = subprocess.run(
                ["systemd-analyze", "verify", "--man=no", *[os.path.join(scratch, name) for name in files]],
                capture_output=True, text=True, timeout=120)
            report = (result.stdout + result.stderr).strip()
            if result.returncode != 0 or report:
                problems.append("systemd-analyze verify:\n" + report.replace(scratch + "/", ""))
    else:
        print("check-units: skipped systemd-analyze verify (not installed)")

    if problems:
        for problem in problems:
            print(f"check-units: {problem}", file=sys.stderr)
        return 1
    print(f"check-units: ok ({len(files)} units)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
