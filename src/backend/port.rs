//! What the read verbs of [`super::Db`] ask an engine, as two ports each engine answers
//! with its own SQL (SQLite's in `sqlite.rs`, the team store's in `pg.rs`): those verbs are
//! written once, over these traits, and meet an engine only in [`super::Db`]'s two read
//! dispatches.
//!
//! - [`Lookups`]: finding and listing sessions, and the lines a search named; each answer
//!   is one statement, or statements that need no common snapshot (a team store runs them
//!   outside a transaction, saving the `BEGIN` and `COMMIT` round trips).
//! - [`ReadTx`]: reads of what a session holds, in one read (a team store's read-only
//!   transaction, one snapshot; a SQLite pooled reader).

use crate::error::Result;
use crate::fork::ForkOrigin;
use crate::model::SessionRef;
use crate::query::{SessionFilter, SessionInfo, SessionRow, StoredLine};
use crate::restore::Location;
use crate::sdk::StoredMessage;
use crate::usage::{Scope, UsageRow};
use std::collections::HashMap;

/// A value that moves whenever the store's content does: the highest row id, the number
/// of sessions and the latest change time (the same statement on both engines).
pub(super) const CHANGE_MARKER: &str = "SELECT (SELECT max(id) FROM rows), \
     (SELECT count(*) FROM catalog), (SELECT max(last_modified) FROM catalog)";

/// Lookups whose statements need no common snapshot (see the module's notes).
pub(crate) trait Lookups {
    /// The session a user means (the rules of [`crate::query::resolve_session`]).
    fn resolve_session(&mut self, arg: &str) -> Result<SessionRef>;
    /// Calls `each` with every session the filter selects, in listing order (see
    /// [`crate::query::for_each_session`]).
    fn for_each_session(
        &mut self,
        filter: &SessionFilter,
        each: &mut dyn FnMut(&SessionRow<'_>) -> Result<()>,
    ) -> Result<()>;
    /// The sessions the filter selects (see [`crate::query::list_sessions`]).
    fn list_sessions(&mut self, filter: &SessionFilter) -> Result<Vec<SessionInfo>>;
    /// One session's catalog entry (see [`crate::query::get_session_info`]).
    fn session_info(
        &mut self,
        session: &SessionRef,
        directory: Option<&str>,
    ) -> Result<SessionInfo>;
    /// Whether a project folder of this exact name is stored.
    fn project_exists(&mut self, key: &str) -> Result<bool>;
    /// The stored session ids just before and after `id`, in byte order.
    fn neighbour_ids(&mut self, id: &str) -> Result<(Option<String>, Option<String>)>;
    /// Calls `each` with the stored bytes of each of these lines that exists (see
    /// [`crate::search::each_line`]).
    fn each_line(&mut self, lines: &[i64], each: &mut dyn FnMut(i64, &[u8])) -> Result<()>;
}

/// The reads of one read transaction (see the module's notes).
pub(crate) trait ReadTx {
    /// The session of exactly this project and id (see [`crate::query::find_exact_session`]).
    fn find_exact_session(&mut self, project: &str, session_id: &str) -> Result<SessionRef>;
    /// Every stored project folder name, in byte order.
    fn project_keys(&mut self) -> Result<Vec<String>>;
    /// Every tag some session has now, in byte order.
    fn tags(&mut self) -> Result<Vec<String>>;
    /// Every stored session id, sorted, each once.
    fn all_session_ids(&mut self) -> Result<Vec<String>>;
    /// [`CHANGE_MARKER`]'s three values.
    fn change_marker(&mut self) -> Result<(Option<i64>, i64, Option<i64>)>;
    /// The live main transcript of a session (`agent` `None`) or its sub-agent `agent`'s
    /// (see [`crate::query::session_transcript`]).
    fn session_transcript(
        &mut self,
        session: &SessionRef,
        agent: Option<&str>,
    ) -> Result<Option<i64>>;
    /// Every stored line of a transcript, in file order.
    fn transcript_lines(&mut self, transcript: i64) -> Result<Vec<StoredLine>>;
    /// Up to `limit` lines of a transcript after line `after`, in file order.
    fn transcript_lines_after(
        &mut self,
        transcript: i64,
        after: i64,
        limit: i64,
    ) -> Result<Vec<StoredLine>>;
    /// Line `ordinal` of a transcript and whether it failed its checksum (a team store
    /// keeps no checksums: never).
    fn transcript_line(&mut self, transcript: i64, ordinal: i64)
        -> Result<Option<(Vec<u8>, bool)>>;
    /// The SDK's `get_session_messages`, each `message` left as stored.
    fn stored_session_messages(
        &mut self,
        session: &SessionRef,
        limit: Option<i64>,
        offset: i64,
    ) -> Result<Vec<StoredMessage>>;
    /// The SDK's `get_subagent_messages`, each `message` left as stored.
    fn stored_subagent_messages(
        &mut self,
        session: &SessionRef,
        agent_id: &str,
        limit: Option<i64>,
        offset: i64,
    ) -> Result<Vec<StoredMessage>>;
    /// The SDK's `list_subagents`.
    fn list_subagents(&mut self, session: &SessionRef) -> Result<Vec<String>>;
    /// The recorded `timestamp` of each record of a session, by uuid.
    fn record_timestamps(&mut self, session: &SessionRef) -> Result<HashMap<String, String>>;
    /// Where a forked session came from.
    fn fork_origin(&mut self, session: &SessionRef) -> Result<Option<ForkOrigin>>;
    /// Where the session lives in Claude Code's trees.
    fn locations(&mut self, session: &SessionRef) -> Result<Vec<Location>>;
    /// The session's recorded cwd.
    fn recorded_cwd(&mut self, session: &SessionRef) -> Result<Option<String>>;
    /// The stored API responses in `scope`, oldest first.
    fn usage_rows(&mut self, scope: &Scope) -> Result<Vec<UsageRow>>;
}
