-- Who said a memory, by name (the contract's `speaker`, docs/analytics.md: "Caroline"); null when the contract's
-- `created_by` (user | agent | system) says who. Nullable with no default, so adding it only
-- changes the catalog: existing rows read as null, as their ledger events (written before
-- the field existed) decode, and a replay into empty tables gives the same rows.
ALTER TABLE working_memories    ADD COLUMN speaker text;
ALTER TABLE semantic_facts      ADD COLUMN speaker text;
ALTER TABLE episodic_events     ADD COLUMN speaker text;
ALTER TABLE procedural_patterns ADD COLUMN speaker text;
