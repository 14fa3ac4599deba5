-- Salience as last computed by a consolidation cycle (decay, archive decisions).
ALTER TABLE working_memories    ADD COLUMN salience double precision;
ALTER TABLE semantic_facts      ADD COLUMN salience double precision;
ALTER TABLE episodic_events     ADD COLUMN salience double precision;
ALTER TABLE procedural_patterns ADD COLUMN salience double precision;
