"""`go test -json` event streams (test2json); events of the wrong shape are skipped."""

import json

from ci_runner.errors import ReportError
from ci_runner.languages.outcomes import Outcomes, record
from ci_runner.types import TestOutcome

_FINAL = {"pass": TestOutcome.PASSED, "fail": TestOutcome.FAILED, "skip": TestOutcome.SKIPPED}


def parse_go_json(data: bytes) -> Outcomes:
    outcomes: Outcomes = {}
    started: set[str] = set()
    failed_packages: set[str] = set()
    events = 0
    for raw in data.decode("utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line.startswith("{"):
            continue  # build errors and other plain text share the stream
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):  # bad JSON, 5,000-digit numbers, deep nesting
            continue
        if not isinstance(event, dict) or not isinstance(event.get("Action"), str):
            continue
        package, test, action = event.get("Package", ""), event.get("Test"), event["Action"]
        if not isinstance(package, str) or not isinstance(test, str | None):
            continue
        events += 1
        if not test:
            if action == "fail":
                failed_packages.add(package)
            continue
        test_id = f"{package}::{test}" if package else str(test)
        if action == "run":
            started.add(test_id)
        elif action in _FINAL:
            started.discard(test_id)
            record(outcomes, test_id, _FINAL[action])
    if events == 0:
        raise ReportError("the go-json report holds no `go test -json` events")
    for test_id in started:  # ran but never finished: a panic or a timeout
        record(outcomes, test_id, TestOutcome.ERROR)
    tested = {t.partition("::")[0] for t in outcomes if "::" in t}
    for package in failed_packages:
        if package not in tested:
            record(outcomes, f"{package}::(package)", TestOutcome.ERROR)
    return outcomes
