-- Vector search is per user (docs/read-models.md, 'Tables and how they are written'): a user's rows are found by the primary key
-- (user_id, memory_id) and ranked by exact cosine distance, which is exact (100 % recall) and
-- fast up to tens of thousands of memories per user. A global HNSW index over every user's
-- rows is the wrong index for that (it post-filters by user) and caps ingest at pgvector's
-- HNSW insert rate (about 500 rows/s measured here, against 43,000 rows/s without it), so it
-- is opt-in: MEMSTREAM_VECTOR_INDEX=hnsw (projections/schema.py) for cross-user scopes or very
-- large users.
DROP INDEX IF EXISTS working_memories_embedding_hnsw;
DROP INDEX IF EXISTS semantic_facts_embedding_hnsw;
DROP INDEX IF EXISTS episodic_events_embedding_hnsw;
DROP INDEX IF EXISTS procedural_patterns_embedding_hnsw;
