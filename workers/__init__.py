"""Celery workers, the service's driver of the engine: tournaments, matches, model calls and CI
runs as idempotent steps on the control, llm and ci queues, their state in PostgreSQL."""
