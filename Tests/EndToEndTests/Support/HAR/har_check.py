"""Checks HAR files against HAR 1.2 (har-1.2.schema.json beside this file, with the jsonschema
package from PyPI) and prints, for each, its entries as the test compares them with the run's
record: one JSON array of [method, url, status, bodySize, time] per file.

    python3 har_check.py FILE...

Exit 1, with every violation on stderr, when a file does not conform; the entry's time must also
equal the sum of its timings that are not -1, as the specification says."""
import json
import os
import sys

import jsonschema

schema_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "har-1.2.schema.json")
with open(schema_path, encoding="utf-8") as f:
    schema = json.load(f)
validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())

problems = []
summaries = []
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        har = json.load(f)
    for error in validator.iter_errors(har):
        problems.append(f"{path}: {'/'.join(map(str, error.absolute_path))}: {error.message}")
    entries = har.get("log", {}).get("entries", [])
    for index, entry in enumerate(entries):
        timings = entry.get("timings", {})
        total = sum(value for key, value in timings.items() if key != "comment" and value != -1)
        if abs(total - entry.get("time", -1)) > 0.01:
            problems.append(f"{path}: entries/{index}: time {entry.get('time')} is not the sum of its timings, {total}")
    summaries.append([[e["request"]["method"], e["request"]["url"], e["response"]["status"], e["response"]["bodySize"], e["time"]]
                      for e in entries])

for problem in problems:
    print(problem, file=sys.stderr)
print(json.dumps(summaries))
sys.exit(1 if problems else 0)
