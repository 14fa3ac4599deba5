-- Per-memory keys for forgetting one memory (issue 43; streams/erasure/memory_keys.py).
--
-- A user's data key (011) cannot erase one memory: it opens all of the user. Each memory's
-- personal fields are therefore sealed with a random key of its own, one per generation (the
-- version from which its current content was written: the forget cascade writing a memory
-- again starts a new one). Each key is kept here wrapped under its user's data key, never
-- derived from it. The projector deletes a forgotten memory's keys, and the old generations
-- of a memory the cascade wrote again, when it applies the forget (then vacuums this table,
-- since a dead tuple's wrapped key opens with the user's living key: docs/security.md).
-- Forgetting the user deletes the user's rows here too.
--
-- Who may do what: as 011 (the owner and memstream_projector every row; memstream_reader
-- reads and makes keys of the one user its signed grant names; PUBLIC nothing).
--
-- Idempotent: every statement may run again.

CREATE TABLE IF NOT EXISTS memstream_memory_keys (
    key_user_id   text        NOT NULL,
    key_memory_id text        NOT NULL,
    generation    bigint      NOT NULL,  -- the sealed value's header names it
    wrapped_key   bytea       NOT NULL,  -- nonce || AES-256-GCM(user's data key, memory key)
    created_at    timestamptz NOT NULL DEFAULT statement_timestamp(),
    PRIMARY KEY (key_user_id, key_memory_id, generation)
);
-- Erased keys' space is reclaimed soon: vacuum after every 50 deleted rows.
ALTER TABLE memstream_memory_keys SET (
    autovacuum_vacuum_threshold = 50, autovacuum_vacuum_scale_factor = 0
);

REVOKE ALL ON memstream_memory_keys FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON memstream_memory_keys TO memstream_projector;
GRANT SELECT, INSERT ON memstream_memory_keys TO memstream_reader;
ALTER TABLE memstream_memory_keys ENABLE ROW LEVEL SECURITY;

DO $memory_keys$
DECLARE
    schema_name text := current_schema();
BEGIN
    EXECUTE 'DROP POLICY IF EXISTS memstream_reader_own_memory_keys ON memstream_memory_keys';
    EXECUTE 'DROP POLICY IF EXISTS memstream_reader_new_memory_key ON memstream_memory_keys';
    EXECUTE 'DROP POLICY IF EXISTS memstream_projector_all_memory_keys ON memstream_memory_keys';
    EXECUTE format(
        'CREATE POLICY memstream_reader_own_memory_keys ON memstream_memory_keys FOR SELECT '
        'TO memstream_reader USING (key_user_id = (SELECT %1$I.memstream_grant_user()))',
        schema_name);
    EXECUTE format(
        'CREATE POLICY memstream_reader_new_memory_key ON memstream_memory_keys FOR INSERT '
        'TO memstream_reader WITH CHECK (key_user_id = (SELECT %1$I.memstream_grant_user()))',
        schema_name);
    EXECUTE 'CREATE POLICY memstream_projector_all_memory_keys ON memstream_memory_keys FOR ALL '
            'TO memstream_projector USING (true) WITH CHECK (true)';
END
$memory_keys$;
