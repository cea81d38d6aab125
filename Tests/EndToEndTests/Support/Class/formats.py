#!/usr/bin/env python3
"""Reads back one export of `lab class export` by its format's published rules, and prints
what a test compares as JSON. Exits 1 with one line on stderr at the first rule broken.

    formats.py csv|junit|exercism|gradescope PATH JUNIT_XSD
"""
import csv, json, os, subprocess, sys
import xml.etree.ElementTree as ElementTree

def fail(line):
    print(line, file=sys.stderr)
    sys.exit(1)

def read_csv(path):
    with open(path, newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file, strict=True))
    if len({len(row) for row in rows}) != 1:
        fail("rows of different lengths")
    return rows

def read_junit(path, schema):
    # xmllint validates against the schema; ElementTree counts what a CI server would show.
    checked = subprocess.run(["xmllint", "--noout", "--schema", schema, path], capture_output=True, text=True)
    if checked.returncode != 0:
        fail("xmllint: " + checked.stderr.strip().splitlines()[0])
    root = ElementTree.parse(path).getroot()
    suites = root.findall("testsuite")
    cases = [case for suite in suites for case in suite.findall("testcase")]
    for suite in suites:
        counted = suite.findall("testcase")
        for attribute, child in [("failures", "failure"), ("errors", "error"), ("skipped", "skipped")]:
            if int(suite.get(attribute)) != sum(1 for case in counted if case.find(child) is not None):
                fail(f"testsuite {suite.get('name')}: {attribute} does not count its {child} elements")
        if int(suite.get("tests")) != len(counted):
            fail(f"testsuite {suite.get('name')}: tests does not count its cases")
    return {"suites": len(suites), "cases": len(cases),
            "errors": sum(1 for case in cases if case.find("error") is not None),
            "passes": sum(1 for case in cases if len(case) == 0)}

# Exercism's test runner interface, results.json version 3 (exercism/docs,
# building/tooling/test-runners/interface.md).
EXERCISM_TOP = {"version", "status", "message", "tests"}
EXERCISM_TEST = {"name", "test_code", "status", "message", "output", "task_id"}

def check_exercism(results):
    if not set(results) <= EXERCISM_TOP:
        fail(f"exercism: unpublished fields {set(results) - EXERCISM_TOP}")
    if results.get("version") != 3 or results.get("status") not in ("pass", "fail", "error"):
        fail("exercism: version or status")
    if (results["status"] == "error") != ("message" in results):
        fail("exercism: a top-level message belongs with status error only")
    if results["status"] != "error" and "tests" not in results:
        fail("exercism: tests are required with pass and fail")
    tests = results.get("tests", [])
    for test in tests:
        if not set(test) <= EXERCISM_TEST or not {"name", "status", "test_code"} <= set(test):
            fail(f"exercism: test fields {sorted(test)}")
        if test["status"] not in ("pass", "fail", "error"):
            fail(f"exercism: test status {test['status']}")
        if (test["status"] in ("fail", "error")) != ("message" in test):
            fail("exercism: a test's message belongs with fail and error")
        if "task_id" in test and not isinstance(test["task_id"], int):
            fail("exercism: task_id is a number")
    if results["status"] == "pass" and any(test["status"] != "pass" for test in tests):
        fail("exercism: status pass with a test that did not pass")

# Gradescope's autograder specification (gradescope-autograders.readthedocs.io, specs).
GRADESCOPE_TOP = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
                  "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
GRADESCOPE_TEST = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format",
                   "tags", "visibility", "extra_data"}

def check_gradescope(results):
    if not set(results) <= GRADESCOPE_TOP:
        fail(f"gradescope: unpublished fields {set(results) - GRADESCOPE_TOP}")
    tests = results.get("tests", [])
    if "score" not in results and any("score" not in test for test in tests):
        fail("gradescope: a score at the top or on every test")
    for test in tests:
        if not set(test) <= GRADESCOPE_TEST:
            fail(f"gradescope: test fields {sorted(test)}")
        if test.get("status") not in (None, "passed", "failed"):
            fail(f"gradescope: test status {test.get('status')}")
        if test.get("status") == "passed" and test.get("score") != test.get("max_score"):
            fail("gradescope: a passed test without its points")
    if abs(results["score"] - sum(test["score"] for test in tests)) > 1e-9:
        fail("gradescope: score is not the tests' sum")

def read_folders(path, check):
    found = {}
    for entry in sorted(os.listdir(path)):
        folder = os.path.join(path, entry)
        if not os.path.isdir(folder) or os.listdir(folder) != ["results.json"]:
            fail(f"{entry}: a folder per student holding results.json only")
        with open(os.path.join(folder, "results.json"), encoding="utf-8") as file:
            results = json.load(file)
        check(results)
        found[entry] = results.get("status", "")
    return found

format_name, path, schema = sys.argv[1:4]
if format_name == "csv":
    print(json.dumps(read_csv(path)))
elif format_name == "junit":
    print(json.dumps(read_junit(path, schema)))
elif format_name == "exercism":
    print(json.dumps(read_folders(path, check_exercism)))
elif format_name == "gradescope":
    print(json.dumps(read_folders(path, check_gradescope)))
else:
    fail(f"no format {format_name}")
