"""Step claims: one live holder, the same owner may retake, a dead owner's lease runs out."""

from __future__ import annotations

import time

from arena.store.pool import open_pool
from arena.store.steps import ClaimState, claim_step, finish_step, give_up_step, release_step


def test_claims_keep_two_workers_off_one_step_and_count_attempts(database_url: str) -> None:
    pool = open_pool(database_url, max_size=2)
    try:
        assert claim_step(pool, "s", None, "w1", 30, 3).state is ClaimState.RUN
        assert claim_step(pool, "s", None, "w2", 30, 3).state is ClaimState.BUSY
        again = claim_step(pool, "s", None, "w1", 30, 3)  # w1's message redelivered
        assert (again.state, again.attempts) == (ClaimState.RUN, 2)
        release_step(pool, "s", "w1", "RuntimeError: boom")
        third = claim_step(pool, "s", None, "w2", 30, 3)  # released: anyone may take it
        assert (third.state, third.attempts) == (ClaimState.RUN, 3)
        exhausted = claim_step(pool, "s", None, "w2", 30, 3)
        assert exhausted.state is ClaimState.EXHAUSTED and exhausted.error == "RuntimeError: boom"
        assert claim_step(pool, "s", None, "w3", 30, 3).state is ClaimState.FAILED
    finally:
        pool.close()


def test_a_dead_owners_lease_runs_out_and_a_done_step_stays_done(database_url: str) -> None:
    pool = open_pool(database_url, max_size=2)
    try:
        assert claim_step(pool, "s", None, "dead", 0.5, 3).state is ClaimState.RUN
        assert claim_step(pool, "s", None, "w2", 30, 3).state is ClaimState.BUSY
        time.sleep(0.7)
        assert claim_step(pool, "s", None, "w2", 30, 3).state is ClaimState.RUN
        finish_step(pool, "s", "dead")  # a late finish by the old owner changes nothing
        assert claim_step(pool, "s", None, "w3", 30, 3).state is ClaimState.BUSY
        finish_step(pool, "s", "w2")
        assert claim_step(pool, "s", None, "w2", 30, 3).state is ClaimState.DONE
    finally:
        pool.close()


def test_a_step_given_up_after_its_last_attempt_is_failed_for_everyone(database_url: str) -> None:
    pool = open_pool(database_url, max_size=2)
    try:
        assert claim_step(pool, "s", None, "w1", 30, 1).state is ClaimState.RUN
        assert not give_up_step(pool, "s", "w2", "not mine")  # only the holder gives it up
        assert give_up_step(pool, "s", "w1", "EndpointFault: HTTP 401")
        assert not give_up_step(pool, "s", "w1", "twice")
        after = claim_step(pool, "s", None, "w1", 30, 1)
        assert (after.state, after.error) == (ClaimState.FAILED, "EndpointFault: HTTP 401")
    finally:
        pool.close()
