//! The verbs that change the store: import, a session's title, tag or removal, appended
//! entries, forks, a restore into Claude Code's folder, a repairing check, and write-back
//! to Claude Code's files (a SQLite store's capability alone).

use super::Db;
use crate::error::Result;
use crate::fork::{ForkOptions, Forked};
use crate::model::{ImportReport, Progress, SessionRef};
#[cfg(doc)] // the docs name its methods, which these verbs mirror
use crate::store::Store;
use std::path::{Path, PathBuf};

impl Db {
    /// Compresses the lines stored as they came and gives the space back (see
    /// [`crate::compact`]). A team store keeps its lines as they came (PostgreSQL
    /// compresses large values itself): refused there.
    ///
    /// # Errors
    /// As [`crate::compact::compact`]; [`crate::Error::Invalid`] on a team store.
    pub fn compact(
        &self,
        options: &crate::compact::CompactOptions,
        progress: &dyn Progress,
    ) -> Result<crate::compact::CompactReport> {
        self.engine.compact(options, progress)
    }

    /// Imports transcripts and session files (see [`crate::import::import_paths`]).
    ///
    /// # Errors
    /// As the backend's importer.
    pub fn import_paths(&self, paths: &[PathBuf], progress: &dyn Progress) -> Result<ImportReport> {
        self.engine.import_paths(paths, progress)
    }

    /// Imports one session's changed files (see [`crate::import::import_session`]).
    ///
    /// # Errors
    /// As the backend's importer.
    pub fn import_session(
        &self,
        transcript: &Path,
        progress: &dyn Progress,
    ) -> Result<ImportReport> {
        self.engine.import_session(transcript, progress)
    }

    /// Sets a session's custom title (see [`crate::metadata::rename_session`]).
    ///
    /// # Errors
    /// As [`crate::metadata::rename_session`].
    pub fn rename_session(&self, session: &SessionRef, title: &str) -> Result<String> {
        self.engine.rename_session(session, title)
    }

    /// Sets or clears a session's tag (see [`crate::metadata::tag_session`]).
    ///
    /// # Errors
    /// As [`crate::metadata::tag_session`].
    pub fn tag_session(&self, session: &SessionRef, tag: Option<&str>) -> Result<String> {
        self.engine.tag_session(session, tag)
    }

    /// Removes a session and everything stored for it (see
    /// [`crate::metadata::delete_session`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn delete_session(&self, session: &SessionRef) -> Result<crate::metadata::DeleteReport> {
        self.engine.delete_session(session)
    }

    /// Appends a batch of entries with Claude Code's write rules (see
    /// [`Store::append_with`]).
    ///
    /// # Errors
    /// As [`Store::append_with`].
    pub fn append_with(
        &self,
        session: &SessionRef,
        entries: &[serde_json::Value],
        options: &crate::record::AppendOptions,
    ) -> Result<crate::record::AppendReport> {
        self.engine.append_with(session, entries, options)
    }

    /// Forks a stored session into a new one (see [`Store::fork`]).
    ///
    /// # Errors
    /// As [`Store::fork`].
    pub fn fork(&self, source: &SessionRef, options: &ForkOptions) -> Result<Forked> {
        self.engine.fork(source, options)
    }

    /// Writes a stored session into Claude Code's folder (see [`crate::restore::restore`]).
    ///
    /// # Errors
    /// As [`crate::restore::restore`].
    pub fn restore(
        &self,
        session: &SessionRef,
        options: &crate::restore::RestoreOptions,
    ) -> Result<crate::restore::RestoreReport> {
        self.engine.restore(session, options)
    }

    /// Checks what can go stale or be damaged and, with `repair`, repairs it (see
    /// [`crate::check::check`] and [`crate::pg::check::check`]).
    ///
    /// # Errors
    /// A database error that stops the check itself.
    pub fn check(&self, repair: bool) -> Result<crate::check::CheckReport> {
        self.engine.check(repair)
    }
}

/// Write-back to Claude Code's files ([`crate::write_back`]) is a capability of a SQLite
/// store, whose sessions are this machine's files; a team store's session may come from
/// another machine, so it never writes them.
impl Db {
    /// Whether changes can be written back to Claude Code's files.
    pub fn writes_back(&self) -> bool {
        self.engine.writes_back()
    }

    /// Whether the file a session was imported from is still there (`false` on a team store).
    ///
    /// # Errors
    /// On a database error.
    pub fn write_back_file_present(&self, session: &SessionRef) -> Result<bool> {
        self.engine.write_back_file_present(session)
    }

    /// Checks that a session's file can take a write-back (see [`crate::write_back::check`]).
    ///
    /// # Errors
    /// When the file moved on, is gone, or the store is a team store.
    pub fn write_back_check(&self, session: &SessionRef) -> Result<crate::write_back::Target> {
        self.engine.write_back_check(session)
    }

    /// Appends the lines a change added to the checked file (see [`crate::write_back::apply`]).
    ///
    /// # Errors
    /// As [`crate::write_back::apply`], or on a team store.
    pub fn write_back_apply(&self, target: &crate::write_back::Target) -> Result<u64> {
        self.engine.write_back_apply(target)
    }

    /// Writes a new session (a fork) beside its source's file (see
    /// [`crate::write_back::write_new`]).
    ///
    /// # Errors
    /// As [`crate::write_back::write_new`], or on a team store.
    pub fn write_back_new(&self, source: &SessionRef, new: &SessionRef) -> Result<PathBuf> {
        self.engine.write_back_new(source, new)
    }
}
