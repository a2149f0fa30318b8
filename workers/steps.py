"""The Celery tasks: each claims one step, does it, writes under its unique key, moves on.

Any of them may run twice (a redelivered message, the reconciler, a duplicate): the claim
keeps two workers off one step, and a step whose result is stored does nothing again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from celery import Task as CeleryTask

from arena.faults import Fault, FaultComponent, fault_of
from arena.match import RoundRecord, match_outcome
from arena.players.base import Role
from arena.ratings.adaptive_state import decide
from arena.store.adaptive import is_adaptive, schedule_pass
from arena.store.matches import (
    end_match,
    load_match,
    load_task,
    mark_running,
    matches_waiting_on_task,
    store_answer,
    store_round,
    store_validation,
)
from arena.store.steps import (
    ClaimState,
    claim_step,
    finish_step,
    give_up_step,
    release_step,
    renew_lease,
)
from arena.store.tournaments import (
    complete_tournament,
    context_budget,
    stalled_matches,
    touch_match,
    tournaments_to_reconcile,
    unfinished_matches,
)
from arena.tasks.pipelines import with_pipeline
from arena.validation import choose_leg
from arena.vocabulary import OPEN_MATCH, MatchStatus, Queue, TaskName
from workers.app import app
from workers.plan import Step, next_steps, prepare_step
from workers.ratings import refresh_boards, refresh_window
from workers.services import Services, services


def send(step: Step, countdown: float | None = None) -> None:
    app.send_task(
        TaskName(f"arena.{step.name}").value,
        args=step.args,
        queue=step.queue.value,
        countdown=countdown,
    )


def advance(s: Services, match_id: int) -> None:
    """Enqueue whatever the match needs next (both rounds at once)."""
    match = load_match(s.pool, match_id)
    steps = next_steps(match)
    if steps:
        touch_match(s.pool, match_id)
    for step in steps:
        send(step)


@contextmanager
def _heartbeat(s: Services, key: str, owner: str, also: Callable[[], None]) -> Iterator[None]:
    """Renews the step's lease (and a model slot) while the step runs."""
    stop = threading.Event()
    period = s.settings.step_lease_s / 3

    def beat() -> None:
        while not stop.wait(period):
            try:
                renew_lease(s.pool, key, owner, s.settings.step_lease_s)
                also()
            except Exception:  # a restarting database: the next beat retries
                continue

    thread = threading.Thread(target=beat, daemon=True, name=f"lease {key}")
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _fail_for(s: Services, match_ids: list[int], reason: str, fault: Fault) -> None:
    """Fail the matches, naming who was at fault: a model's endpoint, or a component."""
    for match_id in match_ids:
        if end_match(s.pool, match_id, MatchStatus.FAILED, reason=reason, fault=fault):
            _after_match(s, match_id)


def run_step(
    task: CeleryTask,
    step: Step,
    match_ids: Callable[[], list[int]],
    work: Callable[[], None],
    beat: Callable[[], None] = lambda: None,
) -> bool:
    """Claim, work, mark done. True when this worker did the step (and must move the match on).

    A step someone else did is left alone: whoever did it moved the match on, and if they
    died before that, the reconciler does it. Advancing again here would multiply messages.
    """
    s = services()
    owner = str(task.request.id or f"local-{threading.get_ident()}")
    match_id = step.args[0] if step.name in ("answer", "round", "finish") else None
    claim = claim_step(
        s.pool, step.key, match_id, owner, s.settings.step_lease_s, s.settings.step_attempts
    )
    if claim.state is ClaimState.EXHAUSTED:  # the last attempt's worker died: no exception
        last = f"; last error: {claim.error}" if claim.error else " (its worker died each time)"
        reason = f"step {step.key} failed after {claim.attempts} attempts{last}"
        _fail_for(s, match_ids(), reason, Fault(FaultComponent.WORKER))
        return False
    if claim.state is not ClaimState.RUN:
        return False
    try:
        with _heartbeat(s, step.key, owner, beat):
            work()
    except Exception as exc:
        # stored, served as the match's reason and logged: no known secret in it
        error = s.secrets.scrub(f"{type(exc).__name__}: {exc}")
        if claim.attempts < s.settings.step_attempts:
            release_step(s.pool, step.key, owner, error)
        elif give_up_step(s.pool, step.key, owner, error):
            # the last attempt raised: its exception says whose fault it is
            reason = f"step {step.key} failed after {claim.attempts} attempts; last error: {error}"
            _fail_for(s, match_ids(), reason, fault_of(exc))
        raise
    finish_step(s.pool, step.key, owner)
    return True


@app.task(bind=True, name=TaskName.PREPARE.value, queue=Queue.CI.value)
def prepare(self: CeleryTask, task_id: int) -> None:
    """Validation once per task fingerprint, and the gold run every round compares with."""
    s = services()

    def work() -> None:
        task = load_task(s.pool, task_id)
        if task.validation is None:
            task = with_pipeline(task, s.workspaces)
            task = choose_leg(task, s.ci, s.ci_settings.max_legs_tried)
            assert task.validation is not None
            store_validation(s.pool, task_id, task, task.validation)
            task = load_task(s.pool, task_id)
        if task.validation is not None and task.validation.valid:
            s.prepared(task_id)  # runs base + gold once, into ci_runs

    def waiting() -> list[int]:
        return matches_waiting_on_task(s.pool, task_id)

    if run_step(self, prepare_step(task_id), waiting, work):
        for match_id in waiting():
            advance(s, match_id)


@app.task(bind=True, name=TaskName.ANSWER.value, queue=Queue.LLM.value)
def answer(self: CeleryTask, match_id: int, idx: int, role_index: int) -> None:
    """One model call: the submitter's patch, or the reviewer's tests against that patch."""
    s = services()
    role = (Role.SUBMITTER, Role.REVIEWER)[role_index]
    match = load_match(s.pool, match_id)
    played = match.rounds[idx]
    model = played.submitter if role is Role.SUBMITTER else played.reviewer
    holder = str(self.request.id or threading.get_ident())
    limit: int | None = None  # the model's concurrency limit, known once its player is

    def work() -> None:
        nonlocal limit
        current = load_match(s.pool, match_id)
        if current.status not in OPEN_MATCH or role in current.rounds[idx].answers:
            return
        # inside the step: a model whose player cannot be made (its key variable refused or
        # unset, its stored key unreadable) fails the step's attempts, then the match, by name
        player, limit = s.player(model)
        mark_running(s.pool, match_id)
        contexts = s.contexts(match.task_id, context_budget(s.pool, match.tournament_id))
        if limit is not None:
            s.slots.acquire(model, limit, holder)
        try:
            if role is Role.SUBMITTER:
                given = player.propose_patch(contexts[Role.SUBMITTER])
            else:
                patch = current.rounds[idx].answers[Role.SUBMITTER].diff
                given = player.propose_tests(contexts[Role.REVIEWER], patch)
        finally:
            if limit is not None:
                s.slots.release(model, holder)
        store_answer(s.pool, match_id, idx, role, model, given)

    def renew_slot() -> None:
        if limit is not None:
            s.slots.try_acquire(model, limit, holder)

    step = Step("answer", (match_id, idx, role_index), Queue.LLM)
    if run_step(self, step, lambda: [match_id], work, renew_slot):
        advance(s, match_id)


@app.task(bind=True, name=TaskName.ROUND.value, queue=Queue.CI.value)
def play_round(self: CeleryTask, match_id: int, idx: int) -> None:
    """The round's CI runs (each stored by content) and its verdict, by the engine's own rules."""
    s = services()

    def work() -> None:
        match = load_match(s.pool, match_id)
        played = match.rounds[idx]
        if match.status not in OPEN_MATCH or played.record is not None:
            return
        record: RoundRecord = s.arena.judge_round(
            s.prepared(match.task_id),
            played.submitter,
            played.answers[Role.SUBMITTER],
            played.reviewer,
            played.answers[Role.REVIEWER],
        )
        store_round(s.pool, match_id, idx, record)

    if run_step(self, Step("round", (match_id, idx), Queue.CI), lambda: [match_id], work):
        advance(s, match_id)


@app.task(bind=True, name=TaskName.FINISH.value, queue=Queue.CONTROL.value)
def finish(self: CeleryTask, match_id: int) -> None:
    """The match's score and result from its two judged rounds (or skipped: invalid task)."""
    s = services()
    ended: list[bool] = []
    match = load_match(s.pool, match_id)
    invalid = match.validation is not None and not match.validation.valid
    records = tuple(r.record for r in match.rounds if r.record is not None)
    if not invalid and len(records) != len(match.rounds):
        return  # not ready (never sent so): leave the step unclaimed for the last round

    def work() -> None:
        if invalid:
            reason = f"the task is invalid: {match.validation.reason if match.validation else ''}"
            ended.append(end_match(s.pool, match_id, MatchStatus.SKIPPED, reason=reason))
            return
        score, result = match_outcome(match.a, match.b, records)
        ended.append(end_match(s.pool, match_id, MatchStatus.DONE, score=score, result=result))

    run_step(self, Step("finish", (match_id,), Queue.CONTROL), lambda: [match_id], work)
    if any(ended):
        _after_match(s, match_id)


def _after_match(s: Services, match_id: int) -> None:
    """Ratings now when the tournament is over, else once per debounce period; an adaptive
    tournament also chooses its next matches now that one slot is free."""
    tournament_id = load_match(s.pool, match_id).tournament_id
    if is_adaptive(s.pool, tournament_id):
        send(Step("schedule", (tournament_id,), Queue.CONTROL))
    if not unfinished_matches(s.pool, tournament_id):
        send(Step("ratings", (tournament_id,), Queue.CONTROL))
    elif s.redis.set(
        f"arena:ratings-due:{tournament_id}",
        1,
        nx=True,
        px=max(1, int(s.settings.ratings_debounce_s * 1000)),
    ):
        send(Step("ratings", (tournament_id,), Queue.CONTROL), s.settings.ratings_debounce_s)


@app.task(name=TaskName.RATINGS.value, queue=Queue.CONTROL.value)
def ratings(tournament_id: int) -> None:
    """Snapshots of the tournament's leaderboards (and everyone's), then done if it is over."""
    s = services()
    over = not unfinished_matches(s.pool, tournament_id)
    refresh_boards(s.pool, tournament_id, s.settings.ratings_bootstrap)
    refresh_boards(s.pool, None, s.settings.ratings_bootstrap)
    if over:
        complete_tournament(s.pool, tournament_id)


@app.task(name=TaskName.WINDOW_RATINGS.value, queue=Queue.CONTROL.value)
def window_ratings(tournament_id: int, window: str) -> None:
    """The boards over tasks opened after each model's knowledge cutoff (`cutoff`) or after a
    day (contamination views), asked for by the API; 0 stands for all tournaments."""
    s = services()
    refresh_window(s.pool, tournament_id or None, window, s.settings.ratings_bootstrap)


def reconcile_once(s: Services) -> None:
    """Re-enqueue what a lost message or a dead worker left behind; finish what is over."""
    for tournament_id in tournaments_to_reconcile(s.pool, s.settings.reconcile_s * 0.8):
        for match_id in stalled_matches(s.pool, tournament_id, s.settings.stall_s):
            advance(s, match_id)
        if is_adaptive(s.pool, tournament_id):  # a lost scheduling message: decide again
            send(Step("schedule", (tournament_id,), Queue.CONTROL))
        elif not unfinished_matches(s.pool, tournament_id):
            send(Step("ratings", (tournament_id,), Queue.CONTROL))


@app.task(name=TaskName.SCHEDULE.value, queue=Queue.CONTROL.value)
def schedule(tournament_id: int) -> None:
    """Start every match of a new round robin (the first steps of each); for an adaptive
    tournament, whenever it starts, a match of it ends or a model joins: its next matches."""
    s = services()
    if is_adaptive(s.pool, tournament_id):
        schedule_adaptive(s, tournament_id)
        return
    for match_id in unfinished_matches(s.pool, tournament_id):
        advance(s, match_id)


def schedule_adaptive(s: Services, tournament_id: int) -> None:
    """One scheduling pass (serialised per tournament by the store), then the new matches'
    first steps; once the pass records the end, the final ratings. Matches inserted by a
    worker that died before advancing them are stalled ones: the reconciler moves them on."""
    done = schedule_pass(
        s.pool, tournament_id, lambda book, slots: decide(book, slots, seed=tournament_id)
    )
    for match_id in done.match_ids:
        advance(s, match_id)
    if done.decision is not None and done.decision.stop is not None:
        send(Step("ratings", (tournament_id,), Queue.CONTROL))
