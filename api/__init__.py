"""The FastAPI service: models, tasks, tournaments, matches and leaderboards."""
