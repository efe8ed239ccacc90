//! The Agent SDK's `SessionStore` protocol over the store: streams of transcript entries keyed
//! by `{project_key, session_id, subpath?}`.
//!
//! A stream is a transcript: `project_key` is a project folder name, `session_id` a session,
//! `subpath` a transcript's subpath (`None` for the main one). Appended entries become rows
//! exactly as imported lines do (projections, side tables, catalog, search), so a mirrored
//! session lists, searches and resumes like an imported one, and an imported session can be
//! loaded through the protocol.
//!
//! The protocol's rules, as implemented here:
//! * an entry whose (non-empty, string) `uuid` the stream already holds is ignored, and so is
//!   a repeat within one batch; entries without one are always appended;
//! * `load` returns the stored JSON objects in append order, deep-equal to what was appended
//!   (insignificant whitespace aside), or `None` for a stream never written;
//! * `mtime` is the storage write time in epoch ms, strictly increasing per stream;
//! * an empty batch changes nothing (it creates no stream);
//! * deleting a main key removes the session with every stream under it and its summary.
//!
//! The rules live here once; each backend answers the questions they ask in its own SQL
//! ([`StreamTx`]: `sqlite` here, and `crate::pg::streams` for a team store), inside one
//! transaction of its own ([`StreamStore`]). On PostgreSQL an append
//! locks the session's row first (`SELECT … FOR UPDATE`), so the uuid rule holds across
//! processes and machines.
//!
//! Summaries (the protocol's sidecar) are folded by the client with the SDK's own
//! `fold_session_summary` and persisted verbatim: [`summary_pending`] hands out the stored
//! lines the sidecar has not seen, [`summary_put`] stores the fold if nobody else folded in
//! between (compare-and-swap on a watermark), so folds are serialised per session without a
//! lock held across requests.

mod sqlite;

use crate::error::{Error, Result};
use crate::jsonl::{self, Envelope, Line, LineStatus};
use crate::names::{self, NameKind};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashSet;

/// A stream's key: the protocol's `SessionKey`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct StreamKey {
    /// The project scope (a project folder name for Claude Code's own keys).
    pub project_key: String,
    /// The session id (any string).
    pub session_id: String,
    /// The transcript inside the session (`subagents/agent-<id>`); `None` for the main one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subpath: Option<String>,
}

impl StreamKey {
    /// The subpath as stored: `""` for the main transcript.
    fn stored_subpath(&self) -> &str {
        self.subpath.as_deref().unwrap_or("")
    }
}

/// Checks a subpath the way the SDK does before it materialises one: relative, `/`-separated,
/// no empty, `.` or `..` component, no NUL or control character, no drive prefix or backslash
/// (the rule of [`crate::names::check_subpath`]).
///
/// # Errors
/// A message naming the problem.
pub fn check_subpath(subpath: &str) -> std::result::Result<(), String> {
    names::check_subpath(subpath).map_err(|e| e.to_string())
}

/// Checks a key: its project key and session id are one path component each, its subpath
/// (when there is one) a relative path of such components (see [`crate::names`]). Checked by
/// every verb, so a name that could not be stored is never looked up either.
///
/// # Errors
/// [`Error::Invalid`] (a 400) naming the name and the problem.
pub fn check_key(key: &StreamKey) -> Result<()> {
    check_names(&key.project_key, Some(&key.session_id))?;
    match &key.subpath {
        Some(s) => names::check_subpath(s).map_err(as_invalid),
        None => Ok(()),
    }
}

/// Checks a project key and, when given, a session id (for the verbs without a full key).
fn check_names(project_key: &str, session_id: Option<&str>) -> Result<()> {
    names::check(NameKind::Project, project_key).map_err(as_invalid)?;
    match session_id {
        Some(id) => names::check(NameKind::Session, id).map_err(as_invalid),
        None => Ok(()),
    }
}

/// A bad name is a bad request: the server answers every [`Error::Invalid`] with a 400.
fn as_invalid(e: Error) -> Error {
    Error::Invalid(e.to_string())
}

/// The entries of a batch as stored lines: one JSONL line each (an entry spread over several
/// lines is made compact; anything else is kept as sent).
fn entry_lines<'a>(entries: &[&'a RawValue]) -> Vec<Cow<'a, [u8]>> {
    entries
        .iter()
        .map(|raw| {
            let text = raw.get();
            if text.bytes().any(|b| b == b'\n' || b == b'\r') {
                Cow::Owned(compact(text.as_bytes()))
            } else {
                Cow::Borrowed(text.as_bytes())
            }
        })
        .collect()
}

/// Projects every line of a batch, checking that each is a JSON object with a string `type`.
fn check_entries<'a>(lines: &'a [Cow<'_, [u8]>]) -> Result<Vec<Envelope<'a>>> {
    let mut out = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let (status, env) = Envelope::parse(line);
        if status != LineStatus::Record {
            return Err(Error::Invalid(format!("entries[{i}] is not a JSON object")));
        }
        if env.kind.is_none() {
            return Err(Error::Invalid(format!(
                "entries[{i}] has no string \"type\""
            )));
        }
        out.push(env);
    }
    Ok(out)
}

/// Removes the whitespace between JSON tokens (strings are copied as they are).
fn compact(json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len());
    let mut in_string = false;
    let mut escaped = false;
    for &b in json {
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            out.push(b);
            in_string = b == b'"';
        }
    }
    out
}

/// What an append did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AppendOutcome {
    /// Entries stored.
    pub appended: u64,
    /// Entries ignored because the stream already held their uuid.
    pub duplicates: u64,
    /// The stream's mtime after the append (`None` when nothing was stored).
    pub mtime: Option<i64>,
}

/// A batch line to store: its bytes, its status and its envelope.
pub type BatchLine<'a> = (Line<'a>, LineStatus, Envelope<'a>);

/// A stored summary: its mtime, its data (JSON text) and the watermark of its fold.
pub type StoredSummary = (i64, String, Watermark);

/// The questions the protocol's rules ask a backend, inside one transaction. Each backend
/// answers them in its own SQL; the rules ([`append`], [`load`], ...) are written once.
pub trait StreamTx {
    /// The session row of a project key and session id, if stored (locked for the rest of
    /// a write transaction on a backend shared by many processes).
    fn session(&mut self, project_key: &str, session_id: &str) -> Result<Option<i64>>;
    /// The session row, created (with its project) when missing, and locked for the rest of
    /// the transaction where other processes may write.
    fn upsert_session(&mut self, project_key: &str, session_id: &str) -> Result<i64>;
    /// The live transcript of a stream.
    fn live_stream(&mut self, session: i64, subpath: &str) -> Result<Option<i64>>;
    /// Creates the live transcript of a stream.
    fn create_stream(&mut self, session: i64, subpath: &str, agent_id: Option<&str>)
        -> Result<i64>;
    /// The ordinal after the stream's last row (terminating an unterminated last row).
    fn next_ordinal(&mut self, transcript: i64) -> Result<i64>;
    /// Which of `uuids` the stream already holds.
    fn stored_uuids(&mut self, transcript: i64, uuids: &[&str]) -> Result<HashSet<String>>;
    /// [`next_ordinal`](Self::next_ordinal) and, when the stream has rows,
    /// [`stored_uuids`](Self::stored_uuids) of `uuids`, in one answer.
    fn next_and_stored(
        &mut self,
        transcript: i64,
        uuids: &[&str],
    ) -> Result<(i64, HashSet<String>)> {
        let next = self.next_ordinal(transcript)?;
        let stored = if next > 0 && !uuids.is_empty() {
            self.stored_uuids(transcript, uuids)?
        } else {
            HashSet::new()
        };
        Ok((next, stored))
    }
    /// Stores the lines from `ordinal` on as sessiondb's own (`local`) rows, with their
    /// projections and side tables.
    fn insert(
        &mut self,
        session_id: &str,
        transcript: i64,
        ordinal: i64,
        batch: &[BatchLine<'_>],
    ) -> Result<()>;
    /// Records the project's cwd when it has none yet.
    fn set_project_cwd(&mut self, session: i64, cwd: &str) -> Result<()>;
    /// Sets a sub-agent transcript's sidecar (`meta_json`).
    fn set_agent_meta(&mut self, transcript: i64, meta: &[u8]) -> Result<()>;
    /// The stream's API write time (0 when it has none).
    fn api_mtime(&mut self, transcript: i64) -> Result<i64>;
    /// The session catalog's `last_modified` (0 when it has no row).
    fn catalog_mtime(&mut self, session: i64) -> Result<i64>;
    /// Sets the stream's API write time.
    fn set_api_mtime(&mut self, transcript: i64, mtime: i64) -> Result<()>;
    /// The mtime a stream shows: the API's own write time; for a `main` stream the
    /// catalog's `last_modified` (a file's mtime, or another sessiondb write) when that is
    /// later. A backend whose reads are round trips answers it with one statement.
    fn stream_mtime(&mut self, session: i64, transcript: i64, main: bool) -> Result<i64> {
        let api = self.api_mtime(transcript)?;
        Ok(if main {
            api.max(self.catalog_mtime(session)?)
        } else {
            api
        })
    }
    /// Recomputes the session's catalog row; `written` is when this write happened, for a
    /// write that moves the session's `last_modified`.
    fn refresh_catalog(&mut self, session: i64, written: Option<i64>) -> Result<()>;
    /// Calls `f` with each readable stored line after `after_ordinal`, in order (a line
    /// that fails its checksum is an error); returns the last ordinal seen.
    fn each_line(
        &mut self,
        transcript: i64,
        after_ordinal: i64,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<i64>;
    /// The stream's largest ordinal.
    fn max_ordinal(&mut self, transcript: i64) -> Result<Option<i64>>;
    /// The session's stored summary.
    fn summary(&mut self, session: i64) -> Result<Option<StoredSummary>>;
    /// Stores (or replaces) the session's summary.
    fn put_summary(
        &mut self,
        session: i64,
        mtime: i64,
        data: &str,
        through: Watermark,
    ) -> Result<()>;
    /// The project's main streams with their mtimes (the larger of the API's and the
    /// catalog's), in the order the sessions were first written.
    fn main_streams(&mut self, project_key: &str) -> Result<Vec<StreamInfo>>;
    /// Calls `f` with each stored summary of the project (session id, mtime, data), in the
    /// order the sessions were first written.
    fn summaries(&mut self, project_key: &str, f: &mut dyn FnMut(&str, i64, &str)) -> Result<()>;
    /// The session's live subpaths (not the main one), in the order first written.
    fn subpaths(&mut self, project_key: &str, session_id: &str) -> Result<Vec<String>>;
    /// Removes the session with everything stored for it; returns its transcript count.
    fn delete_session(&mut self, session: i64) -> Result<u64>;
    /// Removes every version of one stream and its sidecar file; returns how many.
    fn delete_stream(&mut self, session: i64, subpath: &str) -> Result<u64>;
}

/// A store the protocol runs on: it opens the transactions [`StreamTx`] answers in.
pub trait StreamStore {
    /// Runs `f` in one write transaction, committed only when it succeeds.
    ///
    /// # Errors
    /// `f`'s error, or a database error.
    fn write_streams<T>(&self, f: impl FnOnce(&mut dyn StreamTx) -> Result<T>) -> Result<T>;
    /// Runs `f` in one read transaction (one snapshot).
    ///
    /// # Errors
    /// `f`'s error, or a database error.
    fn read_streams<T>(&self, f: impl FnOnce(&mut dyn StreamTx) -> Result<T>) -> Result<T>;
}

/// `append(key, entries)`: stores the entries of one batch in one transaction.
///
/// # Errors
/// [`Error::Invalid`] for a bad subpath or an entry that is not an object with a string
/// `type` (nothing is stored then); database errors.
pub fn append(
    store: &(impl StreamStore + ?Sized),
    key: &StreamKey,
    entries: &[&RawValue],
) -> Result<AppendOutcome> {
    check_key(key)?;
    let lines = entry_lines(entries);
    let envelopes = check_entries(&lines)?;
    if lines.is_empty() {
        return Ok(AppendOutcome::default());
    }
    store.write_streams(|tx| {
        let session = tx.upsert_session(&key.project_key, &key.session_id)?;
        let subpath = key.stored_subpath();
        let transcript = stream_for_write(tx, session, subpath)?;
        let uuids: Vec<&str> = envelopes
            .iter()
            .filter_map(|e| e.uuid.as_deref().filter(|u| !u.is_empty()))
            .collect();
        let (next, stored) = tx.next_and_stored(transcript, &uuids)?;
        let mut outcome = AppendOutcome::default();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut batch: Vec<BatchLine<'_>> = Vec::with_capacity(lines.len());
        for (bytes, env) in lines.iter().zip(&envelopes) {
            if let Some(uuid) = env.uuid.as_deref().filter(|u| !u.is_empty()) {
                if stored.contains(uuid) || !seen.insert(uuid) {
                    outcome.duplicates += 1;
                    continue;
                }
            }
            let line = Line {
                bytes,
                terminated: true,
            };
            batch.push((line, LineStatus::Record, env.clone()));
        }
        outcome.appended = batch.len() as u64;
        if outcome.appended == 0 {
            return Ok(outcome);
        }
        tx.insert(&key.session_id, transcript, next, &batch)?;
        let cwd = batch
            .iter()
            .find_map(|(_, _, env)| env.cwd.as_deref().filter(|c| !c.is_empty()));
        if let Some(cwd) = cwd {
            tx.set_project_cwd(session, cwd)?;
        }
        let agent_meta = batch
            .iter()
            .rev()
            .find(|(_, _, env)| env.kind.as_deref() == Some("agent_metadata"));
        if let Some((line, _, _)) = agent_meta {
            set_agent_meta(tx, transcript, line.bytes)?;
        }
        let previous = tx.stream_mtime(session, transcript, subpath.is_empty())?;
        let mtime = crate::time::now_ms().max(previous + 1);
        tx.set_api_mtime(transcript, mtime)?;
        // A main stream's write moves the session's last_modified; a sub-agent's only
        // changes what the catalog counts.
        tx.refresh_catalog(session, subpath.is_empty().then_some(mtime))?;
        outcome.mtime = Some(mtime);
        Ok(outcome)
    })
}

/// The sub-agent sidecar an `agent_metadata` entry carries: the entry without its `type`
/// (what `agent-<id>.meta.json` held), so messages get `parent_tool_use_id` as from a file.
fn set_agent_meta(tx: &mut dyn StreamTx, transcript: i64, entry: &[u8]) -> Result<()> {
    let Some(serde_json::Value::Object(mut map)) = jsonl::parse_record(entry) else {
        return Ok(());
    };
    map.shift_remove("type");
    let meta = serde_json::to_vec(&map)?;
    tx.set_agent_meta(transcript, &meta)
}

/// The live transcript of a stream, created when missing. A sub-agent subpath
/// (`subagents/…/agent-<id>`) records its agent id, as an imported agent file does.
fn stream_for_write(tx: &mut dyn StreamTx, session: i64, subpath: &str) -> Result<i64> {
    if let Some(id) = tx.live_stream(session, subpath)? {
        return Ok(id);
    }
    let agent_id = subpath
        .strip_prefix("subagents/")
        .and_then(|rest| rest.rsplit('/').next())
        .and_then(|name| name.strip_prefix("agent-"));
    tx.create_stream(session, subpath, agent_id)
}

/// Appends the stored entries of `transcript` from `after_ordinal` on to `out` as JSON array
/// elements (comma-separated, no brackets). Blank and malformed lines of imported files are
/// skipped; a BOM is dropped; a line that no longer matches its checksum is an error
/// ([`Error::Damaged`]). Returns the last ordinal seen and how many were written.
fn write_entries(
    tx: &mut dyn StreamTx,
    transcript: i64,
    after_ordinal: i64,
    out: &mut Vec<u8>,
) -> Result<(i64, u64)> {
    let mut count = 0u64;
    let last = tx.each_line(transcript, after_ordinal, &mut |bytes| {
        let Some(text) = jsonl::parse_text(bytes) else {
            return;
        };
        if count > 0 {
            out.push(b',');
        }
        out.extend_from_slice(text.as_bytes());
        count += 1;
    })?;
    Ok((last, count))
}

/// `load(key)`: the stream's entries as a JSON array (text), in append order; `None` when the
/// stream was never written.
///
/// # Errors
/// [`Error::Invalid`] for a bad subpath; database errors.
pub fn load(store: &(impl StreamStore + ?Sized), key: &StreamKey) -> Result<Option<Vec<u8>>> {
    check_key(key)?;
    store.read_streams(|tx| {
        let Some(session) = tx.session(&key.project_key, &key.session_id)? else {
            return Ok(None);
        };
        let Some(transcript) = tx.live_stream(session, key.stored_subpath())? else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(64 * 1024);
        out.push(b'[');
        write_entries(tx, transcript, -1, &mut out)?;
        out.push(b']');
        Ok(Some(out))
    })
}

/// A main stream of a project: the protocol's `SessionStoreListEntry`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StreamInfo {
    /// The session id.
    pub session_id: String,
    /// Its mtime, epoch ms.
    pub mtime: i64,
}

/// `list_sessions(project_key)`: the project's sessions that have a main stream, in the order
/// they were first written.
///
/// # Errors
/// Database errors.
pub fn list_sessions(
    store: &(impl StreamStore + ?Sized),
    project_key: &str,
) -> Result<Vec<StreamInfo>> {
    store.read_streams(|tx| tx.main_streams(project_key))
}

/// One summary as the protocol shows it: `{session_id, mtime, data}`, `data` verbatim.
fn write_summary(out: &mut Vec<u8>, session_id: &str, mtime: i64, data: &str) -> Result<()> {
    out.extend_from_slice(b"{\"session_id\":");
    serde_json::to_writer(&mut *out, session_id)?;
    out.extend_from_slice(format!(",\"mtime\":{mtime},\"data\":").as_bytes());
    out.extend_from_slice(data.as_bytes());
    out.push(b'}');
    Ok(())
}

/// `list_session_summaries(project_key)`: the stored sidecars of the project as a JSON array
/// (text) of `{session_id, mtime, data}`, `data` exactly as it was put.
///
/// # Errors
/// Database errors.
pub fn list_session_summaries(
    store: &(impl StreamStore + ?Sized),
    project_key: &str,
) -> Result<Vec<u8>> {
    store.read_streams(|tx| {
        let mut out = b"[".to_vec();
        let mut failed = None;
        tx.summaries(project_key, &mut |session_id, mtime, data| {
            if out.len() > 1 {
                out.push(b',');
            }
            if let Err(e) = write_summary(&mut out, session_id, mtime, data) {
                failed.get_or_insert(e);
            }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        out.push(b']');
        Ok(out)
    })
}

/// What `delete` removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DeleteOutcome {
    /// Streams (transcripts) removed.
    pub streams: u64,
}

/// `delete(key)`: a main key removes the session, every stream under it, its summary and its
/// other stored files; a subpath removes only that stream. A key never written is no error.
///
/// # Errors
/// [`Error::Invalid`] for a bad subpath; database errors.
pub fn delete(store: &(impl StreamStore + ?Sized), key: &StreamKey) -> Result<DeleteOutcome> {
    check_key(key)?;
    store.write_streams(|tx| {
        let Some(session) = tx.session(&key.project_key, &key.session_id)? else {
            return Ok(DeleteOutcome::default());
        };
        let streams = match &key.subpath {
            None => tx.delete_session(session)?,
            Some(subpath) => {
                let streams = tx.delete_stream(session, subpath)?;
                if streams > 0 {
                    tx.refresh_catalog(session, None)?;
                }
                streams
            }
        };
        Ok(DeleteOutcome { streams })
    })
}

/// `list_subkeys({project_key, session_id})`: the session's subpaths (never the main
/// transcript), in the order they were first written.
///
/// # Errors
/// Database errors.
pub fn list_subkeys(
    store: &(impl StreamStore + ?Sized),
    project_key: &str,
    session_id: &str,
) -> Result<Vec<String>> {
    store.read_streams(|tx| tx.subpaths(project_key, session_id))
}

/// Which stored lines of a main stream a summary has folded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub struct Watermark {
    /// The main transcript folded (a re-imported file is a new transcript: fold again).
    pub transcript: i64,
    /// The last ordinal folded (-1: none).
    pub ordinal: i64,
}

/// The fold a client owes a main session: [`summary_pending`]'s answer, as JSON text:
/// `{"summary": {session_id, mtime, data} | null, "watermark": Watermark | null,
///   "through": Watermark, "mtime": n, "entries": [...]}`. Fold `entries` onto `summary`
/// with the SDK's `fold_session_summary` and put the result with `expect = watermark`,
/// `through` and `mtime`.
///
/// # Errors
/// Database errors.
pub fn summary_pending(
    store: &(impl StreamStore + ?Sized),
    project_key: &str,
    session_id: &str,
) -> Result<Option<Vec<u8>>> {
    store.read_streams(|tx| {
        let Some(session) = tx.session(project_key, session_id)? else {
            return Ok(None);
        };
        let Some(transcript) = tx.live_stream(session, "")? else {
            return Ok(None);
        };
        let stored = tx.summary(session)?;
        let mtime = tx.stream_mtime(session, transcript, true)?;
        let mut out = b"{\"summary\":".to_vec();
        let (watermark, after) = match &stored {
            Some((m, data, w)) if w.transcript == transcript => {
                write_summary(&mut out, session_id, *m, data)?;
                (Some(*w), w.ordinal)
            }
            Some((_, _, w)) => {
                // Another transcript (a re-imported file): fold it from the start.
                out.extend_from_slice(b"null");
                (Some(*w), -1)
            }
            None => {
                out.extend_from_slice(b"null");
                (None, -1)
            }
        };
        out.extend_from_slice(b",\"watermark\":");
        serde_json::to_writer(&mut out, &watermark)?;
        out.extend_from_slice(b",\"entries\":[");
        let (last, _) = write_entries(tx, transcript, after, &mut out)?;
        let through = Watermark {
            transcript,
            ordinal: tx.max_ordinal(transcript)?.unwrap_or(-1).max(last),
        };
        out.extend_from_slice(b"],\"through\":");
        serde_json::to_writer(&mut out, &through)?;
        out.extend_from_slice(format!(",\"mtime\":{mtime}}}").as_bytes());
        Ok(Some(out))
    })
}

/// A fold to store: [`summary_put`]'s input.
#[derive(Debug, Deserialize)]
pub struct SummaryPut<'a> {
    /// The watermark [`summary_pending`] reported (`None`: there was no summary).
    pub expect: Option<Watermark>,
    /// The `through` it reported: what the fold covers.
    pub through: Watermark,
    /// The `mtime` it reported: the sidecar's mtime.
    pub mtime: i64,
    /// The folded `data`, stored verbatim.
    #[serde(borrow)]
    pub data: &'a RawValue,
}

/// Stores a folded summary when the stored one is still the one the fold started from.
/// Returns false on a conflict (another client folded first, or the session is gone): ask
/// [`summary_pending`] again.
///
/// # Errors
/// [`Error::Invalid`] when `data` is not a JSON object; database errors.
pub fn summary_put(
    store: &(impl StreamStore + ?Sized),
    project_key: &str,
    session_id: &str,
    put: &SummaryPut<'_>,
) -> Result<bool> {
    check_names(project_key, Some(session_id))?;
    if !put.data.get().starts_with('{') {
        return Err(Error::Invalid("summary data must be a JSON object".into()));
    }
    store.write_streams(|tx| {
        let Some(session) = tx.session(project_key, session_id)? else {
            return Ok(false);
        };
        if tx.live_stream(session, "")? != Some(put.through.transcript) {
            return Ok(false);
        }
        let current = tx.summary(session)?.map(|(_, _, w)| w);
        if current != put.expect {
            return Ok(false);
        }
        tx.put_summary(session, put.mtime, put.data.get(), put.through)?;
        Ok(true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked() {
        let key = |p: &str, s: &str, sub: Option<&str>| StreamKey {
            project_key: p.into(),
            session_id: s.into(),
            subpath: sub.map(str::to_owned),
        };
        assert!(check_key(&key("-p", "s", Some("subagents/agent-1"))).is_ok());
        for bad in [
            key("../..", "s", None),
            key("", "s", None),
            key("-p", ".", None),
            key("-p", "a/b", None),
            key("-p", "s", Some("a/../b")),
            key("-p", "s", Some("/abs")),
        ] {
            assert!(matches!(check_key(&bad), Err(Error::Invalid(_))), "{bad:?}");
        }
        assert_eq!(check_subpath("a//b").map_err(|_| ()), Err(()));
    }

    #[test]
    fn compact_keeps_strings() {
        assert_eq!(
            compact(b"{\n  \"a\": \"x \\\" \\n y\",\r\n \"b\" : [1, 2]\n}"),
            b"{\"a\":\"x \\\" \\n y\",\"b\":[1,2]}".to_vec()
        );
    }
}
