-- Adaptive tournaments (issue 22): matches are chosen one batch at a time by the pairing
-- engine until its goal holds or its budget is spent, so the tournament keeps its task pool,
-- its goal and budget, the models still being placed (added after it had run) and why it
-- stopped. Round robin tournaments, created before this migration or since, keep the defaults.

ALTER TABLE tournaments
    ADD COLUMN mode        text NOT NULL DEFAULT 'round_robin'
                           CHECK (mode IN ('round_robin', 'adaptive')),
    ADD COLUMN adaptive    jsonb,                          -- goal, budget, matches in flight
    ADD COLUMN task_ids    bigint[] NOT NULL DEFAULT '{}', -- the pool an adaptive one draws from
    ADD COLUMN newcomers   text[] NOT NULL DEFAULT '{}',   -- models added later, being placed
    ADD COLUMN stop_reason text,                           -- arena.ratings.stopping.Stop
    ADD CONSTRAINT tournaments_adaptive_config CHECK ((mode = 'adaptive') = (adaptive IS NOT NULL));
