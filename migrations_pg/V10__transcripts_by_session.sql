-- V10: every version of a session's transcripts by the session (see the SQLite store's
-- V13): the only index on `session_id` was partial (live versions), so look-ups that take
-- superseded versions too, and the cascade of a session's delete, read the whole table.
CREATE INDEX idx_transcripts_session ON transcripts(session_id);
