//! The engine interface: what [`super::Db`] asks of a store engine, each method answered
//! by the engine's own code (SQLite's in `sqlite.rs`, the team store's in `pg.rs`). The
//! verbs of `Db` are written once over it, so nothing above this folder, and nothing in
//! it but [`super::Db::open`]'s choice of engine, knows which engine a store is.
//!
//! Reads go through the two ports of `port.rs`, handed to backend-neutral code; the verbs
//! below are those whose orchestration each engine still runs itself. What only one engine
//! can do (WAL checkpoints, a search queue drained while idle, compressing lines in place,
//! write-back to Claude Code's files) is a method with a default that says the engine has
//! no such thing, which the engine that has it overrides.

use super::port::{Lookups, ReadTx};
use crate::check::CheckReport;
use crate::checkpoint::Checkpointer;
use crate::compact::{CompactOptions, CompactReport};
use crate::error::{Error, Result};
use crate::export::{ExportReport, OnDamage};
use crate::fork::{ForkOptions, Forked};
use crate::metadata::DeleteReport;
use crate::model::{ImportReport, Progress, SessionRef};
use crate::record::{AppendOptions, AppendReport};
use crate::restore::{RestoreOptions, RestoreReport};
use crate::resume::{ResumeOptions, Resumed};
use crate::search::{Hit, Mention, Narrowing, ReindexReport, SearchQuery};
use crate::streams::StreamTx;
use crate::write_back::Target;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A closure over one of the read ports, run once (see [`super::Db::read`]).
pub(crate) type WithReadTx<'f> = dyn FnMut(&mut dyn ReadTx) -> Result<()> + 'f;
/// A closure over the lookup port, run once (see [`super::Db::lookup`]).
pub(crate) type WithLookups<'f> = dyn FnMut(&mut dyn Lookups) -> Result<()> + 'f;
/// A closure over one SessionStore protocol transaction, run once.
pub(crate) type WithStreamTx<'f> = dyn FnMut(&mut dyn StreamTx) -> Result<()> + 'f;

/// One store engine (see the module's notes).
pub(crate) trait Engine: Send + Sync {
    /// What to call the store in messages: a file's path, or a URL without its password.
    fn shown(&self) -> String;

    /// Runs `f` over the engine's [`ReadTx`], once.
    fn read(&self, f: &mut WithReadTx<'_>) -> Result<()>;
    /// Runs `f` over the engine's [`Lookups`], once.
    fn lookup(&self, f: &mut WithLookups<'_>) -> Result<()>;
    /// Runs `f` in a SessionStore protocol write transaction, once.
    fn write_streams(&self, f: &mut WithStreamTx<'_>) -> Result<()>;
    /// Runs `f` in a SessionStore protocol read transaction, once.
    fn read_streams(&self, f: &mut WithStreamTx<'_>) -> Result<()>;

    /// Imports transcripts and session files.
    fn import_paths(&self, paths: &[PathBuf], progress: &dyn Progress) -> Result<ImportReport>;
    /// Imports one session's changed files.
    fn import_session(&self, transcript: &Path, progress: &dyn Progress) -> Result<ImportReport>;
    /// Sets a session's custom title.
    fn rename_session(&self, session: &SessionRef, title: &str) -> Result<String>;
    /// Sets or clears a session's tag.
    fn tag_session(&self, session: &SessionRef, tag: Option<&str>) -> Result<String>;
    /// Removes a session and everything stored for it.
    fn delete_session(&self, session: &SessionRef) -> Result<DeleteReport>;
    /// Appends a batch of entries with Claude Code's write rules.
    fn append_with(
        &self,
        session: &SessionRef,
        entries: &[serde_json::Value],
        options: &AppendOptions,
    ) -> Result<AppendReport>;
    /// Forks a stored session into a new one.
    fn fork(&self, source: &SessionRef, options: &ForkOptions) -> Result<Forked>;
    /// Writes a stored session into Claude Code's folder.
    fn restore(&self, session: &SessionRef, options: &RestoreOptions) -> Result<RestoreReport>;
    /// Checks what can go stale or be damaged and, with `repair`, repairs it.
    fn check(&self, repair: bool) -> Result<CheckReport>;

    /// Writes a session's main transcript to `out` (`on_damage` for an engine that keeps
    /// checksums of its own).
    fn export_session(
        &self,
        session: &SessionRef,
        out: &mut dyn Write,
        on_damage: OnDamage<'_>,
    ) -> Result<u64>;
    /// Rebuilds the projects tree under `dir`.
    fn export_tree(&self, dir: &Path, project: Option<&str>, force: bool) -> Result<ExportReport>;
    /// Resumes a stored session.
    fn resume(&self, session: &SessionRef, options: &ResumeOptions) -> Result<Resumed>;
    /// The API view of a resume: only the conversation and the model.
    fn resume_api_view(
        &self,
        session: &SessionRef,
        options: &ResumeOptions,
    ) -> Result<Vec<serde_json::Value>>;
    /// The session `--continue` picks in a project.
    fn continue_target(&self, project: &str) -> Result<SessionRef>;

    /// Indexes the lines still waiting for the search index.
    fn catch_up_search(&self) -> Result<()>;
    /// A full-text search's hits, best first, from the index as it stands.
    fn search_hits(&self, q: &SearchQuery, n: &Narrowing) -> Result<Vec<Hit>>;
    /// The newest `cap` lines whose indexed text names a phrase, unranked.
    fn mentions(&self, text: &str, project: Option<&str>, cap: usize) -> Result<Vec<Mention>>;
    /// Rebuilds the search index and every catalog row.
    fn reindex(&self) -> Result<ReindexReport>;

    /// Starts the upkeep a long-running server needs (none by default).
    fn start_upkeep(&self, _period: Duration) -> Result<Option<Checkpointer>> {
        Ok(None)
    }
    /// Stops what [`Engine::start_upkeep`] started.
    fn stop_upkeep(&self, _upkeep: Checkpointer) -> Result<()> {
        Ok(())
    }
    /// Whether a server drains a search queue while idle (none by default).
    fn indexes_while_idle(&self) -> bool {
        false
    }
    /// Indexes one batch of that queue: the lines indexed, or `None` when no batch was free.
    fn index_idle_batch(&self) -> Result<Option<u64>> {
        Ok(None)
    }
    /// Lets the engine run up to `n` transactions at once (an engine with one connection
    /// pool sized by its readers ignores it).
    fn with_connections(self: Box<Self>, _n: usize) -> Box<dyn Engine>;
    /// Ends the use of a store by a process that exits right after (see
    /// [`super::Db::close_for_exit`]).
    fn close_for_exit(self: Box<Self>) {}

    /// Compresses the lines stored as they came and gives the space back.
    fn compact(
        &self,
        _options: &CompactOptions,
        _progress: &dyn Progress,
    ) -> Result<CompactReport> {
        Err(Error::Invalid(
            "compact is for a SQLite store: a team store keeps its lines as they came \
             (PostgreSQL compresses large values itself)"
                .into(),
        ))
    }

    /// Whether changes can be written back to Claude Code's files: only where the
    /// sessions are this machine's files (a team store's may come from another machine).
    fn writes_back(&self) -> bool {
        false
    }
    /// Whether the file a session was imported from is still there.
    fn write_back_file_present(&self, _session: &SessionRef) -> Result<bool> {
        Ok(false)
    }
    /// Checks that a session's file can take a write-back.
    fn write_back_check(&self, _session: &SessionRef) -> Result<Target> {
        Err(no_write_back())
    }
    /// Appends the lines a change added to the checked file.
    fn write_back_apply(&self, _target: &Target) -> Result<u64> {
        Err(no_write_back())
    }
    /// Writes a new session (a fork) beside its source's file.
    fn write_back_new(&self, _source: &SessionRef, _new: &SessionRef) -> Result<PathBuf> {
        Err(no_write_back())
    }
}

fn no_write_back() -> Error {
    Error::Invalid("a team store does not write to Claude Code's files".to_owned())
}

/// A `FnOnce` handed to an engine method that takes a `FnMut` and runs it once, with the
/// value it gave (see [`super::Db::read`]).
pub(super) struct Once<F, T> {
    f: Option<F>,
    value: Option<T>,
}

impl<F, T> Once<F, T> {
    pub(super) fn new(f: F) -> Self {
        Once {
            f: Some(f),
            value: None,
        }
    }

    /// Runs the closure on its first call; later calls do nothing.
    pub(super) fn run<A>(&mut self, arg: A) -> Result<()>
    where
        F: FnOnce(A) -> Result<T>,
    {
        if let Some(f) = self.f.take() {
            self.value = Some(f(arg)?);
        }
        Ok(())
    }

    /// The closure's value: an error if the engine returned without running it.
    pub(super) fn value(self) -> Result<T> {
        self.value.ok_or_else(|| {
            Error::Invalid("the store engine ended a transaction without running it".to_owned())
        })
    }
}
