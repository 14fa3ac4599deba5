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
