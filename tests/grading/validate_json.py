#!/usr/bin/env python3
"""Validate JSON files against a JSON Schema (draft 2020-12) with the jsonschema package
(Debian: python3-jsonschema).

    validate_json.py SCHEMA FILE...

Exit codes: 0 every file is valid, 1 some file is not (the errors are printed), 77 jsonschema is
not installed (the caller skips)."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(77)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    bad = 0
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
        for e in errors:
            where = "/".join(str(p) for p in e.path) or "(top)"
            print(f"{path}: {where}: {e.message}", file=sys.stderr)
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
