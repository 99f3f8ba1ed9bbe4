"""Runs analyzer.py directly (no sandbox, no server) on the corpus the core's CodeAnalysisTest
also uses, plus what only a direct call can see: the analyser never raises, never executes what it
analyses, and meets its own time budget. Usage: check_analyzer.py ANALYZER CORPUS; prints each
failure and exits 1 if there was one. Run by AnalyzerScriptTest."""

import importlib.util
import json
import sys
import time

spec = importlib.util.spec_from_file_location("analyzer", sys.argv[1])
analyzer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(analyzer)
corpus = json.load(open(sys.argv[2], encoding="utf-8"))
RANK = analyzer.RANK
failures = []


def fail(name, why, report):
    failures.append("%s: %s; got %s" % (name, why, json.dumps(report)[:2000]))


for case in corpus["risky"]:
    r = analyzer.analyze(case["code"])
    if not any(f["rule"] == case["rule"] and RANK[f["severity"]] >= RANK[case["min_severity"]]
               for f in r["risk_findings"]):
        fail(case["name"], "no %s finding at %s or above" % (case["rule"], case["min_severity"]), r)
    for f in r["risk_findings"]:
        if f["line"] is not None and (f["column"] is None or f["snippet"] is None):
            fail(case["name"], "a finding with a line but no column or snippet", r)

for case in corpus["clean"]:
    r = analyzer.analyze(case["code"])
    if not r["valid"]:
        fail(case["name"], "clean code reported invalid", r)
    if any(RANK[f["severity"]] >= RANK["high"] for f in r["risk_findings"]):
        fail(case["name"], "clean code has a finding at high or above", r)

# The tiers users know (README, validate_code): each case's most severe finding is exactly its tier.
for case in corpus["tiers"]:
    r = analyzer.analyze(case["code"])
    if r["max_severity"] != case["severity"]:
        fail(case["name"], "max_severity %s, not %s" % (r["max_severity"], case["severity"]), r)

# Analysing never executes: code that would leave a mark if it ran leaves none.
marker = []
sys.modules["__pysandbox_marker__"] = marker
r = analyzer.analyze("import __pysandbox_marker__\n__pysandbox_marker__.append(1)\n"
                     "exec(\"__import__('__pysandbox_marker__').append(2)\")")
if marker:
    fail("never_executes", "the analysed code ran", r)

# Hostile input: answers (never raises) within the budget and a margin.
hostile = {
    "nested_parentheses": "(" * 100_000 + ")" * 100_000,
    "deep_unary": "-" * 100_000 + "1",
    "deep_binop": "1" + "+1" * 100_000,
    "deep_lambda": "lambda:" * 100_000 + "x",
    "deep_getattr": "import os\n" + "getattr(" * 150 + "os" + ", 'a')" * 150,
    "string_1mb": "x = '" + "a" * 1_000_000 + "'",
    "nul": "x = 1\0",
    "huge_int": "x = " + "9" * 10_000,
    "many_findings": "import os\n" + "os.system('x')\n" * 2_000,
}
for name, code in hostile.items():
    start = time.monotonic()
    try:
        r = analyzer.analyze(code, 1.0)
    except BaseException as e:
        failures.append("%s: raised %r" % (name, e))
        continue
    took = time.monotonic() - start
    if took > 3.0:
        fail(name, "took %.1f s" % took, r)
    if len(r["risk_findings"]) > analyzer.MAX_FINDINGS + 1:
        fail(name, "more findings than the cap", {"count": len(r["risk_findings"])})
    if r["valid"] and name in ("nested_parentheses", "deep_unary", "deep_binop", "nul"):
        fail(name, "reported valid", r)
    if not r["valid"] and not r["syntax_errors"]:
        fail(name, "invalid without a syntax error", r)

for f in failures:
    print(f)
print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
