-- The listing's order as `sessions` asks for it: ids compared by their bytes (COLLATE "C",
-- as the SQLite store orders them). The index of V1 compared ids in the database's own
-- collation, so it could not give that order, and every `sessions --limit N` sorted the
-- whole catalog; with this one the first rows are read from the index.
DROP INDEX IF EXISTS idx_catalog_last_modified;
CREATE INDEX idx_catalog_listing ON catalog (last_modified DESC, session_id COLLATE "C" DESC);
