-- The service's tables. Unique keys make duplicate results impossible: every step of a
-- match writes under one of them with ON CONFLICT DO NOTHING or a conditional UPDATE.

CREATE TABLE models (
    name        text PRIMARY KEY,
    spec        jsonb NOT NULL,          -- {"kind": "baseline"} or a models-file entry
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tasks (
    id           bigserial PRIMARY KEY,
    instance_id  text NOT NULL,
    fingerprint  text NOT NULL,
    language     text NOT NULL,
    task         jsonb NOT NULL,         -- the whole Task, its pipeline derived once prepared
    validation   jsonb,                  -- the Validation, once computed
    validated_at timestamptz,
    UNIQUE (instance_id, fingerprint)
);

CREATE TABLE tournaments (
    id          bigserial PRIMARY KEY,
    models      text[] NOT NULL,
    tasks_spec  text NOT NULL,
    status      text NOT NULL DEFAULT 'running'
                CHECK (status IN ('running', 'done', 'cancelled')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    reconciled_at timestamptz            -- last pass of the reconciler (one per period)
);

CREATE TABLE matches (
    id            bigserial PRIMARY KEY,
    tournament_id bigint NOT NULL REFERENCES tournaments (id),
    task_id       bigint NOT NULL REFERENCES tasks (id),
    a             text NOT NULL REFERENCES models (name),
    b             text NOT NULL REFERENCES models (name),
    status        text NOT NULL DEFAULT 'queued'
                  CHECK (status IN ('queued', 'running', 'done', 'failed', 'skipped', 'cancelled')),
    score         jsonb,
    result        text,                  -- the winning model, or 'tie'
    reason        text,                  -- why a match failed or was skipped
    created_at    timestamptz NOT NULL DEFAULT now(),
    touched_at    timestamptz NOT NULL DEFAULT now(),  -- its next steps last enqueued
    finished_at   timestamptz,
    UNIQUE (tournament_id, task_id, a, b),
    CHECK (a <> b)
);
CREATE INDEX matches_by_status ON matches (tournament_id, status);
CREATE INDEX matches_by_task ON matches (task_id) WHERE status IN ('queued', 'running');

CREATE TABLE rounds (
    id          bigserial PRIMARY KEY,
    match_id    bigint NOT NULL REFERENCES matches (id),
    idx         smallint NOT NULL CHECK (idx IN (0, 1)),
    submitter   text NOT NULL,
    reviewer    text NOT NULL,
    record      jsonb,                   -- the whole RoundRecord: answers, CI runs, reasons
    winner      text CHECK (winner IN ('submitter', 'reviewer', 'draw')),
    finished_at timestamptz,
    UNIQUE (match_id, idx)
);

CREATE TABLE answers (
    id                bigserial PRIMARY KEY,
    round_id          bigint NOT NULL REFERENCES rounds (id),
    role              text NOT NULL CHECK (role IN ('submitter', 'reviewer')),
    model             text NOT NULL,
    answer            jsonb NOT NULL,    -- raw text, diff or parse error, error
    latency_s         double precision NOT NULL,
    prompt_tokens     integer NOT NULL,
    completion_tokens integer NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (round_id, role)
);

CREATE TABLE ci_runs (
    key        text PRIMARY KEY,         -- sha256 of the request: repo, commit, pipeline, image, diffs
    request    jsonb NOT NULL,
    result     jsonb NOT NULL,           -- the CIResult; step logs capped as the runner caps them
    status     text NOT NULL,
    duration_s double precision NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- One row per step of the state machine: who holds it (a lease), how often it was tried.
CREATE TABLE steps (
    key         text PRIMARY KEY,
    match_id    bigint REFERENCES matches (id),
    status      text NOT NULL CHECK (status IN ('running', 'done', 'failed')),
    owner       text,
    lease_until timestamptz,
    attempts    integer NOT NULL DEFAULT 0,
    error       text,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE rating_snapshots (
    id            bigserial PRIMARY KEY,
    tournament_id bigint REFERENCES tournaments (id),   -- NULL: all tournaments
    scope         text NOT NULL,                         -- overall, language, role
    scope_value   text NOT NULL DEFAULT '',              -- e.g. the language
    computed_at   timestamptz NOT NULL DEFAULT now(),
    match_count   integer NOT NULL,
    rows          jsonb NOT NULL
);
CREATE INDEX rating_snapshots_latest
    ON rating_snapshots (tournament_id, scope, scope_value, computed_at DESC);
