"""Playing rounds and matches: model calls, CI runs and verdicts, with all evidence kept."""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from arena.ci import TaskCI, Twins, unseen_in
from arena.faults import Fault, FaultComponent, ReferenceRunFailed, fault_of
from arena.ownership import owned_test_ids
from arena.patch_scope import neutral_change, scope_patch
from arena.players.base import Answer, EndpointFault, Player, Role, TaskContext
from arena.protocol import (
    PATCH_REPLICAS,
    RULES_VERSION,
    CatchRun,
    Judgement,
    RoundFacts,
    Winner,
    confirm_correct,
    guarded_run,
    judge_catch,
    judge_patch,
    judge_tests,
    known_tests,
    next_catch_run,
    reference_problem,
    round_winner,
    twin_check,
    twinned_catch_run,
)
from arena.retrieval import RepoIndex, pack_context
from arena.source_reading import program_reading_tests
from arena.tasks.pipelines import with_pipeline
from arena.tasks.schema import Task, TaskError, TaskKind, Validation
from arena.validation import MAX_LEGS_TRIED, choose_leg
from arena.vocabulary import CONTEXT_BUDGET_TOKENS
from ci_runner import CIResult, SandboxError, Workspaces, expected_sites


class RoundRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    submitter: str
    reviewer: str
    patch: Answer
    tests: Answer
    runs: dict[str, CIResult]
    patch_applies: bool
    patch_correct: bool
    tests_valid: bool
    tests_catch: bool
    reasons: dict[str, str]
    winner: Winner
    rules_version: str | None = None  # None: judged before verdicts carried one
    # whether a tripwire that must fail (or a twin) guarded the round's run of the patch with
    # the gold tests (the task's validation says, when the patch had no run); None: unknown
    guarded: bool | None = None

    @property
    def winner_model(self) -> str | None:
        return {Winner.SUBMITTER: self.submitter, Winner.REVIEWER: self.reviewer}.get(self.winner)

    def summary(self) -> dict[str, Any]:
        """The round as results files and `play --json` carry it (one schema for both)."""
        return {
            "submitter": self.submitter,
            "reviewer": self.reviewer,
            "patch_applies": self.patch_applies,
            "patch_correct": self.patch_correct,
            "tests_valid": self.tests_valid,
            "tests_catch": self.tests_catch,
            "winner": self.winner.value,
            "winner_model": self.winner_model,
            "reasons": self.reasons,
            "rules_version": self.rules_version,
            "guarded": self.guarded,
        }


class MatchRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    task: str
    language: str
    kind: TaskKind = TaskKind.GOLD_JUDGED
    a: str
    b: str
    rounds: tuple[RoundRecord, ...]
    score: dict[str, int]
    result: str  # the winning model, or "tie"
    duration_s: float

    def summary(self) -> dict[str, Any]:
        """One results line: what `arena ratings` reads, and what `arena play --json` prints."""
        winner = "tie" if self.result == "tie" else ("a" if self.result == self.a else "b")
        return {
            "task": self.task,
            "language": self.language,
            "kind": self.kind.value,
            "a": self.a,
            "b": self.b,
            "winner": winner,
            "result": self.result,
            "score": self.score,
            "duration_s": round(self.duration_s, 3),
            "ci_seconds": round(sum(c.duration_s for r in self.rounds for c in r.runs.values()), 3),
            "rules_version": max((r.rules_version or "" for r in self.rounds), default="") or None,
            "unguarded": any(r.guarded is False for r in self.rounds),
            "rounds": [r.summary() for r in self.rounds],
        }


class MatchFailed(RuntimeError):
    """A match that infrastructure kept from finishing: recorded, never rated."""

    def __init__(self, reason: str, fault: Fault) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fault = fault
        self.at_fault = fault.model  # the model whose endpoint failed, if one did


class MatchFailure(BaseModel):
    """The record of a failed match, kept beside the finished ones."""

    model_config = ConfigDict(frozen=True)

    task: str
    language: str
    kind: TaskKind = TaskKind.GOLD_JUDGED
    a: str
    b: str
    reason: str
    fault: FaultComponent = FaultComponent.INFRASTRUCTURE
    at_fault: str | None = None

    def summary(self) -> dict[str, Any]:
        """As the service's results lines: `fault` the component, `at_fault` the model."""
        return {
            "task": self.task,
            "language": self.language,
            "kind": self.kind.value,
            "a": self.a,
            "b": self.b,
            "failed": self.reason,
            "fault": self.fault.value,
            "at_fault": self.at_fault,
        }


def match_outcome(a: str, b: str, rounds: tuple[RoundRecord, ...]) -> tuple[dict[str, int], str]:
    """Each model's round wins, and the match result: the higher score, or a tie."""
    score = {a: 0, b: 0}
    for record in rounds:
        if record.winner_model is not None:
            score[record.winner_model] += 1
    if score[a] == score[b]:
        return score, "tie"
    return score, a if score[a] > score[b] else b


@dataclass(frozen=True)
class PreparedTask:
    """A validated task with what every round on it shares."""

    task: Task
    validation: Validation
    gold_only: CIResult
    contexts: dict[Role, TaskContext]
    twins: Twins | None = None  # planted in the submitter's runs with the gold tests
    twin_ids: Mapping[str, str] = field(default_factory=dict)  # twin id: its original's id
    twins_why_not: str | None = None  # why none are planted (kept for who inspects it)
    # drawn once a match: the reviewer's twins of each round are chosen from it
    twin_secret: int = field(default_factory=lambda: secrets.randbits(62))

    @property
    def tripwires(self) -> dict[str, str]:
        """The tripwire sites an honest run of this task reports, and how its report spells
        each site's test ids: those validation's runs with the gold tests reported (the gold
        tests' own files among them) and those the reference run `base + gold` reports. A
        round's run that reports tests of one of them passed, but not its tripwire, is
        forged."""
        return {**(self.validation.tripwire_sites or {}), **expected_sites(self.gold_only)}


def derived_seed(secret: int, *parts: str) -> int:
    """A seed only `secret`'s holder can compute, the same for the same parts."""
    digest = hashlib.sha256(secret.to_bytes(8, "big"))
    for part in parts:
        digest.update(hashlib.sha256(part.encode()).digest())
    return int.from_bytes(digest.digest()[:8], "big") >> 2


def role_contexts(
    task: Task, workspaces: Workspaces, index_cache: Path | None, budget_tokens: int
) -> dict[Role, TaskContext]:
    """What each role is shown: the issue and retrieved files, packed to the token budget.

    Needs the repo and nothing of CI, so a model-calling worker builds it without an engine.
    """
    task = with_pipeline(task, workspaces)

    def read_file(path: str) -> str | None:
        return workspaces.read_text(task.repo, task.base_commit, path)

    index = RepoIndex.build(
        workspaces.list_files(task.repo, task.base_commit),
        read_file,
        index_cache,
        f"{task.repo}@{task.base_commit}",
    )
    query = f"{task.problem_statement}\n{task.hints_text}"
    return {
        role: TaskContext(task, pack_context(index.search(query, role), budget_tokens), read_file)
        for role in Role
    }


class Arena:
    """Plays rounds and matches on tasks through one CI service."""

    def __init__(
        self,
        ci: TaskCI,
        workspaces: Workspaces,
        index_cache: Path | None,
        context_budget_tokens: int = CONTEXT_BUDGET_TOKENS,
        infra_attempts: int = 3,
        retry_delay_s: float = 1.0,
        max_legs_tried: int = MAX_LEGS_TRIED,
    ) -> None:
        self._ci = ci
        self._workspaces = workspaces
        self._index_cache = index_cache
        self._budget = context_budget_tokens
        self._infra_attempts = infra_attempts
        self._retry_delay_s = retry_delay_s
        self._max_legs_tried = max_legs_tried

    @property
    def max_legs_tried(self) -> int:
        """Legs validation tries per task before calling it invalid (ARENA_MAX_LEGS_TRIED)."""
        return self._max_legs_tried

    def _with_retries(self, work: Callable[[], CIResult]) -> CIResult:
        """Infrastructure faults are retried, never scored; the last one propagates."""
        for attempt in range(self._infra_attempts):
            try:
                return work()
            except SandboxError:
                if attempt + 1 == self._infra_attempts:
                    raise
                time.sleep(self._retry_delay_s * 2**attempt)
        raise AssertionError("unreachable")

    def prepare(self, task: Task) -> PreparedTask:
        """Derive the pipeline, validate (cached), run base + gold, retrieve context."""
        task = choose_leg(with_pipeline(task, self._workspaces), self._ci, self._max_legs_tried)
        validation = task.validation
        assert validation is not None
        if not validation.valid:
            raise TaskError(
                f"task {task.instance_id} is invalid and cannot be played: {validation.reason}"
            )
        gold_only = self._reference_run(task, validation)
        contexts = role_contexts(task, self._workspaces, self._index_cache, self._budget)
        twins, twin_ids, why_not = self._vouched_twins(task, validation)
        return PreparedTask(task, validation, gold_only, contexts, twins, twin_ids, why_not)

    def _vouched_twins(
        self, task: Task, validation: Validation
    ) -> tuple[Twins | None, dict[str, str], str | None]:
        """Twins of the gold tests for this match's submitter runs, drawn afresh and first
        run on the gold side, which must show each as a wrong expectation shows
        (`twin_check`); one CI run a match. None when the task has no gold tests or the gold
        side does not vouch for them."""
        if not task.test_patch.strip():
            return None, {}, "the task has no gold tests to make twins of"
        twins = Twins(seed=secrets.randbits(62), of=frozenset({1}))
        diffs = (task.patch, task.test_patch)
        check = self._with_retries(lambda: self._ci.run(task, diffs, twins=twins))
        twin_ids, why_not = twin_check(check, validation.fail_to_pass + validation.pass_to_pass)
        return (twins if why_not is None else None), twin_ids, why_not

    def _reference_run(self, task: Task, validation: Validation) -> CIResult:
        """`base + gold`, every round's yardstick, checked: a run that fails, times out or
        disagrees with validation is dropped from the cache and made again; if it stays
        wrong, no round on the task can be judged (infrastructure, never scored)."""
        problem = ""

        def read_base(path: str) -> str | None:
            return self._workspaces.read_text(task.repo, task.base_commit, path)

        required = (*validation.fail_to_pass, *validation.pass_to_pass)
        changed = owned_test_ids(task.test_patch, read_base, required) if task.test_patch else ()
        for _ in range(self._infra_attempts):
            gold_only = self._with_retries(lambda: self._ci.run(task, (task.patch,)))
            found = reference_problem(gold_only, validation, changed)
            if found is None:
                return gold_only
            problem = found
            self._ci.forget(task, (task.patch,))
        raise ReferenceRunFailed(
            f"task {task.instance_id}: {problem} ({self._infra_attempts} attempts); no round "
            "on it is judged until it is validated again"
        )

    def play_round(
        self, prepared: PreparedTask, submitter: Player, reviewer: Player
    ) -> RoundRecord:
        """One process asks both players, then judges; the service asks in one step and
        judges in another, through the same `judge_round`."""
        patch = submitter.propose_patch(prepared.contexts[Role.SUBMITTER])
        tests = reviewer.propose_tests(prepared.contexts[Role.REVIEWER], patch.diff)
        return self.judge_round(prepared, submitter.name, patch, reviewer.name, tests)

    def judge_round(
        self,
        prepared: PreparedTask,
        submitter: str,
        patch: Answer,
        reviewer: str,
        tests: Answer,
    ) -> RoundRecord:
        """The round's CI runs (each retried on infrastructure faults) and its verdict by the
        rules of `arena.protocol`: given answers, the same record wherever they were asked."""
        task = prepared.task
        runs: dict[str, CIResult] = {}
        # this match's round with these answers: its runs are its own, never another round's
        round_key = derived_seed(
            prepared.twin_secret, "round", submitter, patch.diff or "", reviewer, tests.diff or ""
        )

        def run(
            label: str, diffs: tuple[str, ...], replica: int = 0, twins: Twins | None = None
        ) -> CIResult:
            runs[label] = self._with_retries(
                lambda: self._ci.run(task, diffs, replica, twins, round_key)
            )
            return runs[label]

        on_base = on_gold = None
        if tests.diff is not None:
            on_base = run("tests_on_base", (tests.diff,))
            on_gold = run("tests_on_gold", (task.patch, tests.diff))
        valid, own_tests = judge_tests(
            tests.diff,
            on_base,
            on_gold,
            prepared.gold_only,
            prepared.contexts[Role.REVIEWER].read_file,
            known_tests(prepared.validation),
            prepared.tripwires,
        )
        if tests.diff is None and tests.failure:
            valid = Judgement(False, f"the reviewer produced no tests: {tests.failure}")
        read_base = prepared.contexts[Role.SUBMITTER].read_file
        scoped = (
            scope_patch(patch.diff, task.patch, task.test_patch, read_base) if patch.diff else None
        )
        with_gold_tests = (scoped.kept, task.test_patch) if scoped else ()
        gold_tests_unseen = prepared.twins or unseen_in(1)
        on_gold_tests = (
            run("patch_with_gold_tests", with_gold_tests, PATCH_REPLICAS[0], gold_tests_unseen)
            if scoped
            else None
        )
        applies, correct = judge_patch(
            on_gold_tests, prepared.validation, prepared.tripwires, prepared.twin_ids
        )
        if correct.holds and scoped is not None:
            again = run(
                "patch_with_gold_tests_again",
                with_gold_tests,
                PATCH_REPLICAS[1],
                gold_tests_unseen,
            )
            _, second = judge_patch(
                again, prepared.validation, prepared.tripwires, prepared.twin_ids
            )
            correct = confirm_correct(correct, second)
        if scoped is not None and scoped.dropped:
            correct = Judgement(correct.holds, f"{correct.reason}; {scoped.summary()}")
        if patch.diff is None and patch.failure:
            applies = correct = Judgement(
                False, f"the submitter produced no patch: {patch.failure}"
            )
        reviewer_base = prepared.contexts[Role.REVIEWER].read_file
        reading = program_reading_tests(tests.diff, reviewer_base, own_tests) if tests.diff else {}
        catching = own_tests - set(reading)  # a test that reads the program never catches
        catch_runs: dict[CatchRun, CIResult] = {}
        if (
            valid.holds
            and applies.holds
            and scoped is not None
            and tests.diff is not None
            and catching
        ):
            patch_diffs = (scoped.kept, tests.diff)
            # twins of T's tests, the same wherever planted (the gold side vouches for them)
            # and for the same answers (a round judged again reads its kept runs)
            reviewer_twins = Twins(
                seed=derived_seed(prepared.twin_secret, scoped.kept, tests.diff), of=frozenset({1})
            )
            diffs_of = {
                CatchRun.ON_PATCH: patch_diffs,
                CatchRun.AGAIN: patch_diffs,
                CatchRun.GOLD_AGAIN: (task.patch, tests.diff),
                CatchRun.NEUTRAL: (
                    scoped.kept,
                    neutral_change(scoped.kept, read_base)[0],
                    tests.diff,
                ),
            }
            step: CatchRun | None = CatchRun.ON_PATCH
            while step is not None:
                twins = (
                    reviewer_twins
                    if twinned_catch_run(step, catch_runs)
                    else unseen_in(len(diffs_of[step]) - 1)  # T's tests come last
                )
                catch_runs[step] = run(step.value, diffs_of[step], step.replica, twins)
                step = next_catch_run(catch_runs, catching, prepared.tripwires)
        catch = judge_catch(catch_runs, catching, prepared.tripwires)
        if reading:
            shown = "; ".join(f"{t} ({why})" for t, why in sorted(reading.items())[:5])
            shown += " ..." if len(reading) > 5 else ""
            if not catching:
                catch = Judgement(
                    False, f"no test of the reviewer may catch: each reads the program: {shown}"
                )
            else:
                catch = Judgement(
                    catch.holds,
                    f"{catch.reason}; excluded from catching, as they read the program "
                    f"instead of running it: {shown}",
                )
        facts = RoundFacts(applies.holds, correct.holds, valid.holds, catch.holds)
        return RoundRecord(
            submitter=submitter,
            reviewer=reviewer,
            patch=patch,
            tests=tests,
            runs=runs,
            patch_applies=facts.patch_applies,
            patch_correct=facts.patch_correct,
            tests_valid=facts.tests_valid,
            tests_catch=facts.tests_catch,
            reasons={
                "patch_applies": applies.reason,
                "patch_correct": correct.reason,
                "tests_valid": valid.reason,
                "tests_catch": catch.reason,
            },
            winner=round_winner(facts),
            rules_version=RULES_VERSION,
            guarded=guarded_run(on_gold_tests, prepared.validation),
        )

    def _round_with_retries(
        self, prepared: PreparedTask, submitter: Player, reviewer: Player
    ) -> RoundRecord:
        """An endpoint's fault replays the round (each CI run already retries the engine's);
        past the budget the match fails rather than score a model for what it did not do."""
        where = f"round where {submitter.name} submits and {reviewer.name} reviews"
        for attempt in range(self._infra_attempts):
            try:
                return self.play_round(prepared, submitter, reviewer)
            except EndpointFault as exc:
                if attempt + 1 == self._infra_attempts:
                    raise MatchFailed(
                        f"{where}: {self._infra_attempts} attempts failed; last: {exc}",
                        fault_of(exc),
                    ) from exc
                time.sleep(self._retry_delay_s * 2**attempt)
            except SandboxError as exc:
                raise MatchFailed(f"{where}: infrastructure: {exc}", fault_of(exc)) from exc
        raise AssertionError("unreachable")

    def play_match(self, prepared: PreparedTask, a: Player, b: Player) -> MatchRecord:
        """Round 1: a submits, b reviews. Round 2: the roles swap."""
        started = time.monotonic()
        rounds = (
            self._round_with_retries(prepared, a, b),
            self._round_with_retries(prepared, b, a),
        )
        score, result = match_outcome(a.name, b.name, rounds)
        return MatchRecord(
            task=prepared.task.instance_id,
            language=prepared.task.language.value,
            kind=prepared.validation.kind,
            a=a.name,
            b=b.name,
            rounds=rounds,
            score=score,
            result=result,
            duration_s=time.monotonic() - started,
        )
