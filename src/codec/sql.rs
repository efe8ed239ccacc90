//! SQLite's side of compressed lines: the SQL functions every connection gets, so that the
//! search view (`search_source`, V14) and every `SELECT` of a line read the original bytes
//! as `line(raw, dict)`, and the `dictionaries` table.
//!
//! `line(raw, dict)` returns `raw` itself when `dict` is NULL, else the decoded line;
//! `line_len(raw, dict)` its original length without decoding (the frame header holds it).
//! A line that cannot be decoded (damaged on disk, or a dictionary that is gone) comes back
//! as its stored bytes, so that the line's checksum names it as damaged where a reader
//! checks it (export, resume, `check`), instead of a whole statement failing.

use super::{remember, unpack, unpacked_len, Unpack};
use crate::error::Result;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::cell::RefCell;

/// The newest dictionary of a store, with what tells when to train the next.
#[derive(Debug, Clone)]
pub struct Stored {
    /// Its id (the XXH3-64 of its bytes).
    pub id: i64,
    /// The dictionary.
    pub bytes: Vec<u8>,
    /// The largest `rows.id` when it was stored.
    pub rows_before: i64,
    /// How many lines it was trained on.
    pub sample_lines: i64,
}

/// Registers `line` and `line_len` on `conn`. Called for every connection the store opens
/// ([`crate::schema::configure`]); a tool that opens the file itself (the `sqlite3` shell,
/// a test) calls this to read `rows` or the search index.
///
/// # Errors
/// Fails when SQLite refuses the function.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8
        | FunctionFlags::SQLITE_DETERMINISTIC
        | FunctionFlags::SQLITE_INNOCUOUS;
    let path = conn.path().filter(|p| !p.is_empty()).map(str::to_owned);
    let for_len = path.clone();
    conn.create_scalar_function("line", 2, flags, move |ctx| line(ctx, path.as_deref()))?;
    conn.create_scalar_function("line_len", 2, flags, move |ctx| {
        line_len(ctx, for_len.as_deref())
    })?;
    Ok(())
}

/// A line decoded: its dictionary, its stored bytes and the line.
type Decoded = (i64, Vec<u8>, Vec<u8>);

thread_local! {
    /// The last line decoded on this thread: the search view names `raw` several times
    /// per row, and each is one call.
    static LAST: RefCell<Option<Decoded>> = const { RefCell::new(None) };
}

fn line(ctx: &Context<'_>, path: Option<&str>) -> rusqlite::Result<Value> {
    let stored = match ctx.get_raw(0) {
        ValueRef::Blob(b) => b,
        ValueRef::Text(t) => t,
        ValueRef::Null => return Ok(Value::Null),
        ValueRef::Integer(i) => return Ok(Value::Integer(i)),
        ValueRef::Real(f) => return Ok(Value::Real(f)),
    };
    let ValueRef::Integer(dict) = ctx.get_raw(1) else {
        return Ok(Value::Blob(stored.to_vec()));
    };
    let hit = LAST.with(|last| {
        last.borrow()
            .as_ref()
            .filter(|(d, s, _)| *d == dict && s.as_slice() == stored)
            .map(|(_, _, out)| out.clone())
    });
    if let Some(out) = hit {
        return Ok(Value::Blob(out));
    }
    match decode(dict, stored, path) {
        Some(out) => {
            LAST.with(|last| *last.borrow_mut() = Some((dict, stored.to_vec(), out.clone())));
            Ok(Value::Blob(out))
        }
        None => Ok(Value::Blob(stored.to_vec())),
    }
}

fn line_len(ctx: &Context<'_>, path: Option<&str>) -> rusqlite::Result<Value> {
    let stored = match ctx.get_raw(0) {
        ValueRef::Blob(b) => b,
        ValueRef::Text(t) => t,
        ValueRef::Null => return Ok(Value::Null),
        other => {
            return Ok(Value::Integer(
                other.as_bytes().map_or(0, <[u8]>::len) as i64
            ))
        }
    };
    let ValueRef::Integer(dict) = ctx.get_raw(1) else {
        return Ok(Value::Integer(stored.len() as i64));
    };
    let len = match unpacked_len(stored) {
        Some(len) => len as usize,
        None => decode(dict, stored, path).map_or(stored.len(), |out| out.len()),
    };
    Ok(Value::Integer(len as i64))
}

/// The line, loading the store's dictionaries when this one is not known yet (another
/// process trained it after this one opened the store).
fn decode(dict: i64, stored: &[u8], path: Option<&str>) -> Option<Vec<u8>> {
    match unpack(dict, stored) {
        Ok(out) => Some(out),
        Err(Unpack::Damaged) => None,
        Err(Unpack::NoDictionary(_)) => {
            load_from_file(path?);
            unpack(dict, stored).ok()
        }
    }
}

/// Loads every dictionary of the database file at `path` on a connection of its own (a
/// function cannot use the connection that calls it). Dictionaries are committed before any
/// row names them, so the file has every one a committed row names; those this process
/// stored itself are known already ([`super::Packer::new`]).
fn load_from_file(path: &str) {
    let open = |name: &str, flags: OpenFlags| -> rusqlite::Result<()> {
        let conn = Connection::open_with_flags(name, flags)?;
        load_all(&conn)
    };
    let ro = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if open(path, ro).is_err() {
        // A read-only folder where no -shm can be made: read the file as it is.
        let uri = format!("file:{path}?immutable=1");
        let _ = open(&uri, ro | OpenFlags::SQLITE_OPEN_URI);
    }
}

/// Makes the dictionaries of the store that this process does not know yet known through
/// `conn`, the connection about to read lines: `line` would otherwise load them on a
/// connection of its own, which first reads the store's schema again (a tenth of the
/// instructions of `resume --api` on a long session). A store without the table (or any
/// other error) is left to `line`.
pub fn preload(conn: &Connection) {
    let missing = || -> rusqlite::Result<Vec<i64>> {
        let mut stmt = conn.prepare_cached("SELECT id FROM dictionaries")?;
        let ids = stmt.query_map([], |r| r.get::<_, i64>(0))?;
        let mut missing = Vec::new();
        for id in ids {
            let id = id?;
            if !super::knows(id) {
                missing.push(id);
            }
        }
        Ok(missing)
    };
    for id in missing().unwrap_or_default() {
        let _ = conn
            .prepare_cached("SELECT bytes FROM dictionaries WHERE id = ?1")
            .and_then(|mut stmt| {
                stmt.query_row([id], |r| {
                    remember(id, r.get_ref(0)?.as_blob()?);
                    Ok(())
                })
            });
    }
}

/// Makes every dictionary of the store known to this process.
///
/// # Errors
/// Fails on a database error.
pub fn load_all(conn: &Connection) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare("SELECT id, bytes FROM dictionaries")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        if !super::knows(id) {
            remember(id, row.get_ref(1)?.as_blob()?);
        }
    }
    Ok(())
}

/// The store's newest dictionary.
///
/// # Errors
/// Fails on a database error.
pub fn newest(conn: &Connection) -> Result<Option<Stored>> {
    Ok(conn
        .prepare_cached(
            "SELECT id, bytes, rows_before, sample_lines FROM dictionaries
             ORDER BY rows_before DESC, rowid DESC LIMIT 1",
        )?
        .query_row([], |r| {
            Ok(Stored {
                id: r.get(0)?,
                bytes: r.get(1)?,
                rows_before: r.get(2)?,
                sample_lines: r.get(3)?,
            })
        })
        .optional()?)
}

/// The largest `rows.id` (0 for an empty store): how many lines a store has held, cheaply.
///
/// # Errors
/// Fails on a database error.
pub fn last_row(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("SELECT coalesce(max(id), 0) FROM rows", [], |r| r.get(0))?)
}

/// Whether a new dictionary is due: there is none, or many more lines were stored since the
/// newest was trained than it was trained on.
pub fn due(newest: Option<&Stored>, last_row: i64, tuning: &super::Tuning) -> bool {
    newest.is_none_or(|d| last_row - d.rows_before > tuning.retrain_factor * d.sample_lines.max(1))
}

/// Stores a dictionary trained on `sample_lines` lines (nothing when it is there already).
/// In its own transaction or the one of the first rows that name it: a row never names a
/// dictionary that is not stored.
///
/// # Errors
/// Fails on a database error.
pub fn store(conn: &Connection, bytes: &[u8], sample_lines: i64) -> Result<i64> {
    let id = super::dictionary_id(bytes);
    remember(id, bytes);
    conn.prepare_cached(
        "INSERT OR IGNORE INTO dictionaries (id, bytes, rows_before, sample_lines)
         VALUES (?1, ?2, (SELECT coalesce(max(id), 0) FROM rows), ?3)",
    )?
    .execute(params![id, bytes, sample_lines])?;
    Ok(id)
}
