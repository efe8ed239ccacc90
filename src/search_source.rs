//! What the full-text index needs that readers do not: the searchable text of a stored line
//! as two SQL functions (the `search_source` view calls them), and the triggers that queue
//! and unindex lines as `rows` changes. Migration V12 took both out of the schema that SQLite
//! parses when any connection opens (they were a quarter of that parse).
//!
//! - [`register`] adds `sessiondb_search_body(raw)` and `sessiondb_search_tools(raw)` to a
//!   connection ([`crate::schema::configure`] does, for every connection of a store). They
//!   give what migration V9's view expressions gave for the same value: the text of a line
//!   that [`crate::jsonl::search_text`] can compute (the fast path import already indexes
//!   with), and otherwise V9's expressions themselves, run by SQLite on the value alone.
//! - [`install_triggers`] creates the four `rows_fts_*` triggers of migration V6, unchanged,
//!   as TEMP triggers of a connection; [`crate::store::Store`] does before a connection's
//!   first write.

use crate::jsonl::search_text;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, ToSql};
use std::sync::Mutex;

/// The SQL function that gives a line's `body` column.
pub const BODY_FUNCTION: &str = "sessiondb_search_body";

/// The SQL function that gives a line's `tools` column.
pub const TOOLS_FUNCTION: &str = "sessiondb_search_tools";

/// Migration V9's two column expressions of the `search_source` view, with the stored line
/// (`r.raw` there) as the parameter `?1`: one row of two unnamed columns, `body` and
/// `tools`. What the functions compute is held to these (tests compare them on the corpus).
pub const V9_COLUMNS: &str = "SELECT
    CASE WHEN length(?1) > 8388608 THEN CAST(substr(?1, 1, 65536) AS TEXT)
    ELSE CASE json_type(CAST(?1 AS TEXT), '$.message.content')
        WHEN 'text' THEN json_extract(CAST(?1 AS TEXT), '$.message.content')
        WHEN 'array' THEN (
            SELECT group_concat(json_extract(e.value, '$.text'), char(10))
            FROM json_each(CAST(?1 AS TEXT), '$.message.content') e
            WHERE e.type = 'object'
              AND CASE WHEN e.type = 'object' THEN json_extract(e.value, '$.type') END = 'text')
    END END,
    CASE WHEN length(?1) > 8388608 THEN NULL
    ELSE CASE json_type(CAST(?1 AS TEXT), '$.message.content')
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
                FROM json_each(CAST(?1 AS TEXT), '$.message.content') e))
    END END";

/// The four triggers of migration V6, as TEMP triggers of the connection that runs this.
/// Unqualified names in a TEMP trigger's body find the `main` tables and view.
const TRIGGERS: &str = "
CREATE TEMP TRIGGER IF NOT EXISTS rows_fts_insert AFTER INSERT ON main.rows
WHEN new.type IN ('user', 'assistant') AND new.status = 0 AND new.is_meta = 0
BEGIN
    INSERT OR IGNORE INTO search_pending (row_id) VALUES (new.id);
END;

CREATE TEMP TRIGGER IF NOT EXISTS rows_fts_delete BEFORE DELETE ON main.rows
WHEN old.type IN ('user', 'assistant') AND old.status = 0 AND old.is_meta = 0
BEGIN
    INSERT INTO rows_fts (rows_fts, rowid, body, tools)
        SELECT 'delete', id, body, tools FROM search_source
        WHERE id = old.id AND NOT EXISTS (SELECT 1 FROM search_pending WHERE row_id = old.id);
    DELETE FROM search_pending WHERE row_id = old.id;
END;

CREATE TEMP TRIGGER IF NOT EXISTS rows_fts_update_old
BEFORE UPDATE OF raw, type, status, is_meta ON main.rows
WHEN old.type IN ('user', 'assistant') AND old.status = 0 AND old.is_meta = 0
BEGIN
    INSERT INTO rows_fts (rows_fts, rowid, body, tools)
        SELECT 'delete', id, body, tools FROM search_source
        WHERE id = old.id AND NOT EXISTS (SELECT 1 FROM search_pending WHERE row_id = old.id);
    DELETE FROM search_pending WHERE row_id = old.id;
END;

CREATE TEMP TRIGGER IF NOT EXISTS rows_fts_update_new
AFTER UPDATE OF raw, type, status, is_meta ON main.rows
WHEN new.type IN ('user', 'assistant') AND new.status = 0 AND new.is_meta = 0
BEGIN
    INSERT OR IGNORE INTO search_pending (row_id) VALUES (new.id);
END;";

/// The names of [`TRIGGERS`].
const TRIGGER_NAMES: &str =
    "'rows_fts_insert', 'rows_fts_delete', 'rows_fts_update_old', 'rows_fts_update_new'";

/// Creates the index's triggers on `conn` unless it has them: a write through a connection
/// without them would leave the full-text index behind. Run outside a transaction, so that
/// a write that rolls back does not take them away.
///
/// # Errors
/// Fails on a database error.
pub fn install_triggers(conn: &Connection) -> rusqlite::Result<()> {
    let present: i64 = conn
        .prepare_cached(&format!(
            "SELECT count(*) FROM temp.sqlite_schema
             WHERE type = 'trigger' AND name IN ({TRIGGER_NAMES})"
        ))?
        .query_row([], |r| r.get(0))?;
    if present < 4 {
        conn.execute_batch(TRIGGERS)?;
    }
    Ok(())
}

/// Adds [`BODY_FUNCTION`] and [`TOOLS_FUNCTION`] to `conn`. Deterministic and innocuous:
/// the view in the schema may call them even where the schema is not trusted.
///
/// # Errors
/// Fails when SQLite refuses the functions.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8
        | FunctionFlags::SQLITE_DETERMINISTIC
        | FunctionFlags::SQLITE_INNOCUOUS;
    conn.create_scalar_function(BODY_FUNCTION, 1, flags, column(Column::Body))?;
    conn.create_scalar_function(TOOLS_FUNCTION, 1, flags, column(Column::Tools))?;
    Ok(())
}

#[derive(Clone, Copy)]
enum Column {
    Body,
    Tools,
}

/// One column's function. The lines [`search_text`] leaves to SQLite are computed by V9's
/// expressions on a private in-memory connection, opened on first need (a reader that never
/// reads the view opens none).
fn column(which: Column) -> impl Fn(&Context<'_>) -> rusqlite::Result<Computed> + Send + 'static {
    let private: Mutex<Option<Connection>> = Mutex::new(None);
    move |ctx| {
        let raw = ctx.get_raw(0);
        if let ValueRef::Text(bytes) | ValueRef::Blob(bytes) = raw {
            if let Some(text) = search_text(bytes) {
                let part = match which {
                    Column::Body => text.body,
                    Column::Tools => text.tools,
                };
                return Ok(part.map_or(Computed::Value(Value::Null), |s| {
                    Computed::Text(s.into_bytes())
                }));
            }
        }
        let mut slot = private.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(Connection::open_in_memory()?);
        }
        let conn = slot.as_ref().expect("opened above");
        let index = match which {
            Column::Body => 0,
            Column::Tools => 1,
        };
        let computed = conn
            .prepare_cached(V9_COLUMNS)?
            .query_row([ToSqlOutput::Borrowed(raw)], |r| {
                Ok(Computed::from(r.get_ref(index)?))
            });
        computed
    }
}

/// A function's result: text is kept as SQLite's bytes (a lone surrogate escape in a line
/// gives text that is not UTF-8, which the index takes as it is).
enum Computed {
    Text(Vec<u8>),
    Value(Value),
}

impl From<ValueRef<'_>> for Computed {
    fn from(v: ValueRef<'_>) -> Self {
        match v {
            ValueRef::Text(t) => Computed::Text(t.to_vec()),
            ValueRef::Null => Computed::Value(Value::Null),
            ValueRef::Integer(i) => Computed::Value(Value::Integer(i)),
            ValueRef::Real(f) => Computed::Value(Value::Real(f)),
            ValueRef::Blob(b) => Computed::Value(Value::Blob(b.to_vec())),
        }
    }
}

impl ToSql for Computed {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Computed::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t)),
            Computed::Value(v) => ToSqlOutput::Borrowed(v.into()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value with its type, text as bytes.
    fn typed(v: ValueRef<'_>) -> (rusqlite::types::Type, Vec<u8>) {
        let bytes = match v {
            ValueRef::Text(t) | ValueRef::Blob(t) => t.to_vec(),
            ValueRef::Null => Vec::new(),
            ValueRef::Integer(i) => i.to_string().into_bytes(),
            ValueRef::Real(f) => f.to_string().into_bytes(),
        };
        (v.data_type(), bytes)
    }

    /// Both ways of computing a column agree, and each function gives what V9's expression
    /// gives, for lines the fast path takes and lines it leaves to SQLite.
    #[test]
    fn functions_give_what_the_v9_expressions_give() {
        let conn = Connection::open_in_memory().expect("open");
        register(&conn).expect("register");
        let lines: &[&[u8]] = &[
            br#"{"type":"user","message":{"role":"user","content":"hello world"}}"#,
            br#"{"type":"assistant","message":{"content":[{"type":"text","text":"a"},{"type":"tool_use","name":"Bash","input":{"command":"ls -l"}},{"type":"text","text":"b"}]}}"#,
            br#"{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"text","text":"out"},{"type":"image"}]}]}}"#,
            // A duplicate key and an escaped key: left to SQLite.
            br#"{"type":"user","message":{"content":"one","content":"two"}}"#,
            br#"{"type":"user","message":{"con\u0074ent":"escaped"}}"#,
            // A lone surrogate: text that is not UTF-8.
            br#"{"type":"user","message":{"content":"x \ud800 y"}}"#,
            br#"{"type":"user","message":{"content":[{"type":"text","text":42}]}}"#,
            br#"{"type":"user"}"#,
            b"not json",
        ];
        for line in lines {
            for blob in [true, false] {
                let value: Value = if blob {
                    Value::Blob(line.to_vec())
                } else {
                    match std::str::from_utf8(line) {
                        Ok(s) => Value::Text(s.to_owned()),
                        Err(_) => continue,
                    }
                };
                // Invalid JSON is an error both ways (the view never passes it).
                let both = |sql: &str| {
                    conn.query_row(sql, [&value], |r| {
                        Ok((typed(r.get_ref(0)?), typed(r.get_ref(1)?)))
                    })
                    .map_err(|e| e.to_string())
                };
                let ours = both("SELECT sessiondb_search_body(?1), sessiondb_search_tools(?1)");
                let theirs = both(V9_COLUMNS);
                assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(line));
            }
        }
    }
}
