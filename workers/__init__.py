"""Celery workers: tournaments, matches, model calls and CI runs as retryable tasks (to come)."""
