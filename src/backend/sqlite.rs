//! The SQLite store's answers to the read ports, on a pooled reader: each the function of
//! [`crate::query`] (or of the module that owns the table) that the verb called before.

use super::port::{Lookups, ReadTx, CHANGE_MARKER};
use crate::error::Result;
use crate::fork::ForkOrigin;
use crate::model::SessionRef;
use crate::query::{self, SessionFilter, SessionInfo, SessionRow, StoredLine};
use crate::restore::Location;
use crate::sdk::StoredMessage;
use crate::usage::{Scope, UsageRow};
use rusqlite::Connection;
use std::collections::HashMap;

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
