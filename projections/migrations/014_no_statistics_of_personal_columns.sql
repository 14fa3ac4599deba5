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
    personal CONSTANT text[][] := ARRAY[
        ['working_memories', 'content'], ['working_memories', 'speaker'],
        ['working_memories', 'tags'], ['working_memories', 'metadata'],
        ['working_memories', 'trigger_conditions'], ['working_memories', 'embedding'],
        ['working_memories', 'tsv'],
        ['episodic_events', 'content'], ['episodic_events', 'speaker'],
        ['episodic_events', 'tags'], ['episodic_events', 'metadata'],
        ['episodic_events', 'trigger_conditions'], ['episodic_events', 'embedding'],
        ['episodic_events', 'tsv'],
        ['semantic_facts', 'content'], ['semantic_facts', 'speaker'],
        ['semantic_facts', 'tags'], ['semantic_facts', 'metadata'],
        ['semantic_facts', 'trigger_conditions'], ['semantic_facts', 'embedding'],
        ['semantic_facts', 'tsv'],
        ['procedural_patterns', 'content'], ['procedural_patterns', 'speaker'],
        ['procedural_patterns', 'tags'], ['procedural_patterns', 'metadata'],
        ['procedural_patterns', 'trigger_conditions'], ['procedural_patterns', 'embedding'],
        ['procedural_patterns', 'tsv'],
        ['user_profiles', 'identity_anchor'],
        ['consolidation_reports', 'warnings'],
        ['memstream_data_keys', 'wrapped_key'],
        ['memstream_memory_keys', 'wrapped_key']
    ];
    can_clear CONSTANT boolean := to_regprocedure(
        'pg_clear_attribute_stats(text,text,text,boolean)') IS NOT NULL;
    superuser CONSTANT boolean := (SELECT rolsuper FROM pg_roles WHERE rolname = current_user);
    left_behind text[] := '{}';
    i integer;
BEGIN
    FOR i IN 1 .. array_length(personal, 1) LOOP
        EXECUTE format(
            'ALTER TABLE %I ALTER COLUMN %I SET STATISTICS 0', personal[i][1], personal[i][2]
        );
        IF NOT EXISTS (
            SELECT 1 FROM pg_stats
            WHERE schemaname = current_schema() AND tablename = personal[i][1]
              AND attname = personal[i][2]
        ) THEN
            CONTINUE;
        END IF;
        IF can_clear THEN
            EXECUTE 'SELECT pg_clear_attribute_stats($1, $2, $3, $4)'
                USING current_schema(), personal[i][1], personal[i][2], false;
        ELSIF superuser THEN
            DELETE FROM pg_statistic
            WHERE starelid = format('%I', personal[i][1])::regclass
              AND staattnum = (SELECT attnum FROM pg_attribute
                               WHERE attrelid = format('%I', personal[i][1])::regclass
                                 AND attname = personal[i][2]);
        ELSE
            left_behind := left_behind || (personal[i][1] || '.' || personal[i][2]);
        END IF;
    END LOOP;
    IF cardinality(left_behind) > 0 THEN
        RAISE NOTICE 'statistics sampled from personal columns before this migration are still '
            'in pg_statistic (%): as a superuser, delete their rows from pg_statistic, then '
            'VACUUM FULL pg_statistic', array_to_string(left_behind, ', ');
    END IF;
END
$$;
