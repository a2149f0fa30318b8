"""PostgreSQL store of the service: the truth about models, tasks, tournaments and evidence."""
