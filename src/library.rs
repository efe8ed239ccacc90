//! The library API an application depends on: [`SessionDb`], one open store (a SQLite file
//! or a PostgreSQL team store, chosen by the target's form) with the verbs an app needs,
//! each taking and returning sessiondb's own types. It is a thin layer over [`Db`]: the
//! same code the `sessiondb` binary runs, so an app gets the binary's answers byte for byte.
//!
//! ```no_run
//! use sessiondb::SessionDb;
//! # fn main() -> sessiondb::Result<()> {
//! let db = SessionDb::open("sessions.db")?;
//! db.import(&["/home/me/.claude/projects"])?;
//! for info in db.sessions(&Default::default())? {
//!     println!("{} {}", info.session_id, info.summary.unwrap_or_default());
//! }
//! let session = db.session("7c9d2e41")?;
//! for message in db.messages(&session)? {
//!     println!("{}: {}", message.kind, message.message);
//! }
//! # Ok(()) }
//! ```

use crate::backend::Db;
use crate::check::CheckReport;
use crate::error::{Error, Result};
use crate::export::{ExportReport, OnDamage};
use crate::fork::{ForkOptions, Forked};
use crate::model::{ImportReport, NoProgress, Progress, SessionRef};
use crate::query::{SessionFilter, SessionInfo};
use crate::record::{AppendOptions, AppendReport};
use crate::resume::{ResumeOptions, Resumed};
use crate::sdk::SessionMessage;
use crate::search::{Hit, SearchQuery};
use std::io::Write;
use std::path::{Path, PathBuf};

/// An open sessiondb store. Safe to share between threads (`&SessionDb` is enough for
/// every verb); each write is one transaction.
pub struct SessionDb {
    db: Db,
}

/// What [`SessionDb::search`] found.
#[derive(Debug)]
#[non_exhaustive]
pub struct Found {
    /// The hits, best first.
    pub hits: Vec<Hit>,
    /// Why lines still waiting for the search index could not be indexed first (a store
    /// opened read-only, say): the hits are then those of the lines indexed before.
    pub not_indexed: Option<Error>,
}

impl SessionDb {
    /// Opens `target`: a `postgres://` or `postgresql://` URL is a team store (its database
    /// must exist; its tables are created), anything else the path of a SQLite file,
    /// created when missing.
    ///
    /// # Errors
    /// When the store cannot be opened or was written by a newer sessiondb.
    pub fn open(target: impl AsRef<str>) -> Result<SessionDb> {
        Ok(SessionDb {
            db: Db::open(target.as_ref())?,
        })
    }

    /// Opens an existing store for reading only: nothing is created, a SQLite file is
    /// never written.
    ///
    /// # Errors
    /// As [`SessionDb::open`]; also when no database is there.
    pub fn open_read(target: impl AsRef<str>) -> Result<SessionDb> {
        Ok(SessionDb {
            db: Db::open_read(target.as_ref())?,
        })
    }

    /// The store under this API, for the verbs the facade does not name.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// What to call the store in messages: the file's path, or the URL without its password.
    pub fn shown(&self) -> String {
        self.db.shown()
    }

    /// Imports Claude Code's transcripts under `paths` (a `projects` folder, a project
    /// folder, or single files): new files, the new lines of grown ones, rewritten ones as
    /// new versions. Importing twice adds nothing.
    ///
    /// # Errors
    /// On a database error or an unreadable path; a file that cannot be read is counted
    /// in the report instead.
    pub fn import<P: AsRef<Path>>(&self, paths: &[P]) -> Result<ImportReport> {
        self.import_with(paths, &NoProgress)
    }

    /// [`SessionDb::import`], telling `progress` how it goes.
    ///
    /// # Errors
    /// As [`SessionDb::import`].
    pub fn import_with<P: AsRef<Path>>(
        &self,
        paths: &[P],
        progress: &dyn Progress,
    ) -> Result<ImportReport> {
        let paths: Vec<PathBuf> = paths.iter().map(|p| p.as_ref().to_path_buf()).collect();
        self.db.import_paths(&paths, progress)
    }

    /// The stored sessions `filter` selects, newest first, as `sessiondb sessions` lists
    /// them.
    ///
    /// # Errors
    /// On a database error.
    pub fn sessions(&self, filter: &SessionFilter) -> Result<Vec<SessionInfo>> {
        self.db.list_sessions(filter)
    }

    /// The session `query` names: a session id, a unique prefix of one, `PROJECT/SESSION`,
    /// or a custom title.
    ///
    /// # Errors
    /// [`Error::SessionNotFound`] or [`Error::AmbiguousSession`].
    pub fn session(&self, query: &str) -> Result<SessionRef> {
        self.db.resolve_session(query)
    }

    /// The conversation's messages as the Agent SDK's `get_session_messages` gives them.
    ///
    /// # Errors
    /// On a database error.
    pub fn messages(&self, session: &SessionRef) -> Result<Vec<SessionMessage>> {
        self.db.session_messages(session, None, 0)
    }

    /// What Claude Code's `--resume` rebuilds from the stored session: the conversation
    /// with its repairs, the model, the API view.
    ///
    /// # Errors
    /// When the session holds no conversation to resume, or on a database error.
    pub fn resume(&self, session: &SessionRef, options: &ResumeOptions) -> Result<Resumed> {
        self.db.resume(session, options)
    }

    /// Full-text search over every stored line, best hits first.
    ///
    /// # Errors
    /// On a database error (never on what the user typed).
    pub fn search(&self, query: &SearchQuery) -> Result<Found> {
        let (hits, not_indexed) = self.db.search(query)?;
        Ok(Found { hits, not_indexed })
    }

    /// Forks a session as Claude Code's `--fork-session` does: a new session whose lines
    /// are the source's, re-keyed.
    ///
    /// # Errors
    /// When `options.up_to` names no message of the session, or on a database error.
    pub fn fork(&self, session: &SessionRef, options: &ForkOptions) -> Result<Forked> {
        self.db.fork(session, options)
    }

    /// Appends transcript entries (records as Claude Code writes them, each message with
    /// its `uuid`) to a session with Claude Code's write rules (parents chained, duplicates
    /// skipped, `progress` dropped), after its current leaf.
    ///
    /// # Errors
    /// When an entry is not a transcript record, or on a database error.
    pub fn append(
        &self,
        session: &SessionRef,
        entries: &[serde_json::Value],
    ) -> Result<AppendReport> {
        self.db
            .append_with(session, entries, &AppendOptions::default())
    }

    /// Writes the session's main transcript to `out` exactly as it was imported (and
    /// appended to), each line checked against its checksum. Returns the bytes written.
    ///
    /// # Errors
    /// [`Error::Damaged`] when a stored line no longer matches its checksum; a database
    /// or write error.
    pub fn export(&self, session: &SessionRef, out: &mut dyn Write) -> Result<u64> {
        self.db.export_session(session, out, OnDamage::Fail)
    }

    /// Rebuilds Claude Code's projects tree under `dir` (every session, or one project's).
    ///
    /// # Errors
    /// On a database error, or when `dir` cannot be written.
    pub fn export_tree(&self, dir: &Path, project: Option<&str>) -> Result<ExportReport> {
        self.db.export_tree(dir, project, false)
    }

    /// Checks what can go stale or be damaged (the database, the search index, line
    /// checksums, the catalog) and, with `repair`, repairs it from the source files.
    ///
    /// # Errors
    /// A database error that stops the check itself.
    pub fn check(&self, repair: bool) -> Result<CheckReport> {
        self.db.check(repair)
    }
}

impl From<Db> for SessionDb {
    fn from(db: Db) -> SessionDb {
        SessionDb { db }
    }
}
