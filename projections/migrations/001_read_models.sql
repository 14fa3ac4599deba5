-- Read models of the memory ledger (docs/read-models.md). Every row here is derived from
-- memory.consolidation and can be rebuilt by replaying it into empty tables, so no column
-- holds a wall-clock value: all times come from the events.
CREATE EXTENSION IF NOT EXISTS vector;

-- The four per-layer tables share one shape (the memory contract: docs/analytics.md, 'The contract').
CREATE TABLE working_memories (
    user_id            text        NOT NULL,
    memory_id          text        NOT NULL,
    version            bigint      NOT NULL,
    kind               text        NOT NULL,
    subtype            text,
    content            text        NOT NULL,
    tags               text[]      NOT NULL DEFAULT '{}',
    importance         double precision NOT NULL,
    confidence         double precision NOT NULL,
    emotional_salience double precision NOT NULL,
    valence            double precision NOT NULL,
    priority           text        NOT NULL,
    scope              text        NOT NULL,
    scope_id           text,
    created_by         text        NOT NULL,
    consent            boolean     NOT NULL,
    pinned             boolean     NOT NULL DEFAULT false,
    conversation_id    text,
    session_id         text,
    success            double precision,
    trigger_conditions text[]      NOT NULL DEFAULT '{}',
    embedding          vector({embedding_dim}),
    metadata           jsonb       NOT NULL DEFAULT '{}',
    created_at         timestamptz NOT NULL,
    last_accessed      timestamptz,
    access_count       integer     NOT NULL DEFAULT 0,
    valid_at           timestamptz,
    invalid_at         timestamptz,
    status             text        NOT NULL DEFAULT 'active',
    PRIMARY KEY (user_id, memory_id)
);
CREATE TABLE semantic_facts      (LIKE working_memories INCLUDING ALL);
CREATE TABLE episodic_events     (LIKE working_memories INCLUDING ALL);
CREATE TABLE procedural_patterns (LIKE working_memories INCLUDING ALL);

CREATE INDEX working_memories_embedding_hnsw    ON working_memories    USING hnsw (embedding vector_cosine_ops);
CREATE INDEX semantic_facts_embedding_hnsw      ON semantic_facts      USING hnsw (embedding vector_cosine_ops);
CREATE INDEX episodic_events_embedding_hnsw     ON episodic_events     USING hnsw (embedding vector_cosine_ops);
CREATE INDEX procedural_patterns_embedding_hnsw ON procedural_patterns USING hnsw (embedding vector_cosine_ops);

CREATE TABLE memory_links (
    user_id     text        NOT NULL,
    source_id   text        NOT NULL,
    target_id   text        NOT NULL,
    link_type   text        NOT NULL
        CHECK (link_type IN ('supersedes', 'contradicts', 'derived_from', 'promoted_to', 'summarized_into')),
    confidence  double precision,
    created_at  timestamptz NOT NULL,
    event_id    text        NOT NULL,
    PRIMARY KEY (user_id, source_id, target_id, link_type)
);

CREATE TABLE sessions (
    user_id        text        NOT NULL,
    session_id     text        NOT NULL,
    started_at     timestamptz,
    last_event_at  timestamptz,
    ended_at       timestamptz,
    narrative_id   text,
    memory_count   integer     NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, session_id)
);

CREATE TABLE user_profiles (
    user_id            text PRIMARY KEY,
    profile_memory_id  text,
    identity_anchor    vector({embedding_dim}),
    drift              double precision,
    drift_level        text,
    updated_at         timestamptz
);

CREATE TABLE consolidation_reports (
    event_id           text PRIMARY KEY,
    user_id            text        NOT NULL,
    cycle_id           text        NOT NULL,
    trigger            text        NOT NULL,
    occurred_at        timestamptz NOT NULL,
    profile            text,
    processed          integer     NOT NULL,
    patterns           integer     NOT NULL,
    archived           integer     NOT NULL,
    contradictions     integer     NOT NULL,
    duplicates_merged  integer     NOT NULL,
    links_created      integer     NOT NULL,
    duration_ms        bigint      NOT NULL,
    warnings           text[]      NOT NULL DEFAULT '{}'
);

-- Audit of every ledger action (seed 003's log). Never holds memory content, so a
-- forgotten memory leaves only ids behind.
CREATE TABLE consolidation_log (
    event_id      text PRIMARY KEY,
    user_id       text        NOT NULL,
    occurred_at   timestamptz NOT NULL,
    causation_id  text        NOT NULL,
    cycle_id      text,
    trigger       text        NOT NULL,
    action        text        NOT NULL,
    memory_id     text,
    layer         text,
    version       bigint,
    kafka_partition integer   NOT NULL,
    kafka_offset  bigint      NOT NULL
);
CREATE INDEX consolidation_log_user ON consolidation_log (user_id, occurred_at);

-- Where each projector is in each ledger partition: written in the same transaction as the
-- rows, so a restart resumes exactly after the last applied batch.
CREATE TABLE projection_offsets (
    projector     text    NOT NULL,
    topic         text    NOT NULL,
    partition     integer NOT NULL,
    next_offset   bigint  NOT NULL,
    PRIMARY KEY (projector, topic, partition)
);
