"""Validates reports against reports/report.schema.json (JSON Schema 2020-12).

usage: validate_report_schema.py SCHEMA REPORT...
Prints one line per report, "valid: PATH" or "invalid: PATH: first error".
exit 0: all valid; 1: some invalid; 77: python3-jsonschema missing.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("the Python module jsonschema is missing (Debian: python3-jsonschema)")
    sys.exit(77)


def reject_constant(name):
    # json.load accepts NaN and Infinity, which are not JSON.
    raise ValueError(f"{name} is not JSON")


with open(sys.argv[1]) as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
all_valid = True
for path in sys.argv[2:]:
    try:
        with open(path) as f:
            report = json.load(f, parse_constant=reject_constant)
    except ValueError as e:
        print(f"invalid: {path}: {e}")
        all_valid = False
        continue
    errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
    if errors:
        where = "/".join(str(p) for p in errors[0].path)
        print(f"invalid: {path}: {where}: {errors[0].message}")
        all_valid = False
    else:
        print(f"valid: {path}")
sys.exit(0 if all_valid else 1)
