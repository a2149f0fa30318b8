-- Who was at fault when a match failed (issue 19): the component (arena.faults.FaultComponent)
-- and, when a model's endpoint failed it, that model (one of the match's two). Matches that
-- failed before this migration keep both NULL: unknown.

ALTER TABLE matches
    ADD COLUMN fault    text CHECK (fault IN ('model_endpoint', 'sandbox', 'worker', 'infrastructure')),
    ADD COLUMN at_fault text,
    ADD CONSTRAINT matches_fault_only_failed CHECK (fault IS NULL OR status = 'failed'),
    ADD CONSTRAINT matches_at_fault_endpoint
        CHECK ((fault IS NOT DISTINCT FROM 'model_endpoint') = (at_fault IS NOT NULL)),
    ADD CONSTRAINT matches_at_fault_player CHECK (at_fault IS NULL OR at_fault IN (a, b));
