//! The embedded migrations, per-connection settings, and the schema version policy.

use crate::error::{Error, Result};
use rusqlite::{Connection, OptionalExtension};
use std::path::Path;
use std::time::Duration;

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// How long a connection waits for another writer before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Settings every connection gets, reader or writer.
///
/// # Errors
/// Fails when SQLite rejects a pragma.
pub fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Sorting and temporary tables stay in memory: the data set is the database itself.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    Ok(())
}

/// Settings of the pool's read connections, on top of [`configure`].
///
/// # Errors
/// Fails when SQLite rejects a pragma.
pub fn configure_reader(conn: &Connection) -> rusqlite::Result<()> {
    configure(conn)?;
    // Pages of the database file are read through a memory map instead of a `pread` and
    // a copy each: `messages` of a 4 MB session spent a fifth of its time copying them.
    // SQLite lowers the size to its compile-time maximum (2 GB in the bundled build).
    conn.pragma_update(None, "mmap_size", READ_MAP_BYTES)?;
    Ok(())
}

/// How much of the database file a reader maps (see [`configure_reader`]).
pub const READ_MAP_BYTES: i64 = 1 << 40;

/// WAL pages between the writer's own checkpoints, when no [`crate::checkpoint::Checkpointer`]
/// runs (SQLite's default).
pub const WAL_AUTOCHECKPOINT: i64 = 1000;

/// The size a WAL that one large transaction grew past is cut back to, in bytes: about what
/// import lets it grow to between two waits for its checkpointer.
pub const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// Settings of the one write connection, on top of [`configure`].
///
/// # Errors
/// Fails when SQLite rejects a pragma.
pub fn configure_writer(conn: &Connection) -> rusqlite::Result<()> {
    // 64 MiB of page cache: the b-tree paths and tail pages that every per-file
    // transaction touches stay in memory instead of being re-read from the WAL.
    conn.pragma_update(None, "cache_size", -65536)?;
    conn.pragma_update(None, "wal_autocheckpoint", WAL_AUTOCHECKPOINT)?;
    // A WAL that one large transaction grew is cut back after the next checkpoint. Not
    // smaller: re-growing a truncated WAL costs more than it saves.
    conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
    Ok(())
}

/// The newest migration this binary embeds, as (version, name).
pub fn newest_known() -> (i64, String) {
    embedded::migrations::runner()
        .get_migrations()
        .iter()
        .map(|m| (i64::from(m.version()), m.name().to_owned()))
        .max()
        .expect("at least one migration is embedded")
}

/// Refuses a database that holds a migration this binary does not know. Runs before any
/// statement that could modify the file, so a refused database is left untouched.
///
/// # Errors
/// [`Error::SchemaTooNew`] for a database from a newer sessiondb.
pub fn check_version(conn: &Connection, path: &Path) -> Result<()> {
    let has_history: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'refinery_schema_history')",
        [],
        |row| row.get(0),
    )?;
    if !has_history {
        return Ok(());
    }
    let newest: Option<(i64, String)> = conn
        .query_row(
            "SELECT version, name FROM refinery_schema_history ORDER BY version DESC LIMIT 1",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?;
    let (known, _) = newest_known();
    match newest {
        Some((found, name)) if found > known => Err(Error::SchemaTooNew {
            path: path.to_owned(),
            found,
            name,
            known,
        }),
        _ => Ok(()),
    }
}

/// Applies the migrations this database lacks, each in its own transaction.
///
/// # Errors
/// Fails when a migration fails or a shipped migration was edited after it was applied.
pub fn migrate(conn: &mut Connection) -> Result<()> {
    embedded::migrations::runner()
        .set_abort_divergent(true)
        .set_abort_missing(true)
        .run(conn)
        .map_err(|e| Error::Migration(e.to_string()))?;
    Ok(())
}
