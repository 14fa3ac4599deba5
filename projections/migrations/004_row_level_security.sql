-- Per-user isolation of the read models (issue 10). Whoever can reach PostgreSQL must not be
-- able to read every user's memories:
--
--   memstream_reader     services' reads. Sees only the rows of the user named by the
--                        transaction-local setting memstream.user_id (projections/reader.py
--                        sets it per call). No setting, no rows. Reads nothing without a
--                        user_id column (offsets, migrations).
--   memstream_projector  writes every row, for a projector that does not run as the owner.
--
-- The owner (who runs the migrations and, by default, the projector) is not subject to the
-- policies: ENABLE, not FORCE, ROW LEVEL SECURITY. Both roles are NOLOGIN groups: grant them
-- to login roles (GRANT memstream_reader TO chat_backend). Roles belong to the cluster, so
-- they are created once and reused by every database that runs this migration.
DO $roles$
DECLARE
    role_name text;
BEGIN
    FOREACH role_name IN ARRAY ARRAY['memstream_reader', 'memstream_projector'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = role_name) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', role_name);
            EXCEPTION
                WHEN duplicate_object OR unique_violation THEN
                    NULL;  -- another database's migration created it at the same moment
                WHEN insufficient_privilege THEN
                    RAISE EXCEPTION 'role % does not exist and % may not create roles', role_name, current_user
                        USING HINT = 'create it once as a superuser (CREATE ROLE memstream_reader NOLOGIN; '
                            'CREATE ROLE memstream_projector NOLOGIN), or list both under the '
                            'CloudNativePG Cluster''s spec.managed.roles, then run `memstream migrate` again';
            END;
        END IF;
    END LOOP;
END
$roles$;

-- Every table keyed by user, whichever migration created it: the layer tables,
-- memory_links, sessions, user_profiles, consolidation_reports and consolidation_log.
DO $policies$
DECLARE
    target regclass;
BEGIN
    FOR target IN
        SELECT c.oid::regclass
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid
        WHERE n.nspname = current_schema()
          AND c.relkind IN ('r', 'p')
          AND a.attname = 'user_id'
          AND NOT a.attisdropped
        ORDER BY c.relname
    LOOP
        EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', target);
        -- NULLIF: after a SET LOCAL ends, the setting reads as '' (not NULL) for the rest of
        -- the session; neither matches a user.
        EXECUTE format(
            'CREATE POLICY memstream_reader_own_rows ON %s FOR SELECT TO memstream_reader '
            'USING (user_id = NULLIF(current_setting(''memstream.user_id'', true), ''''))',
            target);
        EXECUTE format(
            'CREATE POLICY memstream_projector_all_rows ON %s FOR ALL TO memstream_projector '
            'USING (true) WITH CHECK (true)',
            target);
        EXECUTE format('GRANT SELECT ON %s TO memstream_reader', target);
    END LOOP;

    EXECUTE format('GRANT USAGE ON SCHEMA %I TO memstream_reader, memstream_projector',
                   current_schema());
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I '
                   'TO memstream_projector', current_schema());
    -- Tables of later migrations: the projector may write them; the reader gets nothing until
    -- a migration gives the table a policy and a grant (fail closed).
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I '
                   'GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO memstream_projector',
                   current_schema());
END
$policies$;
