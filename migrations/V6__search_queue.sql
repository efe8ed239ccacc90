-- V6: FTS5 flushes its pending terms to disk at every statement savepoint, so indexing from a
-- per-line trigger cost one flush (and merges) per stored line: import ran 4x slower. Lines
-- are now queued by the trigger and indexed in one statement per write transaction
-- (`search::index_pending`, run by every catalog refresh).

-- Lines stored but not yet in rows_fts.
CREATE TABLE search_pending (row_id INTEGER PRIMARY KEY);

DROP TRIGGER rows_fts_insert;
DROP TRIGGER rows_fts_delete;
DROP TRIGGER rows_fts_update_old;
DROP TRIGGER rows_fts_update_new;

-- A new searchable line is queued.
CREATE TRIGGER rows_fts_insert AFTER INSERT ON rows
WHEN new.type IN ('user', 'assistant') AND new.status = 0 AND new.is_meta = 0
BEGIN
    INSERT OR IGNORE INTO search_pending (row_id) VALUES (new.id);
END;

-- A removed line leaves the index (if it got there) while its text can still be computed.
CREATE TRIGGER rows_fts_delete BEFORE DELETE ON rows
WHEN old.type IN ('user', 'assistant') AND old.status = 0 AND old.is_meta = 0
BEGIN
    INSERT INTO rows_fts (rows_fts, rowid, body, tools)
        SELECT 'delete', id, body, tools FROM search_source
        WHERE id = old.id AND NOT EXISTS (SELECT 1 FROM search_pending WHERE row_id = old.id);
    DELETE FROM search_pending WHERE row_id = old.id;
END;

-- A line rewritten in place leaves the index with its old text and is queued again.
CREATE TRIGGER rows_fts_update_old BEFORE UPDATE OF raw, type, status, is_meta ON rows
WHEN old.type IN ('user', 'assistant') AND old.status = 0 AND old.is_meta = 0
BEGIN
    INSERT INTO rows_fts (rows_fts, rowid, body, tools)
        SELECT 'delete', id, body, tools FROM search_source
        WHERE id = old.id AND NOT EXISTS (SELECT 1 FROM search_pending WHERE row_id = old.id);
    DELETE FROM search_pending WHERE row_id = old.id;
END;

CREATE TRIGGER rows_fts_update_new AFTER UPDATE OF raw, type, status, is_meta ON rows
WHEN new.type IN ('user', 'assistant') AND new.status = 0 AND new.is_meta = 0
BEGIN
    INSERT OR IGNORE INTO search_pending (row_id) VALUES (new.id);
END;
