-- V14: compressed lines (issue 30, src/codec). A line may be stored as a zstd frame made
-- against a dictionary trained on the store's own lines; `rows.dict` names the dictionary
-- and is NULL for a line stored as it came (every line before this migration, and lines too
-- small or incompressible). Checksums stay over the original bytes. Readers get those back
-- through the SQL function `line(raw, dict)` (and `line_len(raw, dict)` for the length),
-- which sessiondb registers on every connection (`codec::sql::register`).

-- One row per trained dictionary, never deleted while a line names it (the foreign key).
-- `id` is the XXH3-64 of `bytes`; `rows_before` the largest rows.id when it was stored and
-- `sample_lines` how many lines it was trained on: together they say when to train again.
CREATE TABLE dictionaries (
    id            INTEGER PRIMARY KEY,
    bytes         BLOB NOT NULL,
    rows_before   INTEGER NOT NULL,
    sample_lines  INTEGER NOT NULL
);

ALTER TABLE rows ADD COLUMN dict INTEGER REFERENCES dictionaries(id);

-- The search view reads the original line.
DROP VIEW search_source;

CREATE VIEW search_source AS
    SELECT r.id AS id,
        CASE WHEN line_len(r.raw, r.dict) > 8388608 THEN CAST(substr(line(r.raw, r.dict), 1, 65536) AS TEXT)
        ELSE CASE json_type(CAST(line(r.raw, r.dict) AS TEXT), '$.message.content')
            WHEN 'text' THEN json_extract(CAST(line(r.raw, r.dict) AS TEXT), '$.message.content')
            WHEN 'array' THEN (
                SELECT group_concat(json_extract(e.value, '$.text'), char(10))
                FROM json_each(CAST(line(r.raw, r.dict) AS TEXT), '$.message.content') e
                WHERE e.type = 'object'
                  AND CASE WHEN e.type = 'object' THEN json_extract(e.value, '$.type') END = 'text')
        END END AS body,
        CASE WHEN line_len(r.raw, r.dict) > 8388608 THEN NULL
        ELSE CASE json_type(CAST(line(r.raw, r.dict) AS TEXT), '$.message.content')
            WHEN 'array' THEN (
                SELECT group_concat(t, char(10)) FROM (
                    SELECT CASE WHEN e.type = 'object' THEN
                        CASE json_extract(e.value, '$.type')
                            WHEN 'tool_use' THEN
                                coalesce(json_extract(e.value, '$.name'), '') || ' '
                                || coalesce(json_extract(e.value, '$.input'), '')
                            WHEN 'tool_result' THEN
                                CASE json_type(e.value, '$.content')
                                    WHEN 'text' THEN json_extract(e.value, '$.content')
                                    WHEN 'array' THEN (
                                        SELECT group_concat(
                                            CASE WHEN c.type = 'object'
                                                THEN json_extract(c.value, '$.text') END,
                                            char(10))
                                        FROM json_each(e.value, '$.content') c)
                                END
                        END
                    END AS t
                    FROM json_each(CAST(line(r.raw, r.dict) AS TEXT), '$.message.content') e))
        END END AS tools
    FROM rows r
    WHERE r.type IN ('user', 'assistant') AND r.status = 0 AND r.is_meta = 0
      AND (line_len(r.raw, r.dict) > 8388608 OR json_valid(CAST(line(r.raw, r.dict) AS TEXT)));

-- A line rewritten in place leaves the index and is queued again, unless only the way it is
-- stored changed (`sessiondb compact` compressing it): then its text is the same.
DROP TRIGGER rows_fts_update_old;
DROP TRIGGER rows_fts_update_new;

CREATE TRIGGER rows_fts_update_old BEFORE UPDATE OF raw, type, status, is_meta ON rows
WHEN old.type IN ('user', 'assistant') AND old.status = 0 AND old.is_meta = 0
  AND NOT (new.type IS old.type AND new.status = old.status AND new.is_meta = old.is_meta
           AND line(new.raw, new.dict) IS line(old.raw, old.dict))
BEGIN
    INSERT INTO rows_fts (rows_fts, rowid, body, tools)
        SELECT 'delete', id, body, tools FROM search_source
        WHERE id = old.id AND NOT EXISTS (SELECT 1 FROM search_pending WHERE row_id = old.id);
    DELETE FROM search_pending WHERE row_id = old.id;
END;

CREATE TRIGGER rows_fts_update_new AFTER UPDATE OF raw, type, status, is_meta ON rows
WHEN new.type IN ('user', 'assistant') AND new.status = 0 AND new.is_meta = 0
  AND NOT (new.type IS old.type AND new.status = old.status AND new.is_meta = old.is_meta
           AND line(new.raw, new.dict) IS line(old.raw, old.dict))
BEGIN
    INSERT OR IGNORE INTO search_pending (row_id) VALUES (new.id);
END;
