-- The catalog's orders as the verbs ask for them: ids compared by their bytes (COLLATE "C",
-- as the SQLite store orders them). The indexes of V1 compare ids in the database's own
-- collation, so they could give neither the listing's order (every `sessions --limit N`
-- sorted the whole catalog) nor an id's neighbours (`neighbour_ids`, which the sessions
-- table asks for, read the whole catalog); with these both are read from an index.
DROP INDEX IF EXISTS idx_catalog_last_modified;
CREATE INDEX idx_catalog_listing ON catalog (last_modified DESC, session_id COLLATE "C" DESC);
CREATE INDEX idx_catalog_session_id_bytes ON catalog (session_id COLLATE "C");
