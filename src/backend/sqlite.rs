//! The SQLite store as an engine: its answers to the read ports, on a pooled reader (each
//! the function of [`crate::query`], or of the module that owns the table), and the
//! [`Engine`] methods, each the function of the module that owns the verb.

use super::engine::{Engine, WithLookups, WithReadTx, WithStreamTx};
use super::port::{Lookups, ReadTx, CHANGE_MARKER};
use crate::check::CheckReport;
use crate::checkpoint::Checkpointer;
use crate::compact::{CompactOptions, CompactReport};
use crate::error::Result;
use crate::export::{ExportReport, OnDamage};
use crate::fork::ForkOrigin;
use crate::fork::{ForkOptions, Forked};
use crate::metadata::DeleteReport;
use crate::model::SessionRef;
use crate::model::{ImportReport, Progress};
use crate::query::{self, SessionFilter, SessionInfo, SessionRow, StoredLine};
use crate::record::{AppendOptions, AppendReport};
use crate::restore::Location;
use crate::restore::{RestoreOptions, RestoreReport};
use crate::resume::{ResumeOptions, Resumed};
use crate::sdk::StoredMessage;
use crate::search::{Hit, Mention, Narrowing, ReindexReport, SearchQuery};
use crate::store::Store;
use crate::streams::StreamStore;
use crate::usage::{Scope, UsageRow};
use crate::write_back::Target;
use rusqlite::Connection;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A SQLite connection, as both read ports.
pub(super) struct Sqlite<'c>(pub(super) &'c Connection);

impl Lookups for Sqlite<'_> {
    fn resolve_session(&mut self, arg: &str) -> Result<SessionRef> {
        query::resolve_session(self.0, arg)
    }

    fn for_each_session(
        &mut self,
        filter: &SessionFilter,
        each: &mut dyn FnMut(&SessionRow<'_>) -> Result<()>,
    ) -> Result<()> {
        query::for_each_session(self.0, filter, each)
    }

    fn list_sessions(&mut self, filter: &SessionFilter) -> Result<Vec<SessionInfo>> {
        query::list_sessions(self.0, filter)
    }

    fn session_info(
        &mut self,
        session: &SessionRef,
        directory: Option<&str>,
    ) -> Result<SessionInfo> {
        query::get_session_info(self.0, session, directory)
    }

    fn project_exists(&mut self, key: &str) -> Result<bool> {
        query::project_exists(self.0, key)
    }

    fn neighbour_ids(&mut self, id: &str) -> Result<(Option<String>, Option<String>)> {
        query::neighbour_ids(self.0, id)
    }

    fn each_line(&mut self, lines: &[i64], each: &mut dyn FnMut(i64, &[u8])) -> Result<()> {
        crate::search::each_line(self.0, lines, each)
    }
}

impl ReadTx for Sqlite<'_> {
    fn find_exact_session(&mut self, project: &str, session_id: &str) -> Result<SessionRef> {
        query::find_exact_session(self.0, project, session_id)
    }

    fn project_keys(&mut self) -> Result<Vec<String>> {
        query::project_keys(self.0)
    }

    fn tags(&mut self) -> Result<Vec<String>> {
        query::tags(self.0)
    }

    fn all_session_ids(&mut self) -> Result<Vec<String>> {
        query::all_session_ids(self.0)
    }

    fn change_marker(&mut self) -> Result<(Option<i64>, i64, Option<i64>)> {
        Ok(self
            .0
            .query_row(CHANGE_MARKER, [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?)
    }

    fn session_transcript(
        &mut self,
        session: &SessionRef,
        agent: Option<&str>,
    ) -> Result<Option<i64>> {
        query::session_transcript(self.0, session, agent)
    }

    fn transcript_lines(&mut self, transcript: i64) -> Result<Vec<StoredLine>> {
        query::transcript_lines(self.0, transcript)
    }

    fn transcript_lines_after(
        &mut self,
        transcript: i64,
        after: i64,
        limit: i64,
    ) -> Result<Vec<StoredLine>> {
        query::transcript_lines_after(self.0, transcript, after, limit)
    }

    fn transcript_line(
        &mut self,
        transcript: i64,
        ordinal: i64,
    ) -> Result<Option<(Vec<u8>, bool)>> {
        query::transcript_line(self.0, transcript, ordinal)
    }

    fn stored_session_messages(
        &mut self,
        session: &SessionRef,
        limit: Option<i64>,
        offset: i64,
    ) -> Result<Vec<StoredMessage>> {
        crate::sdk::stored_session_messages(self.0, session, limit, offset)
    }

    fn stored_subagent_messages(
        &mut self,
        session: &SessionRef,
        agent_id: &str,
        limit: Option<i64>,
        offset: i64,
    ) -> Result<Vec<StoredMessage>> {
        crate::sdk::stored_subagent_messages(self.0, session, agent_id, limit, offset)
    }

    fn list_subagents(&mut self, session: &SessionRef) -> Result<Vec<String>> {
        crate::sdk::list_subagents(self.0, session)
    }

    fn record_timestamps(&mut self, session: &SessionRef) -> Result<HashMap<String, String>> {
        query::record_timestamps(self.0, session)
    }

    fn fork_origin(&mut self, session: &SessionRef) -> Result<Option<ForkOrigin>> {
        crate::fork::fork_origin(self.0, session)
    }

    fn locations(&mut self, session: &SessionRef) -> Result<Vec<Location>> {
        crate::restore::locations(self.0, session)
    }

    fn recorded_cwd(&mut self, session: &SessionRef) -> Result<Option<String>> {
        crate::restore::recorded_cwd(self.0, session)
    }

    fn usage_rows(&mut self, scope: &Scope) -> Result<Vec<UsageRow>> {
        crate::usage::sqlite::read(self.0, scope)
    }
}

/// The SQLite store as an [`Engine`]: each method the function of the module that owns the
/// verb, on this store.
impl Engine for Store {
    fn shown(&self) -> String {
        self.path().display().to_string()
    }

    fn read(&self, f: &mut WithReadTx<'_>) -> Result<()> {
        f(&mut Sqlite(&*self.reader()?))
    }

    fn lookup(&self, f: &mut WithLookups<'_>) -> Result<()> {
        f(&mut Sqlite(&*self.reader()?))
    }

    fn write_streams(&self, f: &mut WithStreamTx<'_>) -> Result<()> {
        StreamStore::write_streams(self, f)
    }

    fn read_streams(&self, f: &mut WithStreamTx<'_>) -> Result<()> {
        StreamStore::read_streams(self, f)
    }

    fn import_paths(&self, paths: &[PathBuf], progress: &dyn Progress) -> Result<ImportReport> {
        crate::import::import_paths(self, paths, progress)
    }

    fn import_session(&self, transcript: &Path, progress: &dyn Progress) -> Result<ImportReport> {
        crate::import::import_session(self, transcript, progress)
    }

    fn rename_session(&self, session: &SessionRef, title: &str) -> Result<String> {
        crate::metadata::rename_session(self, session, title)
    }

    fn tag_session(&self, session: &SessionRef, tag: Option<&str>) -> Result<String> {
        crate::metadata::tag_session(self, session, tag)
    }

    fn delete_session(&self, session: &SessionRef) -> Result<DeleteReport> {
        crate::metadata::delete_session(self, session)
    }

    fn append_with(
        &self,
        session: &SessionRef,
        entries: &[serde_json::Value],
        options: &AppendOptions,
    ) -> Result<AppendReport> {
        Store::append_with(self, session, entries, options)
    }

    fn fork(&self, source: &SessionRef, options: &ForkOptions) -> Result<Forked> {
        Store::fork(self, source, options)
    }

    fn restore(&self, session: &SessionRef, options: &RestoreOptions) -> Result<RestoreReport> {
        crate::restore::restore(self, session, options)
    }

    fn check(&self, repair: bool) -> Result<CheckReport> {
        crate::check::check(self, repair)
    }

    fn export_session(
        &self,
        session: &SessionRef,
        out: &mut dyn Write,
        on_damage: OnDamage<'_>,
    ) -> Result<u64> {
        crate::export::export_session_checked(self, session, out, on_damage)
    }

    fn export_tree(&self, dir: &Path, project: Option<&str>, force: bool) -> Result<ExportReport> {
        crate::export::export_tree_with(self, dir, project, force)
    }

    fn resume(&self, session: &SessionRef, options: &ResumeOptions) -> Result<Resumed> {
        Store::resume(self, session, options)
    }

    fn resume_api_view(
        &self,
        session: &SessionRef,
        options: &ResumeOptions,
    ) -> Result<Vec<serde_json::Value>> {
        Store::resume_api_view(self, session, options)
    }

    fn continue_target(&self, project: &str) -> Result<SessionRef> {
        Store::continue_target(self, project)
    }

    fn catch_up_search(&self) -> Result<()> {
        crate::search::catch_up(self).map(drop)
    }

    fn search_hits(&self, q: &SearchQuery, n: &Narrowing) -> Result<Vec<Hit>> {
        crate::search::search_narrowed(&*self.reader()?, q, n)
    }

    fn mentions(&self, text: &str, project: Option<&str>, cap: usize) -> Result<Vec<Mention>> {
        crate::search::mentions(&*self.reader()?, text, project, cap)
    }

    fn reindex(&self) -> Result<ReindexReport> {
        crate::search::reindex(self)
    }

    /// WAL checkpoints on a thread of their own ([`Checkpointer`]).
    fn start_upkeep(&self, period: Duration) -> Result<Option<Checkpointer>> {
        Ok(Some(Checkpointer::start(self, Some(period))?))
    }

    fn stop_upkeep(&self, upkeep: Checkpointer) -> Result<()> {
        upkeep.stop(self)
    }

    /// A SQLite store already reads in parallel, on its pool.
    fn with_connections(self: Box<Self>, _n: usize) -> Box<dyn Engine> {
        self
    }

    /// Not closed: the exit releases the file and its locks as closing would, and closing
    /// first frees every object of the parsed schema one by one (about 6 % of `sessions
    /// --limit 1`).
    fn close_for_exit(self: Box<Self>) {
        std::mem::forget(self);
    }

    fn compact(&self, options: &CompactOptions, progress: &dyn Progress) -> Result<CompactReport> {
        crate::compact::compact(self, options, progress)
    }

    fn writes_back(&self) -> bool {
        true
    }

    fn write_back_file_present(&self, session: &SessionRef) -> Result<bool> {
        crate::write_back::file_present(self, session)
    }

    fn write_back_check(&self, session: &SessionRef) -> Result<Target> {
        crate::write_back::check(self, session)
    }

    fn write_back_apply(&self, target: &Target) -> Result<u64> {
        crate::write_back::apply(self, target)
    }

    fn write_back_new(&self, source: &SessionRef, new: &SessionRef) -> Result<PathBuf> {
        crate::write_back::write_new(self, source, new)
    }
}
