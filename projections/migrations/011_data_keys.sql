-- Per-user data keys for crypto-shredding (issue 43; streams/erasure/data_keys.py).
--
-- Each user's personal fields are sealed with a data key of their own; the key is kept here
-- wrapped by a master key that never reaches the database (a file, an environment variable,
-- or a KMS). Erasing a user deletes the row: every copy of what the key sealed, on every topic
-- and in every backup, stops opening. The column is not named user_id: this is not a read
-- model the projector fills from the ledger (008 and the isolation tests treat every user_id
-- table as one), and it carries policies of its own below.
--
-- Who may do what:
--   the owner, memstream_projector  every row (the worker, the projector, `memstream keys`);
--   memstream_reader                the one user its signed grant names (migration 008): read
--                                   that user's key, or make it (a service's first write of a
--                                   new user over HTTP), never delete or change one;
--   PUBLIC                          nothing.
-- A dead tuple of a deleted key stays in the table's files until VACUUM reclaims its space
-- (docs/security.md gives the vacuum policy); the wrapped key is useless without the master.
--
-- Idempotent: every statement may run again.

CREATE TABLE IF NOT EXISTS memstream_data_keys (
    key_user_id   text        PRIMARY KEY,
    master_key_id text        NOT NULL,  -- which master key wrapped it (rotation re-wraps)
    wrapped_key   bytea       NOT NULL,  -- nonce || AES-256-GCM(master, data key)
    created_at    timestamptz NOT NULL DEFAULT statement_timestamp()
);
CREATE INDEX IF NOT EXISTS memstream_data_keys_master ON memstream_data_keys (master_key_id);
-- Erased keys' space is reclaimed soon: vacuum after every 20 deleted rows, not 20 % + 50.
ALTER TABLE memstream_data_keys SET (
    autovacuum_vacuum_threshold = 20, autovacuum_vacuum_scale_factor = 0
);

REVOKE ALL ON memstream_data_keys FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON memstream_data_keys TO memstream_projector;
GRANT SELECT, INSERT ON memstream_data_keys TO memstream_reader;
ALTER TABLE memstream_data_keys ENABLE ROW LEVEL SECURITY;

DO $data_keys$
DECLARE
    schema_name text := current_schema();
BEGIN
    EXECUTE 'DROP POLICY IF EXISTS memstream_reader_own_key ON memstream_data_keys';
    EXECUTE 'DROP POLICY IF EXISTS memstream_reader_new_key ON memstream_data_keys';
    EXECUTE 'DROP POLICY IF EXISTS memstream_projector_all_keys ON memstream_data_keys';
    EXECUTE format(
        'CREATE POLICY memstream_reader_own_key ON memstream_data_keys FOR SELECT '
        'TO memstream_reader USING (key_user_id = (SELECT %1$I.memstream_grant_user()))',
        schema_name);
    EXECUTE format(
        'CREATE POLICY memstream_reader_new_key ON memstream_data_keys FOR INSERT '
        'TO memstream_reader WITH CHECK (key_user_id = (SELECT %1$I.memstream_grant_user()))',
        schema_name);
    EXECUTE 'CREATE POLICY memstream_projector_all_keys ON memstream_data_keys FOR ALL '
            'TO memstream_projector USING (true) WITH CHECK (true)';
END
$data_keys$;
