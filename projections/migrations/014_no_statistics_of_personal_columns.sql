-- No planner statistics of personal columns (issue 43; docs/security.md, "What stays").
--
-- ANALYZE (autovacuum's, in its own time) samples every column into pg_statistic, and its most
-- common values and histogram bounds are copies of the column's values: for the columns below,
-- a user's memories in plain text, their names, embeddings and words, and wrapped keys that
-- still open with a living key (a forgotten memory's key under its user's key; an erased
-- user's key under the master key). An erasure deletes and vacuums the rows, never those
-- copies, so a scan of the database's files found a forgotten memory's wrapped key in
-- pg_statistic once autovacuum had sampled it.
--
-- A statistics target of 0 keeps ANALYZE away from these columns. No query plans on them:
-- reads select by user, memory, layer, status and time, similarity goes through the vector
-- index and words through the full-text index (whose selectivity is then PostgreSQL's default
-- estimate). Statistics gathered before this migration are cleared: by pg_clear_attribute_stats
-- (PostgreSQL 18, the table's owner), else by a superuser, else a NOTICE says what to run. A
-- cleared row's bytes stay in pg_statistic's dead tuples until that catalog is vacuumed (its
-- owner, the superuser: VACUUM FULL pg_statistic), which this migration cannot do.
--
-- Idempotent: every statement may run again.

DO $$
DECLARE
    can_clear CONSTANT boolean := to_regprocedure(
        'pg_clear_attribute_stats(text,text,text,boolean)') IS NOT NULL;
    superuser CONSTANT boolean := (SELECT rolsuper FROM pg_roles WHERE rolname = current_user);
    left_behind text[] := '{}';
    personal record;
BEGIN
    FOR personal IN
        SELECT layer AS tbl, field AS col
        FROM unnest(ARRAY['working_memories', 'episodic_events', 'semantic_facts',
                          'procedural_patterns']) AS layer,
             unnest(ARRAY['content', 'speaker', 'tags', 'metadata', 'trigger_conditions',
                          'embedding', 'tsv']) AS field
        UNION ALL
        VALUES ('user_profiles', 'identity_anchor'), ('consolidation_reports', 'warnings'),
               ('memstream_data_keys', 'wrapped_key'), ('memstream_memory_keys', 'wrapped_key')
    LOOP
        EXECUTE format(
            'ALTER TABLE %I ALTER COLUMN %I SET STATISTICS 0', personal.tbl, personal.col
        );
        IF NOT EXISTS (
            SELECT 1 FROM pg_stats
            WHERE schemaname = current_schema() AND tablename = personal.tbl
              AND attname = personal.col
        ) THEN
            CONTINUE;
        END IF;
        IF can_clear THEN
            PERFORM pg_clear_attribute_stats(current_schema(), personal.tbl, personal.col, false);
        ELSIF superuser THEN
            DELETE FROM pg_statistic
            WHERE starelid = format('%I', personal.tbl)::regclass
              AND staattnum = (SELECT attnum FROM pg_attribute
                               WHERE attrelid = format('%I', personal.tbl)::regclass
                                 AND attname = personal.col);
        ELSE
            left_behind := left_behind || (personal.tbl || '.' || personal.col);
        END IF;
    END LOOP;
    IF cardinality(left_behind) > 0 THEN
        RAISE NOTICE 'statistics sampled from personal columns before this migration are still '
            'in pg_statistic (%): as a superuser, delete their rows from pg_statistic, then '
            'VACUUM FULL pg_statistic', array_to_string(left_behind, ', ');
    END IF;
END
$$;
