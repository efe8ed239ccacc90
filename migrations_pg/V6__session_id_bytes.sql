-- Finding a session by the id a user typed (`resolve_session`: every verb that names a
-- session) compared `sessions.session_id` to it with no index to use: the unique index of
-- V1 leads with the project, so each lookup read the whole sessions table (9 ms for 10,000
-- sessions under load, the largest step of `resume --api` on a cold connection). The id
-- compared by its bytes, as the catalog's V5 index does, serves both the exact match and
-- the prefix match (`starts_with` uses a btree index only in the "C" collation).
CREATE INDEX idx_sessions_session_id_bytes ON sessions (session_id COLLATE "C");
