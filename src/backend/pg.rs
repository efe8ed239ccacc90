//! The team store as an engine: its answers to the read ports (each the function of
//! [`crate::pg::query`], or of the team-store module that owns the table; the lookups run
//! on any client, a connection outside a transaction, see
//! [`crate::pg::PgStore::read_single`]; the other reads in a read-only transaction), and
//! the [`Engine`] methods, each the function of the team-store module that owns the verb.

use super::engine::{Engine, WithLookups, WithReadTx, WithStreamTx};
use super::port::{Lookups, ReadTx, CHANGE_MARKER};
use crate::check::CheckReport;
use crate::error::{Error, Result};
use crate::export::{ExportReport, OnDamage};
use crate::fork::{ForkOptions, ForkOrigin, Forked};
use crate::metadata::DeleteReport;
use crate::model::{ImportReport, Progress, SessionRef};
use crate::pg::query;
use crate::pg::PgStore;
use crate::query::{SessionFilter, SessionInfo, SessionRow, StoredLine};
use crate::record::{AppendOptions, AppendReport};
use crate::restore::Location;
use crate::restore::{RestoreOptions, RestoreReport};
use crate::resume::{ResumeOptions, Resumed};
use crate::sdk::StoredMessage;
use crate::search::{Hit, Mention, Narrowing, ReindexReport, SearchQuery};
use crate::streams::StreamStore;
use crate::usage::{Scope, UsageRow};
use postgres::{GenericClient, Transaction};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A team store's connection (`C` a client) or read transaction (`C` a [`Transaction`]).
pub(super) struct Pg<'a, C>(pub(super) &'a mut C);

impl<C: GenericClient> Lookups for Pg<'_, C> {
    fn resolve_session(&mut self, arg: &str) -> Result<SessionRef> {
        query::resolve_session(self.0, arg)
    }

    fn for_each_session(
        &mut self,
        filter: &SessionFilter,
        each: &mut dyn FnMut(&SessionRow<'_>) -> Result<()>,
    ) -> Result<()> {
        query::for_each_session::<Error>(self.0, filter, each)
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
        crate::pg::search::each_line(self.0, lines, each)
    }
}

impl ReadTx for Pg<'_, Transaction<'_>> {
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
        let r = self.0.query_one(CHANGE_MARKER, &[])?;
        Ok((r.get(0), r.get(1), r.get(2)))
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
        // A team store keeps no checksums.
        Ok(query::transcript_line(self.0, transcript, ordinal)?.map(|raw| (raw, false)))
    }

    fn stored_session_messages(
        &mut self,
        session: &SessionRef,
        limit: Option<i64>,
        offset: i64,
    ) -> Result<Vec<StoredMessage>> {
        crate::pg::sdk::stored_session_messages(self.0, session, limit, offset)
    }

    fn stored_subagent_messages(
        &mut self,
        session: &SessionRef,
        agent_id: &str,
        limit: Option<i64>,
        offset: i64,
    ) -> Result<Vec<StoredMessage>> {
        crate::pg::sdk::stored_subagent_messages(self.0, session, agent_id, limit, offset)
    }

    fn list_subagents(&mut self, session: &SessionRef) -> Result<Vec<String>> {
        crate::pg::sdk::list_subagents(self.0, session)
    }

    fn record_timestamps(&mut self, session: &SessionRef) -> Result<HashMap<String, String>> {
        query::record_timestamps(self.0, session)
    }

    fn fork_origin(&mut self, session: &SessionRef) -> Result<Option<ForkOrigin>> {
        crate::pg::fork::fork_origin(self.0, session)
    }

    fn locations(&mut self, session: &SessionRef) -> Result<Vec<Location>> {
        crate::pg::restore::locations(self.0, session)
    }

    fn recorded_cwd(&mut self, session: &SessionRef) -> Result<Option<String>> {
        crate::pg::restore::recorded_cwd(self.0, session)
    }

    fn usage_rows(&mut self, scope: &Scope) -> Result<Vec<UsageRow>> {
        crate::pg::usage::read(self.0, scope)
    }
}

/// The team store as an [`Engine`]: each method the function of the team-store module that
/// owns the verb.
impl Engine for PgStore {
    fn shown(&self) -> String {
        PgStore::shown(self).to_owned()
    }

    /// One read-only transaction: one snapshot (see [`PgStore::read`]).
    fn read(&self, f: &mut WithReadTx<'_>) -> Result<()> {
        PgStore::read(self, |tx| f(&mut Pg(tx)))
    }

    /// A connection outside any transaction (see [`PgStore::read_single`]).
    fn lookup(&self, f: &mut WithLookups<'_>) -> Result<()> {
        self.read_single(|c| f(&mut Pg(c)))
    }

    fn write_streams(&self, f: &mut WithStreamTx<'_>) -> Result<()> {
        StreamStore::write_streams(self, f)
    }

    fn read_streams(&self, f: &mut WithStreamTx<'_>) -> Result<()> {
        StreamStore::read_streams(self, f)
    }

    fn import_paths(&self, paths: &[PathBuf], progress: &dyn Progress) -> Result<ImportReport> {
        crate::pg::import::import_paths(self, paths, progress)
    }

    fn import_session(&self, transcript: &Path, progress: &dyn Progress) -> Result<ImportReport> {
        crate::pg::import::import_session(self, transcript, progress)
    }

    fn rename_session(&self, session: &SessionRef, title: &str) -> Result<String> {
        crate::pg::metadata::rename_session(self, session, title)
    }

    fn tag_session(&self, session: &SessionRef, tag: Option<&str>) -> Result<String> {
        crate::pg::metadata::tag_session(self, session, tag)
    }

    fn delete_session(&self, session: &SessionRef) -> Result<DeleteReport> {
        crate::pg::metadata::delete_session(self, session)
    }

    fn append_with(
        &self,
        session: &SessionRef,
        entries: &[serde_json::Value],
        options: &AppendOptions,
    ) -> Result<AppendReport> {
        crate::pg::record::append_with(self, session, entries, options)
    }

    fn fork(&self, source: &SessionRef, options: &ForkOptions) -> Result<Forked> {
        crate::pg::fork::fork(self, source, options)
    }

    fn restore(&self, session: &SessionRef, options: &RestoreOptions) -> Result<RestoreReport> {
        crate::pg::restore::restore(self, session, options)
    }

    fn check(&self, repair: bool) -> Result<CheckReport> {
        crate::pg::check::check(self, repair)
    }

    /// A team store keeps no checksums of its own (PostgreSQL's page checksums, when the
    /// cluster has them, are its guard against damaged bytes): `on_damage` is never called.
    fn export_session(
        &self,
        session: &SessionRef,
        out: &mut dyn Write,
        _on_damage: OnDamage<'_>,
    ) -> Result<u64> {
        crate::pg::export::export_session(self, session, out)
    }

    /// A team store's export runs as with `force`.
    fn export_tree(&self, dir: &Path, project: Option<&str>, _force: bool) -> Result<ExportReport> {
        crate::pg::export::export_tree(self, dir, project)
    }

    fn resume(&self, session: &SessionRef, options: &ResumeOptions) -> Result<Resumed> {
        crate::pg::resume::resume(self, session, options)
    }

    fn resume_api_view(
        &self,
        session: &SessionRef,
        options: &ResumeOptions,
    ) -> Result<Vec<serde_json::Value>> {
        crate::pg::resume::resume_api_view(self, session, options)
    }

    fn continue_target(&self, project: &str) -> Result<SessionRef> {
        crate::pg::resume::continue_target(self, project)
    }

    fn catch_up_search(&self) -> Result<()> {
        crate::pg::search_queue::catch_up(self).map(drop)
    }

    fn search_hits(&self, q: &SearchQuery, n: &Narrowing) -> Result<Vec<Hit>> {
        crate::pg::search::search_narrowed(self, q, n)
    }

    fn mentions(&self, text: &str, project: Option<&str>, cap: usize) -> Result<Vec<Mention>> {
        crate::pg::search::mentions(self, text, project, cap)
    }

    fn reindex(&self) -> Result<ReindexReport> {
        crate::pg::reindex::reindex(self)
    }

    /// Searches are indexed by a queue that a server drains while idle. (A SQLite store
    /// catches its index up inside the search itself, in one write transaction that would
    /// hold appends back, so it has no idle work.)
    fn indexes_while_idle(&self) -> bool {
        true
    }

    fn index_idle_batch(&self) -> Result<Option<u64>> {
        crate::pg::search_queue::index_some(self)
    }

    /// Each transaction on a connection of its own (see [`PgStore::with_connections`]).
    fn with_connections(self: Box<Self>, n: usize) -> Box<dyn Engine> {
        Box::new((*self).with_connections(n))
    }

    /// Closed: its server expects a goodbye.
    fn close_for_exit(self: Box<Self>) {
        drop(self);
    }
}
