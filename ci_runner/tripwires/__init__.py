"""Tripwire tests: secret tests the runner adds to every CI run, to catch forged results.

Every run gets, at each site its pipeline's tests are collected from (a Python test
directory, a Go package, a Rust test target), a test that must pass and, where its failure
cannot change what else the job runs, one that must fail, under names drawn afresh for the
run. A report or console output in which the failing one passes, or the passing one is
missing where an honest run shows it, did not come from the test runner: the run is
forged, the code under test's fault (swing-protocol.md, "Faults: whose are they?").

What they can and cannot see: the names exist only in this run, written into the workspace
just before the first test step, so a patch written before the run cannot know them, nor
pick them out by a fixed word. The code under test can read the workspace while it runs
(the files, and `git status`, which shows them as new), and so could find them and spare
them: that is accepted. Tripwires catch code that fabricates results without running the
tests (a `pytest/` package, libtest lines printed before `main`) and code that rewrites
results wholesale (a hook turning failures into passes); a forger that reads the tree and
rewrites only the tests it targets is beyond them, as it is beyond any check of output.
C++ gets them through a source added to its test target (`cpp`).

Must-fail twins go further (`twins`): copies of the tests the code under test has never
seen (the gold tests, a reviewer's), each expecting another value, beside their originals;
a run reporting a test and its twin both passed is forged (once a run of the gold side
showed the twins fail beside their passing tests: `arena.protocol.twin_check`), however
well the code picks out the generic tripwires (`python_twins` makes Python's).

Where the pipeline stops at its first failure, the must-fail tripwires and the twins run in an
invocation of their own after the steps (`apart`).

Modules: `sites` (names and a planted site), `python`, `golang`, `rust`, `cpp` (each
language's form and placement), `twins` and the languages' `*_twins` (twins of unseen tests),
`apart` (the must-fail tripwires' own invocation), `plan` (languages, which tripwires, when
written), `verdict` (the report read against them).
"""

from ci_runner.languages.twins import read_twins
from ci_runner.tripwires.plan import Planting, plan, twin_forms, write
from ci_runner.tripwires.verdict import (
    TripwireIndex,
    decided_apart,
    dropped,
    expected_sites,
    missing_tripwire,
    read_apart,
    read_tripwires,
    tampered,
    tripwire_exits,
)

__all__ = [
    "Planting",
    "TripwireIndex",
    "decided_apart",
    "dropped",
    "expected_sites",
    "missing_tripwire",
    "plan",
    "read_apart",
    "read_tripwires",
    "read_twins",
    "tampered",
    "tripwire_exits",
    "twin_forms",
    "write",
]
