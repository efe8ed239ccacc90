//! The store: one SQLite file, opened in one of three ways.
//!
//! - [`Store::open`] creates the database when it is missing and keeps a pool of readers
//!   beside one writer: for the verbs that create (`import`, `append`, `serve`).
//! - [`Store::open_existing`] is the same on a database that must already exist: for the
//!   verbs that change one (`rename`, `tag`, `fork`, `delete`, `reindex`).
//! - [`Store::open_read`] opens an existing database with one connection, no pool and no
//!   thread, read-only when the file or its folder is: for the verbs that only read. A
//!   process that lists one session pays for one `open(2)` and a few page reads.
//!
//! None of them creates anything at a path that holds no database except [`Store::open`].

use crate::error::{Error, Result};
use crate::schema;
use r2d2::{Pool, PooledConnection};
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use std::io::Read;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A read connection: from the pool, or the single connection of a [`Store::open_read`]
/// store. Dereferences to a [`Connection`].
pub struct Reader<'a>(Lent<'a>);

enum Lent<'a> {
    Pooled(PooledConnection<SqliteConnectionManager>),
    /// The single connection, given back to its slot on drop (or a second one, when the
    /// first is already lent, dropped on drop).
    Single {
        conn: Option<Connection>,
        home: &'a Mutex<Option<Connection>>,
    },
}

impl Deref for Reader<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        match &self.0 {
            Lent::Pooled(c) => c,
            Lent::Single { conn, .. } => conn.as_ref().expect("a lent connection is present"),
        }
    }
}

impl DerefMut for Reader<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        match &mut self.0 {
            Lent::Pooled(c) => c,
            Lent::Single { conn, .. } => conn.as_mut().expect("a lent connection is present"),
        }
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        if let Lent::Single { conn, home } = &mut self.0 {
            let mut slot = home.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none() {
                *slot = conn.take();
            }
        }
    }
}

/// An open sessiondb database.
pub struct Store {
    path: PathBuf,
    access: Access,
}

enum Access {
    Pooled {
        pool: Pool<SqliteConnectionManager>,
        writer: Mutex<Connection>,
    },
    Single {
        slot: Mutex<Option<Connection>>,
        /// How to open another connection like the first.
        target: OpenTarget,
        /// Why writes are refused, when they are.
        read_only: Option<String>,
    },
}

/// What a [`Store::open_read`] connection opens: a file name or URI, with its flags.
#[derive(Clone)]
struct OpenTarget {
    name: String,
    flags: OpenFlags,
}

impl OpenTarget {
    fn open(&self) -> rusqlite::Result<Connection> {
        let conn = Connection::open_with_flags(&self.name, self.flags)?;
        schema::configure_reader(&conn)?;
        Ok(conn)
    }
}

impl Store {
    /// Opens (creating if needed) the database at `path`: parent folders are created, a new
    /// file gets mode 0600 (transcripts hold secrets), the journal is WAL and the embedded
    /// migrations are applied.
    ///
    /// # Errors
    /// Fails when the file cannot be created or opened, when it is read-only
    /// ([`Error::ReadOnly`]), not a sessiondb database ([`Error::NotADatabase`]), written by
    /// a newer sessiondb ([`Error::SchemaTooNew`], the file is left untouched), or when a
    /// migration fails.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref().to_owned();
        create_private_file(&path)?;
        Store::open_writable(path)
    }

    /// [`Store::open`] on a database that must exist: nothing is created at a path that
    /// holds none.
    ///
    /// # Errors
    /// [`Error::NoDatabase`] when there is no file; otherwise as [`Store::open`].
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Store> {
        Store::open_writable(path.as_ref().to_owned())
    }

    fn open_writable(path: PathBuf) -> Result<Store> {
        let probe = inspect(&path)?;
        if let Some(reason) = probe.read_only {
            return Err(Error::ReadOnly { path, reason });
        }
        let mut conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| schema::open_error(e, &path))?;
        conn.busy_timeout(schema::BUSY_TIMEOUT)?;
        schema::check_version(&conn, &path)?;
        let fresh: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        if fresh == 0 {
            // Measured faster than 4 KiB for transcript-sized rows; settable only while empty.
            conn.pragma_update(None, "page_size", 16384)?;
        }
        set_wal(&conn, &path)?;
        schema::configure(&conn)?;
        schema::configure_writer(&conn)?;
        schema::migrate(&mut conn, &path)?;
        // A database from before the catalog existed gets its rows once.
        crate::catalog::backfill(&mut conn)?;
        let manager = SqliteConnectionManager::file(&path)
            .with_flags(OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .with_init(|c| schema::configure_reader(c));
        let pool = Pool::builder()
            .max_size(8)
            .min_idle(Some(0))
            .build(manager)?;
        Ok(Store {
            path,
            access: Access::Pooled {
                pool,
                writer: Mutex::new(conn),
            },
        })
    }

    /// Opens an existing database for the verbs that read: one connection, no pool, no
    /// thread. When the file or its folder is read-only (by its permission bits, which hold
    /// even for root), the database is opened read-only and leaves no `-wal`/`-shm` behind
    /// (without a WAL to read, as an immutable file); writes then fail with
    /// [`Error::ReadOnly`]. A database from an older sessiondb is upgraded first when it
    /// can be written.
    ///
    /// # Errors
    /// [`Error::NoDatabase`] when there is no file (nothing is created),
    /// [`Error::CannotOpen`], [`Error::NotADatabase`], [`Error::SchemaTooNew`], or
    /// [`Error::ReadOnly`] for a read-only database that needs an upgrade.
    pub fn open_read(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref().to_owned();
        let probe = inspect(&path)?;
        if probe.empty {
            return Err(Error::NoDatabase { path });
        }
        let target = match &probe.read_only {
            None => OpenTarget {
                name: path.to_string_lossy().into_owned(),
                flags: OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            },
            Some(_) => {
                let wal = sidecar(&path, "-wal");
                // A WAL may hold committed pages that must be read through it; without one
                // the file is read as immutable, which needs no -shm and takes no locks.
                let immutable = !wal.exists();
                OpenTarget {
                    name: file_uri(&path, immutable),
                    flags: OpenFlags::SQLITE_OPEN_READ_ONLY
                        | OpenFlags::SQLITE_OPEN_URI
                        | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                }
            }
        };
        let mut conn = target.open().map_err(|e| schema::open_error(e, &path))?;
        if probe.read_only.is_none() {
            // Closing the last connection would copy the WAL into the file and delete it
            // (fsyncs, a truncate and two unlinks in a process that only read); the next
            // writer's checkpoints do that copy anyway.
            conn.set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                true,
            )?;
        }
        if schema::check_version(&conn, &path)?.needs_migration() {
            if let Some(reason) = &probe.read_only {
                return Err(Error::ReadOnly {
                    path,
                    reason: format!(
                        "it was made by an older sessiondb and needs an upgrade, but {reason}"
                    ),
                });
            }
            schema::migrate(&mut conn, &path)?;
            crate::catalog::backfill(&mut conn)?;
        }
        Ok(Store {
            path,
            access: Access::Single {
                slot: Mutex::new(Some(conn)),
                target,
                read_only: probe.read_only,
            },
        })
    }

    /// Opens the database for a short-lived process that makes one small write (hook
    /// capture): [`Store::open_read`]'s single connection, with no pool and no thread, here
    /// with the writer's settings. A pool costs its worker threads, and each connection
    /// reads the schema again; one import of a turn needs neither. A database that does not
    /// exist yet is created by [`Store::open`] (that happens once).
    ///
    /// # Errors
    /// As [`Store::open`]; [`Error::ReadOnly`] when the database can only be read.
    pub fn open_single(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        let store = match Store::open_read(path) {
            Err(Error::NoDatabase { .. }) => return Store::open(path),
            other => other?,
        };
        if let Some(reason) = store.read_only_reason() {
            return Err(Error::ReadOnly {
                path: path.to_owned(),
                reason: reason.to_owned(),
            });
        }
        store.on_writer(|conn| Ok(schema::configure_writer(conn)?))?;
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why writes to this store fail, when it was opened read-only.
    pub fn read_only_reason(&self) -> Option<&str> {
        match &self.access {
            Access::Single { read_only, .. } => read_only.as_deref(),
            Access::Pooled { .. } => None,
        }
    }

    /// A read connection.
    ///
    /// # Errors
    /// Fails when no connection can be opened.
    pub fn reader(&self) -> Result<Reader<'_>> {
        match &self.access {
            Access::Pooled { pool, .. } => Ok(Reader(Lent::Pooled(pool.get()?))),
            Access::Single { slot, target, .. } => {
                let lent = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
                let conn = match lent {
                    Some(conn) => conn,
                    None => target
                        .open()
                        .map_err(|e| schema::open_error(e, &self.path))?,
                };
                Ok(Reader(Lent::Single {
                    conn: Some(conn),
                    home: slot,
                }))
            }
        }
    }

    /// Sets how long a write waits for another process's write to finish before it fails
    /// (Store::open sets 10 s). Hook capture waits less: it must not hold Claude Code up,
    /// and the next capture catches up.
    ///
    /// # Errors
    /// Fails when SQLite rejects the setting.
    pub fn set_busy_timeout(&self, timeout: std::time::Duration) -> Result<()> {
        self.on_writer(|conn| Ok(conn.busy_timeout(timeout)?))
    }

    /// Whether closing the store copies the WAL into the database file (SQLite does when
    /// the last connection closes, with two fsyncs, and deletes the WAL, which the next
    /// writer creates again with two more). A short-lived process that writes little (hook
    /// capture) skips it while the WAL is small: the next process goes on appending to it,
    /// and the checkpoint happens once the WAL has grown.
    ///
    /// # Errors
    /// Fails when SQLite rejects the setting.
    pub fn set_checkpoint_on_close(&self, checkpoint: bool) -> Result<()> {
        self.on_writer(|conn| {
            conn.set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                !checkpoint,
            )?;
            Ok(())
        })
    }

    /// Sets how many WAL pages the writer lets accumulate before it checkpoints (0: never;
    /// hook capture leaves that to a process of its own, see [`crate::capture`]).
    ///
    /// # Errors
    /// Fails when SQLite rejects the pragma.
    pub fn set_wal_autocheckpoint(&self, pages: i64) -> Result<()> {
        self.on_writer(|conn| Ok(conn.pragma_update(None, "wal_autocheckpoint", pages)?))
    }

    /// Rebuilds the database file without its free pages (`VACUUM`), then truncates the WAL
    /// the rebuild went through. The copy SQLite makes goes to a temporary file, not to
    /// memory (readers keep `temp_store = MEMORY`): it is as large as the database.
    /// The caller checks the free space first (`compact`).
    ///
    /// # Errors
    /// Fails on a database error (a full disk: the database is left as it was).
    pub fn vacuum(&self) -> Result<()> {
        self.on_writer(|conn| {
            conn.pragma_update(None, "temp_store", "FILE")?;
            let done = conn.execute_batch("VACUUM");
            conn.pragma_update(None, "temp_store", "MEMORY")?;
            done?;
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            Ok(())
        })
    }

    /// Runs `f` on the connection that writes (a setting that must hold for the writes).
    fn on_writer<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        match &self.access {
            Access::Pooled { writer, .. } => f(&writer.lock().unwrap_or_else(|p| p.into_inner())),
            Access::Single { .. } => f(&*self.reader()?),
        }
    }

    /// Runs `f` in one IMMEDIATE transaction on the writer: it takes the write lock up front,
    /// so it never fails half-way on a lock upgrade, and it commits only when `f` succeeds.
    ///
    /// # Errors
    /// Whatever `f` returns, or a database error; the transaction is rolled back.
    /// [`Error::ReadOnly`] when the store was opened read-only.
    pub fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        match &self.access {
            Access::Pooled { writer, .. } => {
                let mut conn = writer.lock().unwrap_or_else(|p| p.into_inner());
                self.write_on(&mut conn, f)
            }
            Access::Single { read_only, .. } => {
                if let Some(reason) = read_only {
                    return Err(Error::ReadOnly {
                        path: self.path.clone(),
                        reason: reason.clone(),
                    });
                }
                let mut conn = self.reader()?;
                self.write_on(&mut conn, f)
            }
        }
    }

    fn write_on<T>(
        &self,
        conn: &mut Connection,
        f: impl FnOnce(&Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        let named = |e: rusqlite::Error| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::ReadOnly) => schema::open_error(e, &self.path),
            _ => Error::from(e),
        };
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(named)?;
        let out = f(&tx)?;
        tx.commit().map_err(named)?;
        Ok(out)
    }
}

/// Switches a database to WAL. A process that opens a new database at the same moment as
/// another may find it busy while the other one converts it: it waits for it like for any
/// writer.
fn set_wal(conn: &Connection, path: &Path) -> Result<()> {
    let deadline = std::time::Instant::now() + schema::BUSY_TIMEOUT;
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Ok(()) => return Ok(()),
            Err(e)
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(e) => return Err(schema::open_error(e, path)),
        }
    }
}

/// What opening a database file found before SQLite is asked.
struct Probe {
    /// Why the database can only be read (its permission bits or its folder's), if so.
    read_only: Option<String>,
    /// The file is empty: a database being created right now, or an empty file.
    empty: bool,
}

/// Checks that `path` holds a database that can be opened, without creating anything:
/// missing, unreadable, a folder, or not SQLite is an error naming the cause.
fn inspect(path: &Path) -> Result<Probe> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::NoDatabase {
                path: path.to_owned(),
            })
        }
        Err(e) => return Err(cannot_open(path, &e)),
    };
    if meta.is_dir() {
        return Err(Error::CannotOpen {
            path: path.to_owned(),
            reason: "it is a folder".to_owned(),
        });
    }
    let mut header = [0u8; 16];
    let mut file = std::fs::File::open(path).map_err(|e| cannot_open(path, &e))?;
    let n = read_up_to(&mut file, &mut header).map_err(|e| cannot_open(path, &e))?;
    if n > 0 && (n < header.len() || &header != b"SQLite format 3\0") {
        return Err(Error::NotADatabase {
            path: path.to_owned(),
        });
    }
    Ok(Probe {
        read_only: read_only_reason(path, &meta),
        empty: n == 0,
    })
}

fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Why a database must be opened read-only: its file has no write permission, or its
/// folder has none (SQLite creates its `-wal` and `-shm` there). Judged by the permission
/// bits, so that a file made read-only is treated so even by root, who could write it.
fn read_only_reason(path: &Path, meta: &std::fs::Metadata) -> Option<String> {
    if meta.permissions().readonly() {
        return Some(format!("the file is read-only{}", mode_of(meta)));
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = parent.unwrap_or(Path::new("."));
    match std::fs::metadata(dir) {
        Ok(d) if d.permissions().readonly() => Some(format!(
            "its folder {} is read-only{}",
            dir.display(),
            mode_of(&d)
        )),
        _ => None,
    }
}

#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata) -> String {
    use std::os::unix::fs::PermissionsExt;
    format!(" (mode {:04o})", meta.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode_of(_: &std::fs::Metadata) -> String {
    String::new()
}

/// An OS error while opening, in the few words a user needs (`permission denied`).
fn cannot_open(path: &Path, e: &std::io::Error) -> Error {
    let reason = match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => {
            let text = e.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text).to_owned();
            let mut chars = text.chars();
            chars.next().map_or(text.clone(), |first| {
                first.to_lowercase().chain(chars).collect()
            })
        }
    };
    Error::CannotOpen {
        path: path.to_owned(),
        reason,
    }
}

/// `path` with `suffix` appended to its file name (`-wal`, `-shm`).
fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// A `file:` URI for `path` (RFC 3986 escapes for what a URI gives a meaning to).
fn file_uri(path: &Path, immutable: bool) -> String {
    let text = path.to_string_lossy();
    let mut uri = String::from("file:");
    for b in text.bytes() {
        match b {
            b'%' | b'?' | b'#' | 0x80.. => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(char::from(b)),
        }
    }
    if immutable {
        uri.push_str("?immutable=1");
    }
    uri
}

/// Creates the database file with mode 0600 (and its folders) unless it exists.
fn create_private_file(path: &Path) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}
