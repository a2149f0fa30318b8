"""Migrations on an empty database (the schema, and a second run that does nothing), and the
unique keys and checks of the migrated schema."""

from __future__ import annotations

import psycopg
import pytest

from arena.store.migrate import migrate


def _columns(conn: psycopg.Connection[tuple[str, ...]], table: str) -> set[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s", (table,)
    )
    return {r[0] for r in rows}


def test_migrate_creates_the_schema_once(empty_database_url: str) -> None:
    assert migrate(empty_database_url) == [
        "0001_schema",
        "0002_api",
        "0003_import_refusals",
        "0004_match_faults",
        "0005_adaptive",
    ]
    assert migrate(empty_database_url) == []
    with psycopg.connect(empty_database_url) as conn:
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            )
        }
        assert {
            "models",
            "tasks",
            "tournaments",
            "matches",
            "rounds",
            "answers",
            "ci_runs",
            "rating_snapshots",
            "steps",
            "schema_migrations",
            "import_refusals",
        } <= tables
        assert {"fingerprint", "validation"} <= _columns(conn, "tasks")
        assert {"reason", "fault", "at_fault"} <= _columns(conn, "matches")
        assert {"raw_text", "diff"} & _columns(conn, "answers") == set()  # stored whole, as JSON
        assert {"scope", "scope_value", "computed_at", "match_count", "rows"} <= _columns(
            conn, "rating_snapshots"
        )


def test_concurrent_migrations_apply_once(empty_database_url: str) -> None:
    import threading

    applied: list[list[str]] = []
    threads = [
        threading.Thread(target=lambda: applied.append(migrate(empty_database_url)))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(applied) == [
        [],
        [],
        [],
        [
            "0001_schema",
            "0002_api",
            "0003_import_refusals",
            "0004_match_faults",
            "0005_adaptive",
        ],
    ]


def _seed(conn: psycopg.Connection[tuple[str, ...]]) -> None:
    conn.execute("INSERT INTO models (name, spec) VALUES ('a', '{}'), ('b', '{}')")
    conn.execute(
        "INSERT INTO tasks (id, instance_id, fingerprint, language, task)"
        " VALUES (1, 't', 'f', 'python', '{}')"
    )
    conn.execute("INSERT INTO tournaments (id, models, tasks_spec) VALUES (1, '{a,b}', 'demo')")
    conn.execute(
        "INSERT INTO matches (id, tournament_id, task_id, a, b) VALUES (1, 1, 1, 'a', 'b')"
    )
    conn.execute(
        "INSERT INTO rounds (id, match_id, idx, submitter, reviewer) VALUES (1, 1, 0, 'a', 'b')"
    )
    conn.execute(
        "INSERT INTO answers (round_id, role, model, answer, latency_s, prompt_tokens,"
        " completion_tokens) VALUES (1, 'submitter', 'a', '{}', 0, 0, 0)"
    )
    conn.execute(
        "INSERT INTO ci_runs (key, request, result, status, duration_s)"
        " VALUES ('k', '{}', '{}', 'passed', 1)"
    )


@pytest.mark.parametrize(
    "duplicate",
    [
        "INSERT INTO tasks (instance_id, fingerprint, language, task) VALUES ('t', 'f', 'go', '{}')",
        "INSERT INTO matches (tournament_id, task_id, a, b) VALUES (1, 1, 'a', 'b')",
        "INSERT INTO rounds (match_id, idx, submitter, reviewer) VALUES (1, 0, 'b', 'a')",
        "INSERT INTO answers (round_id, role, model, answer, latency_s, prompt_tokens,"
        " completion_tokens) VALUES (1, 'submitter', 'a', '{}', 0, 0, 0)",
        "INSERT INTO ci_runs (key, request, result, status, duration_s) VALUES ('k', '{}', '{}', 'failed', 2)",
    ],
    ids=["task", "match", "round", "answer", "ci_run"],
)
def test_duplicates_are_impossible(database_url: str, duplicate: str) -> None:
    with psycopg.connect(database_url) as conn:
        _seed(conn)
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute(duplicate)


def test_the_reverse_pair_is_another_match_but_a_model_never_meets_itself(
    database_url: str,
) -> None:
    with psycopg.connect(database_url) as conn:
        _seed(conn)
        conn.execute(
            "INSERT INTO matches (id, tournament_id, task_id, a, b) VALUES (2, 1, 1, 'b', 'a')"
        )
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(
                "INSERT INTO matches (id, tournament_id, task_id, a, b) VALUES (3, 1, 1, 'a', 'a')"
            )


@pytest.mark.parametrize(
    "fault",
    [
        "status = 'failed', fault = 'the moon', at_fault = NULL",  # not a component
        "status = 'failed', fault = 'model_endpoint', at_fault = NULL",  # whose endpoint?
        "status = 'failed', fault = 'sandbox', at_fault = 'a'",  # a model, but not its endpoint
        "status = 'failed', fault = 'model_endpoint', at_fault = 'c'",  # not one of the two
        "status = 'done', fault = 'sandbox', at_fault = NULL",  # only a failed match has one
    ],
)
def test_a_failed_matchs_fault_is_a_component_and_names_only_a_model_that_played(
    database_url: str, fault: str
) -> None:
    with psycopg.connect(database_url) as conn:
        _seed(conn)
        conn.execute("INSERT INTO models (name, spec) VALUES ('c', '{}')")
        conn.execute(
            "UPDATE matches SET status = 'failed', fault = 'model_endpoint', at_fault = 'b'"
            " WHERE id = 1"
        )
        conn.execute("UPDATE matches SET status = 'failed', fault = 'worker', at_fault = NULL")
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(f"UPDATE matches SET {fault} WHERE id = 1")
