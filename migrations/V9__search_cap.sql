-- V9: a bounded amount of text per line in the full-text index. A line longer than 8 MiB
-- (8388608 bytes) is no longer taken apart with SQLite's JSON functions, which held several
-- copies of it in memory for every index update and every search snippet (a 100 MB line made
-- `search` take 6 s and 1.8 GB): its first 64 KiB (65536 bytes) of JSON text is indexed as
-- its `body` instead, and its `tools` are NULL. Shorter lines are indexed as before.
-- `search::MAX_PARSED_LINE` and `search::INDEXED_PREFIX` in the code are these numbers.

-- Lines already indexed under the old rule leave the index with the text they were indexed
-- with (the old view computes it), and come back under the new rule.
CREATE TABLE v9_reindexed AS
    SELECT r.id AS id FROM rows r
    WHERE length(r.raw) > 8388608 AND r.type IN ('user', 'assistant') AND r.status = 0
      AND r.is_meta = 0 AND NOT EXISTS (SELECT 1 FROM search_pending p WHERE p.row_id = r.id);

INSERT INTO rows_fts (rows_fts, rowid, body, tools)
    SELECT 'delete', s.id, s.body, s.tools FROM v9_reindexed v
    CROSS JOIN search_source s ON s.id = v.id;

DROP VIEW search_source;

CREATE VIEW search_source AS
    SELECT r.id AS id,
        CASE WHEN length(r.raw) > 8388608 THEN CAST(substr(r.raw, 1, 65536) AS TEXT)
        ELSE CASE json_type(CAST(r.raw AS TEXT), '$.message.content')
            WHEN 'text' THEN json_extract(CAST(r.raw AS TEXT), '$.message.content')
            WHEN 'array' THEN (
                SELECT group_concat(json_extract(e.value, '$.text'), char(10))
                FROM json_each(CAST(r.raw AS TEXT), '$.message.content') e
                WHERE e.type = 'object'
                  AND CASE WHEN e.type = 'object' THEN json_extract(e.value, '$.type') END = 'text')
        END END AS body,
        CASE WHEN length(r.raw) > 8388608 THEN NULL
        ELSE CASE json_type(CAST(r.raw AS TEXT), '$.message.content')
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
        END END AS tools
    FROM rows r
    WHERE r.type IN ('user', 'assistant') AND r.status = 0 AND r.is_meta = 0
      AND (length(r.raw) > 8388608 OR json_valid(CAST(r.raw AS TEXT)));

INSERT INTO rows_fts (rowid, body, tools)
    SELECT s.id, s.body, s.tools FROM v9_reindexed v CROSS JOIN search_source s ON s.id = v.id;

DROP TABLE v9_reindexed;
