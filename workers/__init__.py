"""Celery workers, the service's driver of the engine (as `cli` is the command line's).

A match is a state machine in PostgreSQL, moved by idempotent steps so that any worker may die
at any point: `plan` says which steps a match needs next, `steps` does them on the queues of
`arena.vocabulary`: `prepare` and `round` on ci (a round is judged by `Arena.judge_round` on the
answers stored before it, as the command line judges the answers it just asked for), `answer`
on llm (one model call), `finish`, `ratings`, `window_ratings` and `schedule` on control.
Every worker also runs a `reconciler` (what lost messages and dead workers left) and a
`watchdog` (exit when it can no longer take work); `services` holds what a process shares
between steps, `slots` each model's concurrency across workers.
"""
