-- Import lines that did not become tasks, kept so the corpus report shows why (issue 17).
-- One row per instance id; a line whose instance id cannot be read is keyed by file and line.
-- A later import of the instance deletes its row.

CREATE TABLE import_refusals (
    key          text PRIMARY KEY,        -- instance id, or 'file:line'
    instance_id  text,
    language     text,
    repo         text,
    source_file  text,
    line         integer NOT NULL,
    field        text NOT NULL,
    message      text NOT NULL,
    reason       text NOT NULL,           -- what the import report counts the line under
    refused_at   timestamptz NOT NULL DEFAULT now()
);
