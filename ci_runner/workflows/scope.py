"""Whether a leg's test commands run the gold tests: the scope of each runner line against
the files the gold test patch touches, as each language reads its runner's
(`LanguageProfile.scope_rules`: the packages `go test` is given, the paths `pytest` is given,
the crates `cargo test` selects).

Pure rules over the runner lines `commands.runner_lines` finds (make/just recipes and called
scripts followed). A runner whose scope cannot be read (tox, nox, ctest, a variable) says
nothing either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ci_runner.languages import profiles
from ci_runner.languages.scope import Evidence
from ci_runner.workflows.commands import ReadFile, RunnerLine

__all__ = ["Evidence", "Scope", "gold_scope"]


@dataclass(frozen=True)
class Scope:
    evidence: Evidence
    why: str


def gold_scope(lines: Sequence[RunnerLine], gold: Sequence[str], read_file: ReadFile) -> Scope:
    """Whether the runner lines run a gold test (`gold`: the paths the gold tests touch)."""
    if not gold or not lines:
        return Scope(Evidence.UNKNOWN, "")
    found: list[tuple[Evidence, str]] = []
    for runner in lines:
        for rule in (rule for profile in profiles() for rule in profile.scope_rules):
            for match in rule.line.finditer(runner.line):
                evidence = rule.read(match["args"], runner.directory, gold, read_file)
                found.append((evidence, match.group(0).strip()[:80]))
    known = [(e, text) for e, text in found if e is not Evidence.UNKNOWN]
    if covering := [text for e, text in known if e is Evidence.COVERS]:
        return Scope(Evidence.COVERS, f"its tests reach the gold tests ({covering[0]})")
    if known and len(known) == len(found):
        return Scope(Evidence.MISSES, f"its tests leave the gold tests out ({known[0][1]})")
    return Scope(Evidence.UNKNOWN, "")
