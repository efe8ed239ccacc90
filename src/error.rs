//! The library's one error type. Every variant carries the context a user needs to act.

use std::path::PathBuf;

/// Everything that can go wrong in sessiondb.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The database engine failed (a SQLite or PostgreSQL error, or no pooled connection
    /// to be had); see [`DatabaseError`].
    #[error("{0}")]
    Database(DatabaseError),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder concerned.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// Applying the embedded migrations failed.
    #[error("migration failed: {0}")]
    Migration(String),
    /// A verb that only reads (or writes to an existing database) was pointed at a path
    /// that holds no database; nothing was created.
    #[error("no database at {}", path.display())]
    NoDatabase {
        /// The path given.
        path: PathBuf,
    },
    /// The database file exists but cannot be opened.
    #[error("cannot open {}: {reason}", path.display())]
    CannotOpen {
        /// The database file.
        path: PathBuf,
        /// Why, in a few words (`permission denied`, `it is a folder`).
        reason: String,
    },
    /// The file is not a sessiondb database (not SQLite, or SQLite without sessiondb's
    /// schema); it is left untouched.
    #[error("{} is not a sessiondb database", path.display())]
    NotADatabase {
        /// The file.
        path: PathBuf,
    },
    /// A write was asked of a database that can only be read.
    #[error("cannot write to {}: {reason}", path.display())]
    ReadOnly {
        /// The database file.
        path: PathBuf,
        /// Why it is read-only (`the file is read-only (mode 0400)`, …).
        reason: String,
    },
    /// The database was written by a newer sessiondb; it is left untouched.
    #[error(
        "{} has schema migration V{found} ({name}) that this sessiondb does not know \
         (newest known: V{known}); upgrade sessiondb. The database was not modified",
        path.display()
    )]
    SchemaTooNew {
        /// The database file.
        path: PathBuf,
        /// The newest migration version recorded in the database.
        found: i64,
        /// Its name.
        name: String,
        /// The newest migration this binary embeds.
        known: i64,
    },
    /// No stored session matches the argument.
    #[error("no session matches {0:?}")]
    SessionNotFound(String),
    /// More than one stored session matches the argument.
    #[error("{query:?} is ambiguous: it matches {}", candidates.join(", "))]
    AmbiguousSession {
        /// What the user typed.
        query: String,
        /// Some of the sessions it matches (project/session id).
        candidates: Vec<String>,
    },
    /// The session has no conversation to resume (no user or assistant record on its
    /// chain); the message is Claude Code's own, word for word (B9).
    #[error("No conversation found with session ID: {0}")]
    NoConversation(String),
    /// A record named by the caller does not exist.
    #[error("{0}")]
    NotFound(String),
    /// Input that cannot be accepted, with where it came from.
    #[error("{0}")]
    Invalid(String),
    /// A project key, session id or subpath that cannot be stored (see [`crate::names`]).
    #[error("{0}")]
    BadName(String),
    /// A stored line no longer matches the checksum written with it (see
    /// [`crate::integrity`]): the database file was damaged.
    #[error("{0}; run `sessiondb check --repair` to restore it from its source file")]
    Damaged(Box<crate::model::DamagedLine>),
    /// A JSON value could not be encoded or decoded.
    #[error("JSON error: {0}")]
    Json(#[from] serde_json::Error),
    /// A PostgreSQL server could not be reached or refused the login. `target` is the URL
    /// without its password.
    #[error("cannot connect to {target}: {reason}")]
    CannotConnect {
        /// The database URL, password redacted.
        target: String,
        /// What failed.
        reason: String,
    },
}

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// An error of the database engine under the store, with its message as the engine gave it.
/// It names no client library's type, so the library's public shape does not change with
/// them; the engine's own error is its [`std::error::Error::source`].
#[derive(Debug)]
pub struct DatabaseError {
    message: String,
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl DatabaseError {
    /// An engine error shown as `message`, kept whole as its source. For the engine's failures
    /// that no `From` conversion describes well enough (a column that cannot be read names
    /// the column, which the client library's text does not).
    #[cfg(feature = "postgres")]
    pub(crate) fn new(
        message: String,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        DatabaseError {
            message,
            source: source.into(),
        }
    }
}

impl std::fmt::Display for DatabaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DatabaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::Database(DatabaseError {
            message: format!("database error: {e}"),
            source: Box::new(e),
        })
    }
}

impl From<r2d2::Error> for Error {
    fn from(e: r2d2::Error) -> Self {
        Error::Database(DatabaseError {
            message: format!("connection pool error: {e}"),
            source: Box::new(e),
        })
    }
}

/// A PostgreSQL statement failed. Shown with the server's own message ("deadlock detected",
/// "relation … does not exist"): the client library's text for a server error is only "db
/// error".
#[cfg(feature = "postgres")]
impl From<postgres::Error> for Error {
    fn from(e: postgres::Error) -> Self {
        Error::Database(DatabaseError {
            message: format!("postgres error: {}", postgres_message(&e)),
            source: Box::new(e),
        })
    }
}

/// What a PostgreSQL error says: the server's severity, message and SQLSTATE for an error the
/// server reported, else the client library's text with its cause. The server's detail and
/// hint are left out: they can quote stored values (a transcript's strings).
#[cfg(feature = "postgres")]
fn postgres_message(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!(
            "{}: {} (SQLSTATE {})",
            db.severity(),
            db.message(),
            db.code().code()
        );
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
