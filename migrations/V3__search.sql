-- V3: full-text search over what users and assistants wrote, kept current by triggers so
-- that every import, append and delete maintains it in the same transaction.

-- The searchable text of each user/assistant record, computed from the stored line:
-- `body` = the prompt or reply (a string content, or the text blocks), `tools` = tool calls
-- (name and input JSON) and tool results (string content or text blocks); NULL when there
-- is none (filtering those rows out here would evaluate the JSON functions twice). A view,
-- so the index stores no second copy of the text.
CREATE VIEW search_source AS
    SELECT r.id AS id,
        CASE json_type(CAST(r.raw AS TEXT), '$.message.content')
            WHEN 'text' THEN json_extract(CAST(r.raw AS TEXT), '$.message.content')
            WHEN 'array' THEN (
                SELECT group_concat(json_extract(e.value, '$.text'), char(10))
                FROM json_each(CAST(r.raw AS TEXT), '$.message.content') e
                WHERE e.type = 'object'
                  AND CASE WHEN e.type = 'object' THEN json_extract(e.value, '$.type') END = 'text')
        END AS body,
        CASE json_type(CAST(r.raw AS TEXT), '$.message.content')
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
                    FROM json_each(CAST(r.raw AS TEXT), '$.message.content') e))
        END AS tools
    FROM rows r
    WHERE r.type IN ('user', 'assistant') AND r.status = 0 AND r.is_meta = 0
      AND json_valid(CAST(r.raw AS TEXT));

-- The index. unicode61 with diacritics removed: word tokens in any script (transcripts are
-- multilingual), "cafe" finds "café", BM25 ranks whole words, and the index is several
-- times smaller than a trigram one. No stemmer: code identifiers and non-English text
-- would be mangled by Porter.
CREATE VIRTUAL TABLE rows_fts USING fts5(
    body, tools,
    content = 'search_source', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

-- New lines are indexed as they are stored (import, append, the record API).
CREATE TRIGGER rows_fts_insert AFTER INSERT ON rows
WHEN new.type IN ('user', 'assistant') AND new.status = 0 AND new.is_meta = 0
BEGIN
    INSERT INTO rows_fts (rowid, body, tools)
        SELECT id, body, tools FROM search_source WHERE id = new.id;
END;

-- Removed lines (delete, a re-read open tail) leave the index before they go, while the
-- text they were indexed with can still be computed.
CREATE TRIGGER rows_fts_delete BEFORE DELETE ON rows
WHEN old.type IN ('user', 'assistant') AND old.status = 0 AND old.is_meta = 0
BEGIN
    INSERT INTO rows_fts (rows_fts, rowid, body, tools)
        SELECT 'delete', id, body, tools FROM search_source WHERE id = old.id;
END;

-- A line rewritten in place leaves the index with its old text and comes back with the new.
CREATE TRIGGER rows_fts_update_old BEFORE UPDATE OF raw, type, status, is_meta ON rows
WHEN old.type IN ('user', 'assistant') AND old.status = 0 AND old.is_meta = 0
BEGIN
    INSERT INTO rows_fts (rows_fts, rowid, body, tools)
        SELECT 'delete', id, body, tools FROM search_source WHERE id = old.id;
END;

CREATE TRIGGER rows_fts_update_new AFTER UPDATE OF raw, type, status, is_meta ON rows
WHEN new.type IN ('user', 'assistant') AND new.status = 0 AND new.is_meta = 0
BEGIN
    INSERT INTO rows_fts (rowid, body, tools)
        SELECT id, body, tools FROM search_source WHERE id = new.id;
END;

-- Bulk indexing (`search::index_pending` indexes the queue in one transaction): FTS5 keeps up
-- to 64 MB of pending terms in memory before it writes a segment (1 MB by default), and
-- merges 16 segments of a level at a time (4 by default), so the index's pages are
-- rewritten fewer times.
INSERT INTO rows_fts (rows_fts, rank) VALUES ('hashsize', 67108864);
INSERT INTO rows_fts (rows_fts, rank) VALUES ('automerge', 16);
INSERT INTO rows_fts (rows_fts, rank) VALUES ('crisismerge', 64);
