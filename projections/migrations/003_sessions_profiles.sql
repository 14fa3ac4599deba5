-- Sessions and their narratives (seed 002), the procedural profile and identity drift
-- (seeds 004, 002): the columns the consolidation engine II projects.
ALTER TABLE sessions ADD COLUMN conversation_id   text;
ALTER TABLE sessions ADD COLUMN status            text NOT NULL DEFAULT 'active';
ALTER TABLE sessions ADD COLUMN end_reason        text;
ALTER TABLE sessions ADD COLUMN compression_ratio double precision;
ALTER TABLE sessions ADD COLUMN char_ratio        double precision;
CREATE INDEX sessions_status ON sessions (user_id, status);

ALTER TABLE user_profiles ADD COLUMN profile_version bigint;
ALTER TABLE user_profiles ADD COLUMN drift_measured_at timestamptz;

-- Salience is derived (docs/consolidation.md, 'The decision ladder and the profiles': decay): cycles no longer write it per memory, the
-- report counts the decayed memories, and queries compute current salience with this
-- function (the same formula as streams/engine/salience.py).
ALTER TABLE consolidation_reports ADD COLUMN decayed integer NOT NULL DEFAULT 0;

CREATE FUNCTION memstream_salience(
    importance double precision,
    access_count integer,
    last_touched timestamptz,
    at timestamptz,
    half_life_seconds double precision DEFAULT 604800,
    access_reinforcement double precision DEFAULT 0.1
) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT LEAST(1.0, importance + access_reinforcement * access_count)
           * power(0.5, GREATEST(0, extract(epoch FROM at - last_touched)) / half_life_seconds)
$$;
