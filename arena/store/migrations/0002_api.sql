-- What the API needs: model metadata, prices and encrypted keys, retirement; tournament
-- settings; task kind and issue date for filters; indexes for the pages the API serves.

ALTER TABLE models
    ADD COLUMN api_key_enc      bytea,             -- Fernet token under ARENA_SECRET_KEY
    ADD COLUMN organization     text,
    ADD COLUMN license          text,
    ADD COLUMN open_weights     boolean,
    ADD COLUMN release_date     date,
    ADD COLUMN knowledge_cutoff date,
    ADD COLUMN price_input      double precision,  -- per million input (prompt) tokens
    ADD COLUMN price_output     double precision,  -- per million output (completion) tokens
    ADD COLUMN retired_at       timestamptz,
    ADD COLUMN updated_at       timestamptz NOT NULL DEFAULT now();

ALTER TABLE tournaments
    ADD COLUMN settings jsonb NOT NULL DEFAULT '{}'::jsonb;

ALTER TABLE tasks
    -- as the validation judged it; before that, as Task.kind says (gold tests or not)
    ADD COLUMN kind text GENERATED ALWAYS AS (coalesce(validation->>'kind',
        CASE WHEN coalesce(btrim(task->>'test_patch', E' \t\r\n'), '') = ''
             THEN 'ci-judged' ELSE 'gold-judged' END)) STORED,
    ADD COLUMN issue_created_at text GENERATED ALWAYS AS (task->>'created_at') STORED,
    ADD COLUMN imported_at timestamptz NOT NULL DEFAULT now();

CREATE INDEX tasks_by_instance ON tasks (instance_id, id DESC);
CREATE INDEX matches_by_a ON matches (a, id);
CREATE INDEX matches_by_b ON matches (b, id);
CREATE INDEX matches_by_task_all ON matches (task_id, id);
CREATE INDEX answers_by_model ON answers (model);
CREATE INDEX rounds_by_match ON rounds (match_id);
