-- V13: every version of a session's transcripts by the session. The only index on
-- `session_id` was partial (live versions, `superseded_at IS NULL`), so a look-up that
-- takes superseded versions too (`info`'s locations, counts, a session's delete and its
-- cascade) read the whole table: a cost that grew with the store, not with the session.
CREATE INDEX idx_transcripts_session ON transcripts(session_id);
