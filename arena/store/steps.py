"""Steps of the state machine: a lease says who runs one, a counter how often it was tried.

A worker claims a step before doing it. The claim fails while another live worker holds the
lease (a duplicate message), succeeds again for the same owner (Celery redelivering the
message of a worker that died) or once the lease ran out (a worker that died for good).
Every claim counts as an attempt: a step that keeps killing its worker runs out of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from arena.store.pool import Pool


class ClaimState(Enum):
    RUN = "run"  # this worker does the step now
    DONE = "done"  # someone did it: just move on
    BUSY = "busy"  # another live worker holds it
    FAILED = "failed"  # it was given up on
    EXHAUSTED = "exhausted"  # this claim was one attempt too many: give up now


@dataclass(frozen=True)
class Claim:
    state: ClaimState
    attempts: int = 0
    error: str | None = None


def claim_step(
    pool: Pool, key: str, match_id: int | None, owner: str, lease_s: float, max_attempts: int
) -> Claim:
    with pool.connection() as conn, conn.transaction():
        row = conn.execute(
            "INSERT INTO steps (key, match_id, status, owner, lease_until, attempts)"
            " VALUES (%(key)s, %(match)s, 'running', %(owner)s,"
            "         now() + make_interval(secs => %(lease)s), 1)"
            " ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner,"
            "   lease_until = EXCLUDED.lease_until, attempts = steps.attempts + 1,"
            "   updated_at = now()"
            " WHERE steps.status = 'running'"
            "   AND (steps.lease_until < now() OR steps.owner = EXCLUDED.owner)"
            " RETURNING attempts, error",
            {"key": key, "match": match_id, "owner": owner, "lease": lease_s},
        ).fetchone()
        if row is not None:
            if row["attempts"] > max_attempts:
                conn.execute(
                    "UPDATE steps SET status = 'failed', owner = NULL WHERE key = %s", (key,)
                )
                return Claim(ClaimState.EXHAUSTED, row["attempts"] - 1, row["error"])
            return Claim(ClaimState.RUN, row["attempts"])
        held = conn.execute(
            "SELECT status, attempts, error FROM steps WHERE key = %s", (key,)
        ).fetchone()
    assert held is not None
    state = {"done": ClaimState.DONE, "failed": ClaimState.FAILED}.get(
        held["status"], ClaimState.BUSY
    )
    return Claim(state, held["attempts"], held["error"])


def renew_lease(pool: Pool, key: str, owner: str, lease_s: float) -> None:
    with pool.connection() as conn:
        conn.execute(
            "UPDATE steps SET lease_until = now() + make_interval(secs => %s)"
            " WHERE key = %s AND owner = %s AND status = 'running'",
            (lease_s, key, owner),
        )


def finish_step(pool: Pool, key: str, owner: str) -> None:
    with pool.connection() as conn:
        conn.execute(
            "UPDATE steps SET status = 'done', lease_until = NULL, updated_at = now()"
            " WHERE key = %s AND owner = %s AND status = 'running'",
            (key, owner),
        )


def release_step(pool: Pool, key: str, owner: str, error: str) -> None:
    """The step raised: keep why, and let the next message take it at once."""
    with pool.connection() as conn:
        conn.execute(
            "UPDATE steps SET lease_until = now(), error = %s, updated_at = now()"
            " WHERE key = %s AND owner = %s AND status = 'running'",
            (error[:4000], key, owner),
        )


def give_up_step(pool: Pool, key: str, owner: str, error: str) -> bool:
    """The step's last attempt raised: it is failed, and no worker takes it again. True when
    this call gave it up (the claim was still this owner's)."""
    with pool.connection() as conn:
        given_up = conn.execute(
            "UPDATE steps SET status = 'failed', owner = NULL, lease_until = NULL, error = %s,"
            " updated_at = now() WHERE key = %s AND owner = %s AND status = 'running'",
            (error[:4000], key, owner),
        )
        return given_up.rowcount == 1
