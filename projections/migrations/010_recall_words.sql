-- Recall's words, stored and indexed (issue 39).
--
-- Until now the hybrid recall (projections/queries.py) ran to_tsvector over every one of the
-- user's memories at each query, and BM25's corpus statistics over all of them: ~10 ms per
-- 1,000 memories, half a second at 50,000. From here on each layer table keeps
--
--   tsv      the memory's words as recall reads them: to_tsvector('english', left(content,
--            100000)) (projections.queries.MEMORY_CHARS), a stored generated column, so
--            PostgreSQL computes it on every write, COPY included, and the projector sends
--            nothing more;
--   lexemes  its length (distinct lexemes: BM25's document length), stored beside it for the
--            corpus statistics. A generated column may not read another one, hence the same
--            expression again.
--
-- and two indexes: GIN on tsv, so a query reads only the rows holding one of its words, and
-- (user_id) INCLUDE (lexemes, status, invalid_at), so a user's memory count and mean length
-- come from an index-only scan instead of the rows. The GIN index's pending list is kept
-- small (gin_pending_list_limit, kB): the insert that finds it full merges it into the index,
-- inside a projector transaction, and a 4 MB list (the default) made that one transaction
-- hundreds of milliseconds late.
--
-- memory_links gets an index by target: a forget deletes the links into the forgotten
-- memory (projections/writer.py), and lineage reads the links into a memory.
--
-- An existing database is backfilled here: ADD COLUMN ... STORED rewrites each table and
-- computes the columns for every row, under an ACCESS EXCLUSIVE lock (the projector waits;
-- readers too). On a large database run `memstream migrate` in a quiet moment.
--
-- Row-level security is per table (migrations 004, 008), so the new columns and indexes are
-- covered by the policies already there. Idempotent: every statement may run again.

ALTER TABLE working_memories
    ADD COLUMN IF NOT EXISTS tsv tsvector
        GENERATED ALWAYS AS (to_tsvector('english'::regconfig, left(content, 100000))) STORED,
    ADD COLUMN IF NOT EXISTS lexemes integer
        GENERATED ALWAYS AS (length(to_tsvector('english'::regconfig, left(content, 100000)))) STORED;
ALTER TABLE episodic_events
    ADD COLUMN IF NOT EXISTS tsv tsvector
        GENERATED ALWAYS AS (to_tsvector('english'::regconfig, left(content, 100000))) STORED,
    ADD COLUMN IF NOT EXISTS lexemes integer
        GENERATED ALWAYS AS (length(to_tsvector('english'::regconfig, left(content, 100000)))) STORED;
ALTER TABLE semantic_facts
    ADD COLUMN IF NOT EXISTS tsv tsvector
        GENERATED ALWAYS AS (to_tsvector('english'::regconfig, left(content, 100000))) STORED,
    ADD COLUMN IF NOT EXISTS lexemes integer
        GENERATED ALWAYS AS (length(to_tsvector('english'::regconfig, left(content, 100000)))) STORED;
ALTER TABLE procedural_patterns
    ADD COLUMN IF NOT EXISTS tsv tsvector
        GENERATED ALWAYS AS (to_tsvector('english'::regconfig, left(content, 100000))) STORED,
    ADD COLUMN IF NOT EXISTS lexemes integer
        GENERATED ALWAYS AS (length(to_tsvector('english'::regconfig, left(content, 100000)))) STORED;

CREATE INDEX IF NOT EXISTS working_memories_tsv    ON working_memories    USING gin (tsv) WITH (gin_pending_list_limit = 256);
CREATE INDEX IF NOT EXISTS episodic_events_tsv     ON episodic_events     USING gin (tsv) WITH (gin_pending_list_limit = 256);
CREATE INDEX IF NOT EXISTS semantic_facts_tsv      ON semantic_facts      USING gin (tsv) WITH (gin_pending_list_limit = 256);
CREATE INDEX IF NOT EXISTS procedural_patterns_tsv ON procedural_patterns USING gin (tsv) WITH (gin_pending_list_limit = 256);

CREATE INDEX IF NOT EXISTS working_memories_lexemes    ON working_memories    (user_id) INCLUDE (lexemes, status, invalid_at);
CREATE INDEX IF NOT EXISTS episodic_events_lexemes     ON episodic_events     (user_id) INCLUDE (lexemes, status, invalid_at);
CREATE INDEX IF NOT EXISTS semantic_facts_lexemes      ON semantic_facts      (user_id) INCLUDE (lexemes, status, invalid_at);
CREATE INDEX IF NOT EXISTS procedural_patterns_lexemes ON procedural_patterns (user_id) INCLUDE (lexemes, status, invalid_at);

CREATE INDEX IF NOT EXISTS memory_links_target ON memory_links (user_id, target_id);
