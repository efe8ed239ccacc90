//! The embedded migrations, per-connection settings, and the schema version policy.

use crate::error::{Error, Result};
use rusqlite::types::Value;
use rusqlite::Connection;
use std::path::Path;
use std::time::Duration;

/// A migration shipped in `migrations/`: `V<version>__<name>.sql`, embedded by the build
/// script. Its checksum is refinery's (SipHash-1-3 of name, version and SQL), which the
/// history table of every database made so far records.
#[derive(Debug, Clone, Copy)]
struct Migration {
    version: i32,
    name: &'static str,
    sql: &'static str,
    /// [`Migration::checksum`], computed by the build script (hashing 25 KB of SQL was a
    /// seventieth of a process that lists one session).
    built_checksum: Option<u64>,
}

/// The shipped migrations, oldest first, with their checksums (written by `tools/build.rs`).
const SHIPPED: &[(i32, &str, &str, Option<u64>)] =
    include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

impl Migration {
    fn version(&self) -> i32 {
        self.version
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn sql(&self) -> &'static str {
        self.sql
    }

    /// refinery's checksum: it hashes the name as a `String`, the version as its `i32`
    /// and the SQL as a `str`, in that order.
    fn checksum(&self) -> u64 {
        self.built_checksum
            .unwrap_or_else(|| self.computed_checksum())
    }

    /// [`Migration::checksum`] computed here.
    fn computed_checksum(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = siphasher::sip::SipHasher13::new();
        self.name.hash(&mut hasher);
        self.version.hash(&mut hasher);
        self.sql.hash(&mut hasher);
        hasher.finish()
    }
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
    // Lines may be stored compressed (V14): `line(raw, dict)` reads them.
    crate::codec::sql::register(conn)?;
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
    embedded()
        .last()
        .map(|m| (i64::from(m.version()), m.name().to_owned()))
        .expect("at least one migration is embedded")
}

/// The table in which applied migrations are recorded (refinery's name and layout, so that
/// databases made before sessiondb ran its own migrations keep their history).
const HISTORY: &str = "refinery_schema_history";

/// Refuses a database that holds a migration this binary does not know, and a file that is
/// SQLite but not sessiondb's. Runs before any statement that could modify the file, so a
/// refused database is left untouched. Returns the migrations the database records, read
/// once (see [`Recorded::needs_migration`]).
///
/// # Errors
/// [`Error::SchemaTooNew`] for a database from a newer sessiondb, [`Error::NotADatabase`]
/// for a file that is not a sessiondb database.
pub fn check_version(conn: &Connection, path: &Path) -> Result<Recorded> {
    let (has_history, objects): (bool, i64) = conn
        .query_row(
            &format!(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{HISTORY}'),
                        (SELECT count(*) FROM sqlite_master)"
            ),
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .map_err(|e| open_error(e, path))?;
    if !has_history {
        return if objects == 0 {
            Ok(Recorded(Vec::new()))
        } else {
            Err(Error::NotADatabase {
                path: path.to_owned(),
            })
        };
    }
    let recorded: Vec<(i64, Value)> = conn
        .prepare(&format!(
            "SELECT version, checksum FROM {HISTORY} ORDER BY version"
        ))?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let (known, _) = newest_known();
    match recorded.last() {
        Some(&(found, _)) if found > known => {
            let name = conn.query_row(
                &format!("SELECT name FROM {HISTORY} WHERE version = ?1"),
                [found],
                |row| row.get(0),
            )?;
            Err(Error::SchemaTooNew {
                path: path.to_owned(),
                found,
                name,
                known,
            })
        }
        _ => Ok(Recorded(recorded)),
    }
}

/// The migrations a database records, as [`check_version`] read them: (version, checksum).
#[derive(Debug)]
pub struct Recorded(Vec<(i64, Value)>);

impl Recorded {
    /// Whether the database lacks a migration, or records one that differs from the shipped
    /// file (as [`needs_migration`], without reading the database again).
    pub fn needs_migration(&self) -> bool {
        let shipped = embedded();
        self.0.len() != shipped.len()
            || shipped.iter().zip(&self.0).any(|(m, (version, checksum))| {
                i64::from(m.version()) != *version
                    || !matches!(checksum, Value::Text(c) if *c == m.checksum().to_string())
            })
    }
}

/// The error SQLite gave while opening or first reading `path`, as one that names the cause.
pub fn open_error(e: rusqlite::Error, path: &Path) -> Error {
    use rusqlite::ErrorCode;
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => Error::NotADatabase {
            path: path.to_owned(),
        },
        Some(ErrorCode::CannotOpen) => Error::CannotOpen {
            path: path.to_owned(),
            reason: "SQLite cannot open the file or create its journal beside it".to_owned(),
        },
        Some(ErrorCode::ReadOnly) => Error::ReadOnly {
            path: path.to_owned(),
            reason: "the database is read-only".to_owned(),
        },
        _ => Error::from(e),
    }
}

/// The embedded migrations, oldest first.
fn embedded() -> Vec<Migration> {
    SHIPPED
        .iter()
        .map(|&(version, name, sql, built_checksum)| Migration {
            version,
            name,
            sql,
            built_checksum,
        })
        .collect()
}

/// A migration as recorded in the database: (version, name, checksum).
type Applied = (i64, String, String);

fn applied(conn: &Connection) -> rusqlite::Result<Vec<Applied>> {
    let exists: bool = conn.query_row(
        &format!("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{HISTORY}')"),
        [],
        |r| r.get(0),
    )?;
    if !exists {
        return Ok(Vec::new());
    }
    conn.prepare(&format!(
        "SELECT version, name, checksum FROM {HISTORY} ORDER BY version"
    ))?
    .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
    .collect()
}

/// Whether the database lacks a migration, or records one that differs from the shipped file.
///
/// # Errors
/// Fails on a database error.
pub fn needs_migration(conn: &Connection) -> Result<bool> {
    let applied = applied(conn)?;
    let shipped = embedded();
    Ok(applied.len() != shipped.len()
        || shipped
            .iter()
            .zip(&applied)
            .any(|(m, (version, _, checksum))| {
                i64::from(m.version()) != *version || m.checksum().to_string() != *checksum
            }))
}

/// Migrations as they were shipped before migrations were frozen: a database made by one of
/// those commits records the old checksum. Each entry is (version, old checksum, the SQL that
/// brings that version's objects to what the shipped file creates, run after the missing
/// migrations). Differences left alone: V1 before d20f901 stored `rows.raw` before the
/// projected columns, which only costs speed. Tested with a database made by each of those
/// commits (`tests/fixtures/db/`).
const EARLIER: &[(i64, u64, &str)] = &[
    // cbf4ca5: V1 without the sourceToolAssistantUUID index.
    (
        1,
        17_730_093_299_264_767_103,
        "CREATE INDEX IF NOT EXISTS idx_rows_transcript_source_tool
             ON rows(transcript_id, source_tool_assistant_uuid)
             WHERE source_tool_assistant_uuid IS NOT NULL;",
    ),
    // d05e3da: `raw` before the projected columns.
    (1, 12_036_762_059_476_941_262, ""),
    // d43de72: a search view that left out rows without text (replaced below), and FTS5's
    // default merge settings.
    (3, 12_677_323_122_629_565_691, FTS_SETTINGS),
    // c1fdd5e: FTS5's default merge settings.
    (3, 8_189_676_935_175_676_030, FTS_SETTINGS),
];

/// The FTS5 settings V3 has held since 0969a5f.
const FTS_SETTINGS: &str = "
    INSERT INTO rows_fts (rows_fts, rank) VALUES ('hashsize', 67108864);
    INSERT INTO rows_fts (rows_fts, rank) VALUES ('automerge', 16);
    INSERT INTO rows_fts (rows_fts, rank) VALUES ('crisismerge', 64);";

/// Brings a database made before migrations were frozen to what the shipped migrations make:
/// the search view of the newest shipped migration that defines it (V14: it reads
/// compressed lines; V3's, restored here before, read neither those nor V9's cap), the
/// full-text index rebuilt from it (the old view's index does not match the new view's
/// deletes), and every catalog row recomputed by today's rules.
fn rebuild_derived(tx: &rusqlite::Transaction<'_>, shipped: &[Migration]) -> Result<()> {
    let view = shipped
        .iter()
        .rev()
        .map(|m| m.sql())
        .find_map(|sql| {
            let start = sql.find("CREATE VIEW search_source")?;
            sql[start..].find(';').map(|end| &sql[start..=start + end])
        })
        .ok_or_else(|| Error::Migration("no migration holds the search_source view".to_owned()))?;
    tx.execute_batch(&format!(
        "DROP VIEW IF EXISTS search_source;
         {view}
         INSERT INTO rows_fts (rows_fts) VALUES ('delete-all');
         DELETE FROM search_pending;
         INSERT INTO rows_fts (rowid, body, tools) SELECT id, body, tools FROM search_source;"
    ))?;
    let keys: Vec<i64> = tx
        .prepare("SELECT id FROM sessions ORDER BY id")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for key in keys {
        crate::catalog::refresh_session(tx, key)?;
    }
    Ok(())
}

/// The migration that adds the usage projection: applied to a database that holds lines, it
/// is filled from them by Rust code (`usage::sqlite::rebuild`) in the same transaction.
const USAGE_MIGRATION: i64 = 12;

/// Applies the migrations this database lacks, all in one IMMEDIATE transaction: a process
/// that opens a new database at the same time waits for the first one and then finds every
/// migration applied (each used to create the same tables and fail). A migration recorded
/// with the checksum of an earlier shipped version is brought up to date (see [`EARLIER`]).
/// Returns how many migrations were applied.
///
/// # Errors
/// Fails when a migration fails, when the database records a migration this binary does not
/// ship, or one that was changed in a way no shipped version was.
pub fn migrate(conn: &mut Connection, path: &Path) -> Result<usize> {
    if !needs_migration(conn)? {
        return Ok(0);
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS {HISTORY} (
             version INT4 PRIMARY KEY,
             name VARCHAR(255),
             applied_on VARCHAR(255),
             checksum VARCHAR(255))"
    ))?;
    let shipped = embedded();
    let recorded = applied(&tx)?;
    let mut fixups = Vec::new();
    for (version, name, checksum) in &recorded {
        let Some(m) = shipped.iter().find(|m| i64::from(m.version()) == *version) else {
            return Err(Error::Migration(format!(
                "{} records migration V{version} ({name}), which this sessiondb does not ship",
                path.display()
            )));
        };
        let current = m.checksum().to_string();
        if *checksum == current {
            continue;
        }
        let Some((_, _, fixup)) = EARLIER
            .iter()
            .find(|(v, old, _)| v == version && old.to_string() == *checksum)
        else {
            return Err(Error::Migration(format!(
                "{} records migration V{version} ({name}) with checksum {checksum}, which no \
                 shipped sessiondb had (this one ships {current})",
                path.display()
            )));
        };
        fixups.push(*fixup);
        tx.execute(
            &format!("UPDATE {HISTORY} SET checksum = ?1 WHERE version = ?2"),
            rusqlite::params![current, version],
        )?;
    }
    let now = crate::time::format_ms(crate::time::now_ms());
    let mut count = 0;
    let mut fill_usage = false;
    for m in &shipped {
        let version = i64::from(m.version());
        if recorded.iter().any(|(v, _, _)| *v == version) {
            continue;
        }
        tx.execute_batch(m.sql())
            .map_err(|e| Error::Migration(format!("V{version} ({}): {e}", m.name())))?;
        tx.execute(
            &format!("INSERT INTO {HISTORY} (version, name, applied_on, checksum) VALUES (?1, ?2, ?3, ?4)"),
            rusqlite::params![version, m.name(), now, m.checksum().to_string()],
        )?;
        count += 1;
        // Filled once every migration is applied: it reads lines as the newest schema
        // stores them (V14).
        fill_usage |= version == USAGE_MIGRATION;
    }
    if fill_usage {
        crate::usage::sqlite::rebuild(&tx)?;
    }
    if !fixups.is_empty() {
        for fixup in &fixups {
            tx.execute_batch(fixup)?;
        }
        rebuild_derived(&tx, &shipped)?;
    }
    tx.commit()?;
    Ok(count)
}

#[cfg(test)]
mod tests {
    mod by_refinery {
        refinery::embed_migrations!("migrations");
    }

    /// The table the build script embeds is what refinery embedded before it: the same
    /// migrations, names and checksums (databases record those checksums).
    #[test]
    fn embedded_migrations_match_refinery() {
        let mut theirs = by_refinery::migrations::runner().get_migrations().clone();
        theirs.sort_by_key(|m| m.version());
        let ours = super::embedded();
        assert_eq!(ours.len(), theirs.len());
        for (o, t) in ours.iter().zip(&theirs) {
            assert_eq!(o.version(), t.version());
            assert_eq!(o.name(), t.name());
            assert_eq!(Some(o.sql()), t.sql());
            assert_eq!(o.checksum(), t.checksum(), "V{}", o.version());
            assert_eq!(o.computed_checksum(), t.checksum(), "V{}", o.version());
        }
    }
}
