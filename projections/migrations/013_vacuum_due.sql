-- Forgotten rows waiting for their vacuum (issue 43; docs/security.md, "What stays").
--
-- A deleted row's bytes stay in its table's files until VACUUM (FULL) rewrites the table, and
-- a rewrite locks the table. The projector therefore vacuums a user's erasure at once, but lets
-- forgotten memories wait up to MEMSTREAM_ERASURE_VACUUM_DELAY_SECONDS, so that the forgets of
-- that window share one rewrite instead of locking the read models after every batch. Each
-- batch that deleted something personal adds a row here in its own transaction; whichever
-- projector vacuums deletes the rows it saw before vacuuming. So a projector that stops (or
-- crashes) before the vacuum leaves the debt written down, and every projector looks for
-- such debts every 5-60 s and pays them.
-- Nothing personal is kept: an id and a time.
--
-- Who may do what: the owner and memstream_projector every row; nobody else anything.
--
-- Idempotent: every statement may run again.

CREATE TABLE IF NOT EXISTS memstream_vacuum_due (
    id        bigserial   PRIMARY KEY,
    erased_at timestamptz NOT NULL DEFAULT statement_timestamp()
);

REVOKE ALL ON memstream_vacuum_due FROM PUBLIC;
GRANT SELECT, INSERT, DELETE ON memstream_vacuum_due TO memstream_projector;
GRANT USAGE ON SEQUENCE memstream_vacuum_due_id_seq TO memstream_projector;
