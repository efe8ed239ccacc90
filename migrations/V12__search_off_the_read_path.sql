-- V12: what only writing and searching need leaves the schema that every connection parses.
-- SQLite parses the whole schema when a connection first uses it; the `search_source` view
-- (its JSON expressions) and the four `rows_fts_*` triggers were a quarter of that parse,
-- and a process that lists sessions or shows one never uses them.
--
-- The view keeps its name, its columns and its rows (FTS5 reads `main.search_source` for
-- snippets: `content = 'search_source'` in V3), but its two text columns are computed by the
-- functions `sessiondb_search_body` and `sessiondb_search_tools`, which sessiondb registers
-- on every connection (`search_source::register`); they give exactly what V9's expressions
-- gave, so the index built before this migration stays valid. A connection without them
-- cannot read the view (SQLite says "no such function"), so it cannot index or unindex a
-- line with a wrong text.
--
-- The triggers are no longer part of the database: sessiondb creates them, unchanged, as
-- TEMP triggers of a connection before its first write (`search_source::install_triggers`,
-- called by `Store::write`, through which every write of sessiondb goes), so readers never
-- parse them. Another program that changes `rows` must create them first (or run
-- `sessiondb reindex` after); `sessiondb check` reports an index that fell behind.
DROP TRIGGER rows_fts_insert;
DROP TRIGGER rows_fts_delete;
DROP TRIGGER rows_fts_update_old;
DROP TRIGGER rows_fts_update_new;

DROP VIEW search_source;

CREATE VIEW search_source AS
    SELECT r.id AS id,
        sessiondb_search_body(r.raw) AS body,
        sessiondb_search_tools(r.raw) AS tools
    FROM rows r
    WHERE r.type IN ('user', 'assistant') AND r.status = 0 AND r.is_meta = 0
      AND (length(r.raw) > 8388608 OR json_valid(CAST(r.raw AS TEXT)));
