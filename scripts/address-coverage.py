#!/usr/bin/env python3
"""Check every country of the address data end to end: one payservice process, shipping to all
252 countries, answers the sheet's selectShippingContact and authorizePayment for each country's
example postal codes, for 5 codes outside its pattern, and (where addresses have no postal code)
for an address without one; then prints a Markdown table, one row per country, and the totals.

usage: scripts/address-coverage.py [--binary PATH] [--config PATH]

  --binary PATH   the payservice to run (default .build/debug/payservice: `swift build` first)
  --config PATH   the store configuration to start from (default Tests/EndToEndTests/Golden/
                  config.yaml); a copy is written with shipping.shipsTo set to every country of
                  the data and one shipping method, `world`, offered everywhere

The countries, postal patterns, examples and subdivisions are read from the generated table,
Sources/PayServiceCore/Contacts/AddressData.swift (see scripts/address-data.py). For each example
(the country's, with the area the country requires: the first subdivision whose postal prefix the
code has; and each subdivision's, with that subdivision), the sheet gets the redacted contact (no
street; the UK's outward code, Canada's and Japan's first three characters) and authorization the
complete one with a sandbox card. An example counts as accepted when both answer success. The 5
invalid codes are drawn as AddressDataTests draws them (the same SplitMix64 seed and mutations of
the examples, checked outside the pattern in every spacing): refused counts authorizations that
refuse them with a postalCode error. Disagreements (the sheet accepts what authorization refuses,
or the reverse) are listed under the table.

Exit status: 0 when every example is accepted, every invalid code refused, every country without
postal codes served and the sheet and authorization agree (redacted codes aside); 1 otherwise.

Python 3 standard library only.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "Sources", "PayServiceCore", "Contacts", "AddressData.swift")
DEFAULT_CONFIG = os.path.join(ROOT, "Tests", "EndToEndTests", "Golden", "config.yaml")
DEFAULT_BINARY = os.path.join(ROOT, ".build", "debug", "payservice")
NOW = "2026-11-21T12:00:00Z"
MASK = (1 << 64) - 1
ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
REDACTING = ("GB", "CA", "JP")


# The table

class Country:
    def __init__(self, fields):
        self.code, self.name, fmt, require = fields[1], fields[2], fields[3], fields[4]
        uses = set(re.findall(r"%(.)", fmt))
        self.uses_postal = "Z" in uses
        self.requires_postal = self.uses_postal and "Z" in require
        self.requires_area = "S" in uses and "S" in require
        self.pattern = re.compile(f"(?:{fields[6]})") if fields[6] else None
        self.examples = fields[7].split(",") if fields[7] else []
        self.subdivisions = []  # (key, prefix regex or None, examples)

    def all_examples(self):
        return self.examples + [e for _, _, examples in self.subdivisions for e in examples]


def read_table():
    countries = {}
    with open(DATA, encoding="utf-8") as f:
        for line in f.read().split("\n"):
            fields = line.split("\t")
            if fields[0] == "C" and len(fields) == 13:
                countries[fields[1]] = Country(fields)
            elif fields[0] == "S" and len(fields) == 9:
                prefix = re.compile(f"(?:{fields[4]})") if fields[4] else None
                examples = fields[5].split(",") if fields[5] else []
                countries[fields[1]].subdivisions.append((fields[2], prefix, examples))
    return countries


def matches_whole(code, country):
    return country.pattern is None or country.pattern.fullmatch(code) is not None


def area_for(code, country):
    """The area a complete contact gives with `code` (as AddressDataTests chooses it)."""
    if not country.requires_area:
        return None
    if not country.subdivisions:
        return "Central"
    if code is not None:
        for key, prefix, _ in country.subdivisions:
            if prefix is None or prefix.match(code.upper()):
                return key
    return country.subdivisions[0][0]


def redact(code, country):
    if country == "GB":
        return code.split(" ")[0] if " " in code else code[:-3]
    if country in ("CA", "JP"):
        return code[:3]
    return code


# Codes outside the pattern, drawn as AddressDataTests draws them

class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, bound):
        return self.next() % bound


def is_outside(candidate, country):
    cleaned = " ".join(part for part in candidate.split(" ") if part).upper()
    bare = "".join(c for c in cleaned if c not in " -")
    forms = {cleaned, bare}
    for index in range(1, len(bare)):
        for separator in (" ", "-"):
            forms.add(bare[:index] + separator + bare[index:])
    for example in country.all_examples():
        if sum(1 for c in example if c not in " -") != len(bare):
            continue
        shaped, rest = "", list(bare)
        for c in example:
            if c in " -":
                shaped += c
            elif rest:
                shaped += rest.pop(0)
        forms.add(shaped)
    return not any(matches_whole(form, country) for form in forms)


def could_be_redacted(code, country):
    if country.code not in REDACTING:
        return False
    return any(not is_outside(code + example[len(redact(example, country.code)):], country)
               for example in country.all_examples())


def draw(kind, examples, rng):
    if kind < 4 and examples:
        code = list(examples[rng.below(len(examples))])
        character = ALPHABET[rng.below(len(ALPHABET))]
        if kind == 0:
            code.append(character)
        elif kind == 1 and len(code) > 1:
            del code[rng.below(len(code))]
        elif kind == 2:
            # The position is drawn before the character (Python evaluates an assignment's
            # right-hand side first: hence the two statements).
            digits = [i for i, c in enumerate(code) if c in "0123456789"]
            if not digits:
                others = [i for i, c in enumerate(code) if c.isalpha()]
                if others:
                    position = others[rng.below(len(others))]
                    code[position] = ALPHABET[rng.below(10)]
            else:
                position = digits[rng.below(len(digits))]
                code[position] = LETTERS[rng.below(len(LETTERS))]
        else:
            code.insert(rng.below(len(code) + 1), character)
        return "".join(code)
    length = 1 + rng.below(9)
    return "".join(ALPHABET[rng.below(len(ALPHABET))] for _ in range(length))


def invalid_codes(country):
    seed = 0xADD2E55
    for byte in country.code.encode():
        seed = (seed * 31 + byte) & MASK
    rng = SplitMix64(seed)
    examples = country.all_examples()
    codes = []
    for kind in range(5):
        for attempt in range(1000):
            code = draw(kind if attempt < 20 else 4, examples, rng)
            if code and code not in codes and is_outside(code, country) and not could_be_redacted(code, country):
                codes.append(code)
                break
    return codes


# The run

def write_config(base, countries, path):
    with open(base, encoding="utf-8") as f:
        text = f.read()
    shipping = re.search(r"^shipping:\n(?:[ \t].*\n|\n)*", text, re.M)
    if not shipping:
        sys.exit(f"address-coverage.py: no shipping section in {base}")
    section = shipping.group(0)
    ships_to = re.search(r"^  shipsTo: .*$", section, re.M)
    methods = re.search(r"^  methods:\n", section, re.M)
    if not ships_to or not methods:
        sys.exit(f"address-coverage.py: {base} has no shipping.shipsTo line or no shipping.methods list")
    world = ("    - identifier: world\n      label: Worldwide\n      detail: Delivers in two weeks\n"
             "      transitDays: 14\n      amount: \"25.00\"\n")
    section = section[:methods.end()] + world + section[methods.end():]
    section = section.replace(ships_to.group(0), "  shipsTo: [" + ", ".join(sorted(countries)) + "]", 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text[:shipping.start()] + section + text[shipping.end():])


BILLING = {"givenName": "Ada", "familyName": "Lovelace", "addressLines": ["1 Infinite Loop"],
           "locality": "Cupertino", "administrativeArea": "CA", "postalCode": "95014", "countryCode": "US"}


def contact(country, postal, area, street=True):
    result = {"locality": "Town", "countryCode": country}
    if street:
        result["addressLines"] = ["1 High Street"]
    if postal is not None:
        result["postalCode"] = postal
    if area is not None:
        result["administrativeArea"] = area
    return result


def requests_for(country, postal, area, sheet_postal, next_id):
    sheet = {"jsonrpc": "2.0", "id": next_id, "method": "selectShippingContact",
             "params": {"items": [{"sku": "mug"}], "shippingContact": contact(country, sheet_postal, area, street=False)}}
    shipping = dict(contact(country, postal, area), givenName="Ada", familyName="Lovelace",
                    emailAddress="ada@example.com")
    authorize = {"jsonrpc": "2.0", "id": next_id + 1, "method": "authorizePayment", "params": {
        "items": [{"sku": "mug"}], "shippingMethod": "world",
        "payment": {"token": {"paymentData": "tok_visa",
                              "paymentMethod": {"displayName": "Visa 0492", "network": "visa", "type": "credit"},
                              "transactionIdentifier": "5394A8A3B4C9"},
                    "shippingContact": shipping, "billingContact": BILLING}}}
    return [sheet, authorize]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=DEFAULT_BINARY)
    parser.add_argument("--config", default=DEFAULT_CONFIG)
    args = parser.parse_args()
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"address-coverage.py: {args.binary} is not an executable: `swift build` first, or --binary")
    countries = read_table()

    # (country, kind, postal, area, sheet postal); kind: example, invalid, none
    cases = []
    for code, country in sorted(countries.items()):
        if country.uses_postal:
            for example in country.examples:
                cases.append((code, "example", example, area_for(example, country), redact(example, code)))
            for key, _, examples in country.subdivisions:
                for example in examples:
                    cases.append((code, "example", example, key, redact(example, code)))
            if country.pattern is not None:
                for invalid in invalid_codes(country):
                    cases.append((code, "invalid", invalid, area_for(invalid, country), redact(invalid, code)))
        else:
            cases.append((code, "none", None, area_for(None, country), None))

    requests = []
    for index, (code, _, postal, area, sheet_postal) in enumerate(cases):
        requests += requests_for(code, postal, area, sheet_postal, 2 * index + 1)
    with tempfile.TemporaryDirectory() as directory:
        config = os.path.join(directory, "config.yaml")
        write_config(args.config, countries, config)
        run = subprocess.run(
            [args.binary, "--config", config, "--database", ":memory:", "--now", NOW, "--quiet"],
            input="".join(json.dumps(r, ensure_ascii=False) + "\n" for r in requests),
            capture_output=True, text=True, encoding="utf-8")
    answers = {}
    for line in run.stdout.splitlines():
        if line.strip():
            answer = json.loads(line)
            answers[answer.get("id")] = answer
    if run.returncode != 0 or len(answers) != len(requests):
        sys.exit(f"address-coverage.py: payservice exited {run.returncode} with {len(answers)} answers to "
                 f"{len(requests)} requests\n{run.stderr[-2000:]}")

    def outcome(answer):
        """(success, fields of the errors)."""
        if "result" not in answer:
            return False, ["error: " + json.dumps(answer.get("error"))]
        result = answer["result"]
        return result["status"] == "success", [e.get("contactField") or e["code"] for e in result["errors"]]

    rows = {code: {"examples": [0, 0], "invalid": [0, 0], "none": None} for code in countries}
    notes = []
    for index, (code, kind, postal, area, sheet_postal) in enumerate(cases):
        sheet_ok, sheet_fields = outcome(answers[2 * index + 1])
        auth_ok, auth_fields = outcome(answers[2 * index + 2])
        row = rows[code]
        what = f"{code} {kind} {postal!r}" + (f" area {area}" if area else "")
        if kind == "example":
            row["examples"][1] += 1
            if sheet_ok and auth_ok:
                row["examples"][0] += 1
            else:
                notes.append(f"{what}: example refused (sheet {sheet_fields or 'success'}, "
                             f"authorization {auth_fields or 'success'})")
        elif kind == "invalid":
            row["invalid"][1] += 1
            if not auth_ok and "postalCode" in auth_fields:
                row["invalid"][0] += 1
            else:
                notes.append(f"{what}: invalid code accepted at authorization ({auth_fields or 'success'})")
        else:
            row["none"] = sheet_ok and auth_ok
            if not row["none"]:
                notes.append(f"{what}: no postal code refused (sheet {sheet_fields}, authorization {auth_fields})")
        redacted = sheet_postal != postal
        if sheet_ok and not auth_ok and not redacted:
            notes.append(f"{what}: the sheet accepted {sheet_postal!r}, authorization refused ({auth_fields})")
        if auth_ok and not sheet_ok:
            notes.append(f"{what}: authorization accepted, the sheet refused {sheet_postal!r} ({sheet_fields})")

    print("| code | name | examples accepted | invalid codes refused | no postal code |")
    print("| --- | --- | --- | --- | --- |")
    totals = {"examples": [0, 0], "invalid": [0, 0], "none": [0, 0], "countries": 0}
    for code, country in sorted(countries.items()):
        row = rows[code]
        totals["countries"] += 1
        examples = f"{row['examples'][0]} of {row['examples'][1]}"
        if country.uses_postal and country.pattern is None:
            invalid = "no pattern"
        elif not country.uses_postal:
            invalid = "—"
        else:
            invalid = f"{row['invalid'][0]} of {row['invalid'][1]}"
        none = "—" if row["none"] is None else ("served" if row["none"] else "refused")
        for key in ("examples", "invalid"):
            totals[key][0] += row[key][0]
            totals[key][1] += row[key][1]
        if row["none"] is not None:
            totals["none"][0] += 1 if row["none"] else 0
            totals["none"][1] += 1
        print(f"| {code} | {country.name.replace('|', '/')} | {examples} | {invalid} | {none} |")
    print(f"| **total** | {totals['countries']} countries | {totals['examples'][0]} of {totals['examples'][1]} "
          f"| {totals['invalid'][0]} of {totals['invalid'][1]} | {totals['none'][0]} of {totals['none'][1]} served |")
    print()
    if notes:
        print(f"{len(notes)} notes:")
        print()
        for note in notes:
            print(f"- {note}")
    else:
        print("No example refused, no invalid code accepted, and the sheet and authorization agree.")
    sys.exit(1 if notes else 0)


if __name__ == "__main__":
    main()
