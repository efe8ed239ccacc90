//! One library API over the two stores: [`Db`] is a SQLite file ([`Store`]) or a
//! PostgreSQL team store ([`PgStore`]), chosen by the target's form (`postgres://` or
//! `postgresql://` is a team store; anything else a file). Each method is a store verb;
//! callers never branch on the backend.

use crate::checkpoint::Checkpointer;
use crate::error::Result;
use crate::export::{ExportReport, OnDamage};
use crate::fork::{ForkOptions, ForkOrigin, Forked};
use crate::model::{ImportReport, Progress, SessionRef};
use crate::pg::url::is_postgres_url;
#[cfg(feature = "postgres")]
use crate::pg::PgStore;
use crate::query::{SessionFilter, SessionInfo, StoredLine};
use crate::resume::{ResumeOptions, Resumed};
use crate::sdk::{SessionMessage, StoredMessage};
use crate::store::Store;
use crate::streams::{StreamStore, StreamTx};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An open store of either kind.
pub enum Db {
    /// The embedded SQLite store.
    Sqlite(Store),
    /// A PostgreSQL team store.
    #[cfg(feature = "postgres")]
    Postgres(PgStore),
}

impl Db {
    /// Opens `target`, creating it when it is a file that does not exist yet (a team
    /// store's database must exist; its tables are created).
    ///
    /// # Errors
    /// As [`Store::open`] or [`PgStore::connect`].
    pub fn open(target: &str) -> Result<Db> {
        if is_postgres_url(target) {
            return Db::connect_team_store(target);
        }
        Ok(Db::Sqlite(Store::open(target)?))
    }

    /// Opens an existing store for a verb that only reads (see [`Store::open_read`]).
    ///
    /// # Errors
    /// As [`Store::open_read`] or [`PgStore::connect`].
    pub fn open_read(target: &str) -> Result<Db> {
        if is_postgres_url(target) {
            return Db::connect_team_store(target);
        }
        Ok(Db::Sqlite(Store::open_read(target)?))
    }

    /// Opens an existing store for a verb that changes it (see [`Store::open_existing`]).
    ///
    /// # Errors
    /// As [`Store::open_existing`] or [`PgStore::connect`].
    pub fn open_existing(target: &str) -> Result<Db> {
        if is_postgres_url(target) {
            return Db::connect_team_store(target);
        }
        Ok(Db::Sqlite(Store::open_existing(target)?))
    }

    #[cfg(feature = "postgres")]
    fn connect_team_store(target: &str) -> Result<Db> {
        Ok(Db::Postgres(PgStore::connect(target)?))
    }

    /// A build without the `postgres` feature refuses a team store's URL (never takes it
    /// for a file name).
    #[cfg(not(feature = "postgres"))]
    fn connect_team_store(target: &str) -> Result<Db> {
        Err(crate::error::Error::Invalid(format!(
            "{}: this build of sessiondb has no team store (build it with the `postgres` \
             feature)",
            crate::pg::url::redact(target)
        )))
    }

    /// What to call the store in messages: the file's path, or the URL without its password.
    pub fn shown(&self) -> String {
        match self {
            Db::Sqlite(s) => s.path().display().to_string(),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.shown().to_owned(),
        }
    }

    /// Imports transcripts and session files (see [`crate::import::import_paths`]).
    ///
    /// # Errors
    /// As the backend's importer.
    pub fn import_paths(&self, paths: &[PathBuf], progress: &dyn Progress) -> Result<ImportReport> {
        match self {
            Db::Sqlite(s) => crate::import::import_paths(s, paths, progress),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::import::import_paths(p, paths, progress),
        }
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
        match self {
            Db::Sqlite(s) => crate::import::import_session(s, transcript, progress),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::import::import_session(p, transcript, progress),
        }
    }

    /// Finds the session a user means (see [`crate::query::resolve_session`]).
    ///
    /// # Errors
    /// When the argument names no session or several.
    pub fn resolve_session(&self, arg: &str) -> Result<SessionRef> {
        match self {
            Db::Sqlite(s) => crate::query::resolve_session(&*s.reader()?, arg),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read_single(|c| crate::pg::query::resolve_session(c, arg)),
        }
    }

    /// Lists sessions from the catalog (see [`crate::query::list_sessions`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn list_sessions(&self, filter: &SessionFilter) -> Result<Vec<SessionInfo>> {
        match self {
            Db::Sqlite(s) => crate::query::list_sessions(&*s.reader()?, filter),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read_single(|c| crate::pg::query::list_sessions(c, filter)),
        }
    }

    /// One session's catalog entry (see [`crate::query::get_session_info`]).
    ///
    /// # Errors
    /// When the session has no catalog row, or on a database error.
    pub fn session_info(
        &self,
        session: &SessionRef,
        directory: Option<&str>,
    ) -> Result<SessionInfo> {
        match self {
            Db::Sqlite(s) => crate::query::get_session_info(&*s.reader()?, session, directory),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => {
                p.read_single(|c| crate::pg::query::get_session_info(c, session, directory))
            }
        }
    }

    /// The session of exactly this project and id (see [`crate::query::find_exact_session`]):
    /// the web viewer's paths name both, and match nothing else.
    ///
    /// # Errors
    /// [`crate::error::Error::SessionNotFound`], or a database error.
    pub fn find_exact_session(&self, project: &str, session_id: &str) -> Result<SessionRef> {
        match self {
            Db::Sqlite(s) => crate::query::find_exact_session(&*s.reader()?, project, session_id),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => {
                p.read(|tx| crate::pg::query::find_exact_session(tx, project, session_id))
            }
        }
    }

    /// Every stored project folder name, in byte order.
    ///
    /// # Errors
    /// On a database error.
    pub fn project_keys(&self) -> Result<Vec<String>> {
        match self {
            Db::Sqlite(s) => crate::query::project_keys(&*s.reader()?),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read(crate::pg::query::project_keys),
        }
    }

    /// Every tag some session has now, in byte order.
    ///
    /// # Errors
    /// On a database error.
    pub fn tags(&self) -> Result<Vec<String>> {
        match self {
            Db::Sqlite(s) => crate::query::tags(&*s.reader()?),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read(crate::pg::query::tags),
        }
    }

    /// The id of a session's live main transcript (`agent` `None`) or of its sub-agent
    /// `agent`'s, if stored: what [`Db::transcript_page`] reads.
    ///
    /// # Errors
    /// On a database error.
    pub fn transcript_id(&self, session: &SessionRef, agent: Option<&str>) -> Result<Option<i64>> {
        match self {
            Db::Sqlite(s) => crate::query::session_transcript(&*s.reader()?, session, agent),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => {
                p.read(|tx| crate::pg::query::session_transcript(tx, session, agent))
            }
        }
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
        match self {
            Db::Sqlite(s) => {
                crate::query::transcript_lines_after(&*s.reader()?, transcript, after, limit)
            }
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => {
                p.read(|tx| crate::pg::query::transcript_lines_after(tx, transcript, after, limit))
            }
        }
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
        match self {
            Db::Sqlite(s) => {
                let conn = s.reader()?;
                crate::query::session_transcript(&conn, session, agent)?
                    .map(|t| crate::query::transcript_lines(&conn, t))
                    .transpose()
            }
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read(|tx| {
                crate::pg::query::session_transcript(tx, session, agent)?
                    .map(|t| crate::pg::query::transcript_lines(tx, t))
                    .transpose()
            }),
        }
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
        let (raw, damaged) = match self {
            Db::Sqlite(s) => {
                let conn = s.reader()?;
                crate::query::session_transcript(&conn, session, agent)?
                    .map(|t| crate::query::transcript_line(&conn, t, ordinal))
                    .transpose()?
            }
            // A team store keeps no checksums.
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read(|tx| {
                crate::pg::query::session_transcript(tx, session, agent)?
                    .map(|t| {
                        crate::pg::query::transcript_line(tx, t, ordinal)
                            .map(|line| line.map(|raw| (raw, false)))
                    })
                    .transpose()
            })?,
        }
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

    /// Whether a project folder of this exact name is stored.
    ///
    /// # Errors
    /// On a database error.
    pub fn project_exists(&self, key: &str) -> Result<bool> {
        match self {
            Db::Sqlite(s) => crate::query::project_exists(&*s.reader()?, key),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read_single(|c| crate::pg::query::project_exists(c, key)),
        }
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
        match self {
            Db::Sqlite(s) => crate::export::export_session_checked(s, session, out, on_damage),
            // A team store keeps no checksums of its own: PostgreSQL's page checksums (when
            // the cluster has them) are its guard against damaged bytes.
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::export::export_session(p, session, out),
        }
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
        match self {
            Db::Sqlite(s) => crate::export::export_tree_with(s, dir, project, force),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::export::export_tree(p, dir, project),
        }
    }

    /// Resumes a stored session (see [`Store::resume`]).
    ///
    /// # Errors
    /// As [`Store::resume`].
    pub fn resume(&self, session: &SessionRef, options: &ResumeOptions) -> Result<Resumed> {
        match self {
            Db::Sqlite(s) => s.resume(session, options),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::resume::resume(p, session, options),
        }
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
        match self {
            Db::Sqlite(s) => s.resume_api_view(session, options),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::resume::resume_api_view(p, session, options),
        }
    }

    /// The session `--continue` picks in a project (see [`Store::continue_target`]).
    ///
    /// # Errors
    /// When the project has no resumable session.
    pub fn continue_target(&self, project: &str) -> Result<SessionRef> {
        match self {
            Db::Sqlite(s) => s.continue_target(project),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::resume::continue_target(p, project),
        }
    }

    /// The stored session ids just before and after `id` (see [`crate::query::neighbour_ids`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn neighbour_ids(&self, id: &str) -> Result<(Option<String>, Option<String>)> {
        match self {
            Db::Sqlite(s) => crate::query::neighbour_ids(&*s.reader()?, id),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read_single(|c| crate::pg::query::neighbour_ids(c, id)),
        }
    }

    /// Every stored session id, sorted, each once.
    ///
    /// # Errors
    /// On a database error.
    pub fn all_session_ids(&self) -> Result<Vec<String>> {
        match self {
            Db::Sqlite(s) => crate::query::all_session_ids(&*s.reader()?),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read(crate::pg::query::all_session_ids),
        }
    }

    /// Runs a full-text search, best hits first. Lines still queued for the index are indexed
    /// first (when that write fails the search runs without them: `Err` is then
    /// only the search's own failure, and the catch-up error is returned beside the hits).
    ///
    /// # Errors
    /// On a database error (never on what the user typed).
    pub fn search(
        &self,
        q: &crate::search::SearchQuery,
    ) -> Result<(Vec<crate::search::Hit>, Option<crate::error::Error>)> {
        self.search_narrowed(q, &crate::search::Narrowing::default())
    }

    /// [`Db::search`], keeping only the hits `n` keeps (the MCP `find` tool's filters; see
    /// [`crate::search::search_narrowed`]).
    ///
    /// # Errors
    /// On a database error (never on what the user typed).
    pub fn search_narrowed(
        &self,
        q: &crate::search::SearchQuery,
        n: &crate::search::Narrowing,
    ) -> Result<(Vec<crate::search::Hit>, Option<crate::error::Error>)> {
        match self {
            Db::Sqlite(s) => {
                let caught_up = crate::search::catch_up(s).err();
                Ok((
                    crate::search::search_narrowed(&*s.reader()?, q, n)?,
                    caught_up,
                ))
            }
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => {
                let caught_up = crate::pg::search_queue::catch_up(p).err();
                Ok((crate::pg::search::search_narrowed(p, q, n)?, caught_up))
            }
        }
    }

    /// The newest `cap` lines whose indexed text names a phrase, unranked (see
    /// [`crate::search::mentions`]). Lines still queued for the index are indexed first,
    /// as for [`Db::search`].
    ///
    /// # Errors
    /// On a database error (never on what the user typed).
    pub fn mentions(
        &self,
        text: &str,
        project: Option<&str>,
        cap: usize,
    ) -> Result<Vec<crate::search::Mention>> {
        match self {
            Db::Sqlite(s) => {
                // As a search: a failed catch-up leaves the newest lines unseen, no more.
                let _ = crate::search::catch_up(s);
                crate::search::mentions(&*s.reader()?, text, project, cap)
            }
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => {
                let _ = crate::pg::search_queue::catch_up(p);
                crate::pg::search::mentions(p, text, project, cap)
            }
        }
    }

    /// Calls `each` with the stored bytes of each of these lines (keys from
    /// [`Db::mentions`]) that exists (see [`crate::search::each_line`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn each_line(&self, lines: &[i64], each: &mut dyn FnMut(i64, &[u8])) -> Result<()> {
        match self {
            Db::Sqlite(s) => crate::search::each_line(&*s.reader()?, lines, each),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::search::each_line(p, lines, each),
        }
    }

    /// Sets a session's custom title (see [`crate::metadata::rename_session`]).
    ///
    /// # Errors
    /// As [`crate::metadata::rename_session`].
    pub fn rename_session(&self, session: &SessionRef, title: &str) -> Result<String> {
        match self {
            Db::Sqlite(s) => crate::metadata::rename_session(s, session, title),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::metadata::rename_session(p, session, title),
        }
    }

    /// Sets or clears a session's tag (see [`crate::metadata::tag_session`]).
    ///
    /// # Errors
    /// As [`crate::metadata::tag_session`].
    pub fn tag_session(&self, session: &SessionRef, tag: Option<&str>) -> Result<String> {
        match self {
            Db::Sqlite(s) => crate::metadata::tag_session(s, session, tag),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::metadata::tag_session(p, session, tag),
        }
    }

    /// Removes a session and everything stored for it (see
    /// [`crate::metadata::delete_session`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn delete_session(&self, session: &SessionRef) -> Result<crate::metadata::DeleteReport> {
        match self {
            Db::Sqlite(s) => crate::metadata::delete_session(s, session),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::metadata::delete_session(p, session),
        }
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
        match self {
            Db::Sqlite(s) => s.append_with(session, entries, options),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::record::append_with(p, session, entries, options),
        }
    }

    /// Rebuilds the search index and every catalog row (see [`crate::search::reindex`] and
    /// [`crate::pg::reindex::reindex`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn reindex(&self) -> Result<crate::search::ReindexReport> {
        match self {
            Db::Sqlite(s) => crate::search::reindex(s),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::reindex::reindex(p),
        }
    }

    /// The stored API responses in `scope`, oldest first, for the usage reports (see
    /// [`crate::usage`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn usage_rows(&self, scope: &crate::usage::Scope) -> Result<Vec<crate::usage::UsageRow>> {
        match self {
            Db::Sqlite(s) => crate::usage::sqlite::read(&*s.reader()?, scope),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read(|tx| crate::pg::usage::read(tx, scope)),
        }
    }

    /// Checks what can go stale or be damaged and, with `repair`, repairs it (see
    /// [`crate::check::check`] and [`crate::pg::check::check`]).
    ///
    /// # Errors
    /// A database error that stops the check itself.
    pub fn check(&self, repair: bool) -> Result<crate::check::CheckReport> {
        match self {
            Db::Sqlite(s) => crate::check::check(s, repair),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::check::check(p, repair),
        }
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
        match self {
            Db::Sqlite(s) => crate::restore::restore(s, session, options),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::restore::restore(p, session, options),
        }
    }

    /// Where the session lives in Claude Code's trees (see [`crate::restore::locations`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn locations(&self, session: &SessionRef) -> Result<Vec<crate::restore::Location>> {
        match self {
            Db::Sqlite(s) => crate::restore::locations(&*s.reader()?, session),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::restore::locations(p, session),
        }
    }

    /// The session's recorded cwd (see [`crate::restore::recorded_cwd`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn recorded_cwd(&self, session: &SessionRef) -> Result<Option<String>> {
        match self {
            Db::Sqlite(s) => crate::restore::recorded_cwd(&*s.reader()?, session),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::restore::recorded_cwd(p, session),
        }
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
        match self {
            Db::Sqlite(s) => {
                crate::sdk::stored_session_messages(&*s.reader()?, session, limit, offset)
            }
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::sdk::stored_session_messages(p, session, limit, offset),
        }
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
        match self {
            Db::Sqlite(s) => crate::sdk::stored_subagent_messages(
                &*s.reader()?,
                session,
                agent_id,
                limit,
                offset,
            ),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => {
                crate::pg::sdk::stored_subagent_messages(p, session, agent_id, limit, offset)
            }
        }
    }

    /// The SDK's `list_subagents` (see [`crate::sdk::list_subagents`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn list_subagents(&self, session: &SessionRef) -> Result<Vec<String>> {
        match self {
            Db::Sqlite(s) => crate::sdk::list_subagents(&*s.reader()?, session),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::sdk::list_subagents(p, session),
        }
    }

    /// The recorded `timestamp` of each record of a session, by uuid (see
    /// [`crate::query::record_timestamps`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn record_timestamps(&self, session: &SessionRef) -> Result<HashMap<String, String>> {
        match self {
            Db::Sqlite(s) => crate::query::record_timestamps(&*s.reader()?, session),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read(|tx| crate::pg::query::record_timestamps(tx, session)),
        }
    }

    /// Forks a stored session into a new one (see [`Store::fork`]).
    ///
    /// # Errors
    /// As [`Store::fork`].
    pub fn fork(&self, source: &SessionRef, options: &ForkOptions) -> Result<Forked> {
        match self {
            Db::Sqlite(s) => s.fork(source, options),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::fork::fork(p, source, options),
        }
    }

    /// Where a session made by [`Db::fork`] came from (see [`crate::fork::fork_origin`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn fork_origin(&self, session: &SessionRef) -> Result<Option<ForkOrigin>> {
        match self {
            Db::Sqlite(s) => crate::fork::fork_origin(&*s.reader()?, session),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::fork::fork_origin(p, session),
        }
    }

    /// A value that moves whenever the store's content does (a line stored, a session added,
    /// changed or removed), cheap enough to poll every half second: the highest row id, the
    /// number of sessions and the latest change time. The web viewer's live pages poll it
    /// to learn of writes made by other processes (`capture`, `import`, another server).
    ///
    /// # Errors
    /// On a database error.
    pub fn change_marker(&self) -> Result<String> {
        const MARKER: &str = "SELECT (SELECT max(id) FROM rows), (SELECT count(*) FROM catalog), \
             (SELECT max(last_modified) FROM catalog)";
        let (rows, sessions, modified): (Option<i64>, i64, Option<i64>) = match self {
            Db::Sqlite(s) => s
                .reader()?
                .query_row(MARKER, [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?,
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read(|tx| {
                let r = tx.query_one(MARKER, &[])?;
                Ok((r.get(0), r.get(1), r.get(2)))
            })?,
        };
        Ok(format!(
            "{}.{sessions}.{}",
            rows.unwrap_or(0),
            modified.unwrap_or(0)
        ))
    }
}

impl Db {
    /// Starts the upkeep a long-running server needs: WAL checkpoints on a thread of their
    /// own for a SQLite store ([`Checkpointer`]); a team store needs none (`None`).
    ///
    /// # Errors
    /// When the checkpoint thread cannot start.
    pub fn start_upkeep(&self, period: Duration) -> Result<Option<Checkpointer>> {
        match self {
            Db::Sqlite(s) => Ok(Some(Checkpointer::start(s, Some(period))?)),
            #[cfg(feature = "postgres")]
            Db::Postgres(_) => Ok(None),
        }
    }

    /// Stops what [`Db::start_upkeep`] started, after a last checkpoint.
    ///
    /// # Errors
    /// When the last checkpoint fails.
    pub fn stop_upkeep(&self, upkeep: Checkpointer) -> Result<()> {
        match self {
            Db::Sqlite(s) => upkeep.stop(s),
            #[cfg(feature = "postgres")]
            Db::Postgres(_) => Ok(()),
        }
    }

    /// Whether searches are indexed by a queue that a server drains while idle (a team
    /// store). A SQLite store catches its index up inside the search itself, in one write
    /// transaction that would hold appends back, so it has no idle work.
    pub fn indexes_while_idle(&self) -> bool {
        #[cfg(feature = "postgres")]
        return matches!(self, Db::Postgres(_));
        #[cfg(not(feature = "postgres"))]
        false
    }

    /// Indexes one batch of the search queue (see [`Db::indexes_while_idle`]): the lines
    /// indexed, or `None` when no batch was free (always `None` on SQLite).
    ///
    /// # Errors
    /// On a database error; the batch's lines stay queued.
    pub fn index_idle_batch(&self) -> Result<Option<u64>> {
        match self {
            Db::Sqlite(_) => Ok(None),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => crate::pg::search_queue::index_some(p),
        }
    }
}

impl From<Store> for Db {
    fn from(store: Store) -> Db {
        Db::Sqlite(store)
    }
}

#[cfg(feature = "postgres")]
impl From<PgStore> for Db {
    fn from(store: PgStore) -> Db {
        Db::Postgres(store)
    }
}

/// Write-back to Claude Code's files ([`crate::write_back`]) is a capability of a SQLite
/// store, whose sessions are this machine's files; a team store's session may come from
/// another machine, so it never writes them.
impl Db {
    /// Whether changes can be written back to Claude Code's files.
    pub fn writes_back(&self) -> bool {
        matches!(self, Db::Sqlite(_))
    }

    /// Whether the file a session was imported from is still there (`false` on a team store).
    ///
    /// # Errors
    /// On a database error.
    pub fn write_back_file_present(&self, session: &SessionRef) -> Result<bool> {
        match self {
            Db::Sqlite(s) => crate::write_back::file_present(s, session),
            #[cfg(feature = "postgres")]
            Db::Postgres(_) => Ok(false),
        }
    }

    /// Checks that a session's file can take a write-back (see [`crate::write_back::check`]).
    ///
    /// # Errors
    /// When the file moved on, is gone, or the store is a team store.
    pub fn write_back_check(&self, session: &SessionRef) -> Result<crate::write_back::Target> {
        match self {
            Db::Sqlite(s) => crate::write_back::check(s, session),
            #[cfg(feature = "postgres")]
            Db::Postgres(_) => Err(Self::no_write_back()),
        }
    }

    /// Appends the lines a change added to the checked file (see [`crate::write_back::apply`]).
    ///
    /// # Errors
    /// As [`crate::write_back::apply`], or on a team store.
    pub fn write_back_apply(&self, target: &crate::write_back::Target) -> Result<u64> {
        match self {
            Db::Sqlite(s) => crate::write_back::apply(s, target),
            #[cfg(feature = "postgres")]
            Db::Postgres(_) => Err(Self::no_write_back()),
        }
    }

    /// Writes a new session (a fork) beside its source's file (see
    /// [`crate::write_back::write_new`]).
    ///
    /// # Errors
    /// As [`crate::write_back::write_new`], or on a team store.
    pub fn write_back_new(&self, source: &SessionRef, new: &SessionRef) -> Result<PathBuf> {
        match self {
            Db::Sqlite(s) => crate::write_back::write_new(s, source, new),
            #[cfg(feature = "postgres")]
            Db::Postgres(_) => Err(Self::no_write_back()),
        }
    }

    #[cfg(feature = "postgres")]
    fn no_write_back() -> crate::error::Error {
        crate::error::Error::Invalid(
            "a team store does not write to Claude Code's files".to_owned(),
        )
    }
}

impl Db {
    /// Lets a team store run up to `n` transactions at once, each on a connection of its
    /// own (see [`PgStore::with_connections`]); a SQLite store already reads in parallel.
    #[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
    pub fn with_connections(self, n: usize) -> Db {
        match self {
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => Db::Postgres(p.with_connections(n)),
            Db::Sqlite(s) => Db::Sqlite(s),
        }
    }

    /// Ends the use of a store by a process that exits right after, without closing a
    /// SQLite store: the exit releases the file and its locks as closing would, and closing
    /// first frees every object of the parsed schema one by one (about 6 % of `sessions
    /// --limit 1`). Only for a store opened to read ([`Db::open_read`]), which leaves
    /// nothing to write on close. A team store is closed: its server expects a goodbye.
    pub fn close_for_exit(self) {
        match self {
            Db::Sqlite(store) => std::mem::forget(store),
            #[cfg(feature = "postgres")]
            Db::Postgres(store) => drop(store),
        }
    }

    /// Calls `each` with every session the filter selects, in listing order, from one
    /// snapshot, without collecting them (`sessions --json` streams its output).
    ///
    /// # Errors
    /// `each`'s error, or a database error.
    pub fn for_each_session(
        &self,
        filter: &SessionFilter,
        each: impl FnMut(&crate::query::SessionRow<'_>) -> Result<()>,
    ) -> Result<()> {
        match self {
            Db::Sqlite(s) => crate::query::for_each_session(&*s.reader()?, filter, each),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => {
                p.read_single(|c| crate::pg::query::for_each_session(c, filter, each))
            }
        }
    }
}

/// The SessionStore protocol's transactions, on whichever engine the store is.
impl StreamStore for Db {
    fn write_streams<T>(&self, f: impl FnOnce(&mut dyn StreamTx) -> Result<T>) -> Result<T> {
        match self {
            Db::Sqlite(s) => s.write_streams(f),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.write_streams(f),
        }
    }

    fn read_streams<T>(&self, f: impl FnOnce(&mut dyn StreamTx) -> Result<T>) -> Result<T> {
        match self {
            Db::Sqlite(s) => s.read_streams(f),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read_streams(f),
        }
    }
}
