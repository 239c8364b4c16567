"""Validates a report against reports/report.schema.json (JSON Schema 2020-12).

usage: validate_report_schema.py SCHEMA REPORT
exit 0: valid; 1: invalid (one line per error); 77: python3-jsonschema missing.
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
with open(sys.argv[2]) as f:
    report = json.load(f, parse_constant=reject_constant)
errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(report), key=lambda e: list(e.path))
for e in errors:
    print("/".join(str(p) for p in e.path) + ": " + e.message)
sys.exit(1 if errors else 0)
