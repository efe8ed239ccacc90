//! Reading what one session holds: its transcripts line by line or a page at a time,
//! written back out as files, resumed, read as the Agent SDK's messages, and the facts
//! kept beside it (fork origin, locations in Claude Code's tree, usage). Nothing here
//! changes the store.

use super::Db;
use crate::error::Result;
use crate::export::{ExportReport, OnDamage};
use crate::fork::ForkOrigin;
use crate::model::SessionRef;
use crate::query::StoredLine;
use crate::resume::{ResumeOptions, Resumed};
use crate::sdk::{SessionMessage, StoredMessage};
#[cfg(doc)] // the docs name its methods, which these verbs mirror
use crate::store::Store;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

impl Db {
    /// The id of a session's live main transcript (`agent` `None`) or of its sub-agent
    /// `agent`'s, if stored: what [`Db::transcript_page`] reads.
    ///
    /// # Errors
    /// On a database error.
    pub fn transcript_id(&self, session: &SessionRef, agent: Option<&str>) -> Result<Option<i64>> {
        self.read(|r| r.session_transcript(session, agent))
    }

    /// Up to `limit` stored lines of transcript `transcript` after line `after` (`-1`: from
    /// the first), in file order: a page of the transcript, for a reader that holds a page
    /// at a time (the streamed session page).
    ///
    /// # Errors
    /// On a database error.
    pub fn transcript_page(
        &self,
        transcript: i64,
        after: i64,
        limit: usize,
    ) -> Result<Vec<StoredLine>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(|r| r.transcript_lines_after(transcript, after, limit))
    }

    /// The stored lines of a session's main transcript (`agent` `None`) or of its sub-agent
    /// `agent`'s, in file order; `None` when that transcript is not stored.
    ///
    /// # Errors
    /// On a database error.
    pub fn transcript_lines(
        &self,
        session: &SessionRef,
        agent: Option<&str>,
    ) -> Result<Option<Vec<StoredLine>>> {
        self.read(|r| {
            r.session_transcript(session, agent)?
                .map(|t| r.transcript_lines(t))
                .transpose()
        })
    }

    /// Line `ordinal` (0-based) of a session's main transcript or of its sub-agent
    /// `agent`'s, as stored: one line read, not the transcript.
    ///
    /// # Errors
    /// [`crate::error::Error::NotFound`] when the transcript or the line is not stored; a database
    /// error.
    pub fn transcript_line(
        &self,
        session: &SessionRef,
        agent: Option<&str>,
        ordinal: i64,
    ) -> Result<StoredLine> {
        let (raw, damaged) = self
            .read(|r| {
                r.session_transcript(session, agent)?
                    .map(|t| r.transcript_line(t, ordinal))
                    .transpose()
            })?
            .ok_or_else(|| crate::error::Error::NotFound("no such transcript".into()))?
            .ok_or_else(|| {
                crate::error::Error::NotFound(format!("no line {} in this transcript", ordinal + 1))
            })?;
        Ok(StoredLine {
            ordinal,
            raw,
            damaged,
        })
    }

    /// Writes a session's main transcript exactly as imported, each line checked against its
    /// checksum on SQLite ([`crate::export::export_session_checked`]).
    ///
    /// # Errors
    /// When the session has no main transcript, or on a database or write error.
    pub fn export_session(
        &self,
        session: &SessionRef,
        out: &mut dyn Write,
        on_damage: OnDamage<'_>,
    ) -> Result<u64> {
        // The rules are written once over `ExportSource` (`crate::export::session_over`);
        // each engine brings its reader, a SQLite one with its dictionary mapping and its
        // lines' checksums.
        self.engine.export_session(session, out, on_damage)
    }

    /// Rebuilds the projects tree under `dir` (see [`crate::export::export_tree_with`]).
    ///
    /// # Errors
    /// On a database error, or when `dir` cannot be created.
    pub fn export_tree(
        &self,
        dir: &Path,
        project: Option<&str>,
        force: bool,
    ) -> Result<ExportReport> {
        // The rules are `crate::export::tree_over`. The team store's export takes no
        // `force`: it runs as without it.
        self.engine.export_tree(dir, project, force)
    }

    /// Resumes a stored session (see [`Store::resume`]).
    ///
    /// # Errors
    /// As [`Store::resume`].
    pub fn resume(&self, session: &SessionRef, options: &ResumeOptions) -> Result<Resumed> {
        // Resume's rules are written once over `ResumeSource` (`crate::resume`); its two
        // entry points open each engine's read their own way.
        self.engine.resume(session, options)
    }

    /// The API view of [`Db::resume`] (see [`Store::resume_api_view`]): either store reads
    /// only the conversation and the model.
    ///
    /// # Errors
    /// As [`Store::resume`].
    pub fn resume_api_view(
        &self,
        session: &SessionRef,
        options: &ResumeOptions,
    ) -> Result<Vec<serde_json::Value>> {
        self.engine.resume_api_view(session, options)
    }

    /// The session `--continue` picks in a project (see [`Store::continue_target`]).
    ///
    /// # Errors
    /// When the project has no resumable session.
    pub fn continue_target(&self, project: &str) -> Result<SessionRef> {
        self.engine.continue_target(project)
    }

    /// The SDK's `get_session_messages` (see [`crate::sdk::get_session_messages`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn session_messages(
        &self,
        session: &SessionRef,
        limit: Option<i64>,
        offset: i64,
    ) -> Result<Vec<SessionMessage>> {
        Ok(self
            .stored_session_messages(session, limit, offset)?
            .into_iter()
            .map(StoredMessage::parse)
            .collect())
    }

    /// [`Db::session_messages`] with each `message` left as stored (see
    /// [`crate::sdk::stored_session_messages`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn stored_session_messages(
        &self,
        session: &SessionRef,
        limit: Option<i64>,
        offset: i64,
    ) -> Result<Vec<StoredMessage>> {
        self.read(|r| r.stored_session_messages(session, limit, offset))
    }

    /// The SDK's `get_subagent_messages` (see [`crate::sdk::get_subagent_messages`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn subagent_messages(
        &self,
        session: &SessionRef,
        agent_id: &str,
        limit: Option<i64>,
        offset: i64,
    ) -> Result<Vec<SessionMessage>> {
        Ok(self
            .stored_subagent_messages(session, agent_id, limit, offset)?
            .into_iter()
            .map(StoredMessage::parse)
            .collect())
    }

    /// [`Db::subagent_messages`] with each `message` left as stored (see
    /// [`crate::sdk::stored_subagent_messages`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn stored_subagent_messages(
        &self,
        session: &SessionRef,
        agent_id: &str,
        limit: Option<i64>,
        offset: i64,
    ) -> Result<Vec<StoredMessage>> {
        self.read(|r| r.stored_subagent_messages(session, agent_id, limit, offset))
    }

    /// The SDK's `list_subagents` (see [`crate::sdk::list_subagents`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn list_subagents(&self, session: &SessionRef) -> Result<Vec<String>> {
        self.read(|r| r.list_subagents(session))
    }

    /// The recorded `timestamp` of each record of a session, by uuid (see
    /// [`crate::query::record_timestamps`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn record_timestamps(&self, session: &SessionRef) -> Result<HashMap<String, String>> {
        self.read(|r| r.record_timestamps(session))
    }

    /// Where a session made by [`Db::fork`] came from (see [`crate::fork::fork_origin`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn fork_origin(&self, session: &SessionRef) -> Result<Option<ForkOrigin>> {
        self.read(|r| r.fork_origin(session))
    }

    /// Where the session lives in Claude Code's trees (see [`crate::restore::locations`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn locations(&self, session: &SessionRef) -> Result<Vec<crate::restore::Location>> {
        self.read(|r| r.locations(session))
    }

    /// The session's recorded cwd (see [`crate::restore::recorded_cwd`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn recorded_cwd(&self, session: &SessionRef) -> Result<Option<String>> {
        self.read(|r| r.recorded_cwd(session))
    }

    /// The stored API responses in `scope`, oldest first, for the usage reports (see
    /// [`crate::usage`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn usage_rows(&self, scope: &crate::usage::Scope) -> Result<Vec<crate::usage::UsageRow>> {
        self.read(|r| r.usage_rows(scope))
    }
}
