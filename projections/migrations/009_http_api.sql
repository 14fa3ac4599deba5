-- What the HTTP API needs of the database beyond the read models (issue 37):
--
-- 1. The Idempotency-Key store (draft-ietf-httpapi-idempotency-key-header). A key is the
--    client's, scoped by tenant and user; its first request's fingerprint (a hash of the
--    operation, the path and the body) and first answer are kept for a day, so that every API
--    replica replays the answer to a retry and refuses the key's reuse for another request.
--    The API writes it as its reader login (a member of memstream_reader), and only with a
--    grant for the user (migration 008): a reader credential without the reader key can
--    neither read nor write a row of it. The user column is not named user_id: this is the
--    API's table, not a read model the projector fills (008 and the isolation tests treat
--    every user_id table as one), and it carries a policy of its own below.
-- 2. memstream_salience without underflow: power(0.5, x) raises "value out of range:
--    underflow" once x passes ~1075, so one memory untouched for years (an event time of 2001,
--    or 0) made every recall of its user fail. Past 1,000 half-lives salience is 0, as
--    streams/engine/salience.py rounds it.
--
-- Idempotent: every statement may run again.

CREATE TABLE IF NOT EXISTS http_idempotency_keys (
    tenant          text        NOT NULL,
    scoped_user_id  text        NOT NULL,
    idempotency_key text        NOT NULL,
    operation       text        NOT NULL,  -- the OpenAPI operationId it was first used for
    fingerprint     text        NOT NULL,  -- sha256 hex of the operation, path and body
    event_id        text        NOT NULL,
    response_status integer,               -- NULL while the first request is in flight
    response_body   jsonb,
    claimed_at      timestamptz NOT NULL DEFAULT statement_timestamp(),
    expires_at      timestamptz NOT NULL,
    PRIMARY KEY (tenant, scoped_user_id, idempotency_key)
);
CREATE INDEX IF NOT EXISTS http_idempotency_keys_expiry ON http_idempotency_keys (expires_at);

-- Nobody but the owner and the API's reader login, through the policy: not the public, and
-- not the projector, to which migration 004's default privileges give every new table.
REVOKE ALL ON http_idempotency_keys FROM PUBLIC, memstream_projector;
GRANT SELECT, INSERT, UPDATE, DELETE ON http_idempotency_keys TO memstream_reader;
ALTER TABLE http_idempotency_keys ENABLE ROW LEVEL SECURITY;

DO $idempotency$
DECLARE
    schema_name text := current_schema();
BEGIN
    EXECUTE 'DROP POLICY IF EXISTS memstream_reader_own_keys ON http_idempotency_keys';
    EXECUTE format(
        'CREATE POLICY memstream_reader_own_keys ON http_idempotency_keys FOR ALL '
        'TO memstream_reader '
        'USING (scoped_user_id = (SELECT %1$I.memstream_grant_user())) '
        'WITH CHECK (scoped_user_id = (SELECT %1$I.memstream_grant_user()))',
        schema_name);

    -- Expired keys of every user, deleted on the reader's behalf (which sees one user's rows
    -- only); at most max_rows a call. SECURITY DEFINER with a fixed search_path and the table
    -- named with its schema, as 008's verifier.
    EXECUTE format(
        'CREATE OR REPLACE FUNCTION memstream_purge_idempotency_keys(max_rows integer DEFAULT 1000) '
        'RETURNS integer LANGUAGE sql VOLATILE SECURITY DEFINER '
        'SET search_path = pg_catalog, pg_temp AS $purge$ '
        'WITH gone AS (DELETE FROM %1$I.http_idempotency_keys WHERE ctid = ANY (ARRAY('
        '  SELECT ctid FROM %1$I.http_idempotency_keys '
        '  WHERE expires_at <= statement_timestamp() LIMIT max_rows)) RETURNING 1) '
        'SELECT count(*)::integer FROM gone $purge$',
        schema_name);
    REVOKE ALL ON FUNCTION memstream_purge_idempotency_keys(integer) FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION memstream_purge_idempotency_keys(integer) TO memstream_reader;
END
$idempotency$;

CREATE OR REPLACE FUNCTION memstream_salience(
    importance double precision,
    access_count integer,
    last_touched timestamptz,
    at timestamptz,
    half_life_seconds double precision DEFAULT 604800,
    access_reinforcement double precision DEFAULT 0.1
) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT LEAST(1.0, importance + access_reinforcement * access_count)
           * CASE WHEN extract(epoch FROM at - last_touched) / half_life_seconds > 1000 THEN 0.0
                  ELSE power(0.5, GREATEST(0, extract(epoch FROM at - last_touched))
                                  / half_life_seconds)
             END
$$;
