-- Keep a memory row whole in its heap page up to 8,160 bytes instead of TOASTing it past
-- 2,032 (PostgreSQL's default toast_tuple_target). A row carries its embedding: 1,544 bytes
-- at 384 dimensions, so a row with a few hundred characters of text, tags and metadata
-- crossed the default. PostgreSQL then compressed the text columns and, the row still too
-- large, moved the embedding (pgvector's storage is external) to the TOAST table: a second
-- heap insert and index insert per row on write, and a detoast per row for every per-user
-- recall scan. On the bench's ledger every semantic_facts row (2,104 bytes) was TOASTed; a
-- raw COPY of the projector's rows ran ~10 % faster with this setting (32.6k -> 36.3k ledger
-- events/s, three runs each). Rows larger than a page's worth are still TOASTed as before.
-- Applies to rows written from now on.
ALTER TABLE working_memories    SET (toast_tuple_target = 8160);
ALTER TABLE semantic_facts      SET (toast_tuple_target = 8160);
ALTER TABLE episodic_events     SET (toast_tuple_target = 8160);
ALTER TABLE procedural_patterns SET (toast_tuple_target = 8160);
