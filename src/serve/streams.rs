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
//! Summaries (the protocol's sidecar) are folded by the client with the SDK's own
//! `fold_session_summary` and persisted verbatim: [`summary_pending`] hands out the stored
//! lines the sidecar has not seen, [`summary_put`] stores the fold if nobody else folded in
//! between (compare-and-swap on a watermark), so folds are serialised per session without a
//! lock held across requests.

use crate::catalog;
use crate::error::{Error, Result};
use crate::import::{insert_rows, project_record, upsert_session, Origin};
use crate::jsonl::{self, Envelope, Line, LineStatus};
use crate::names::{self, NameKind};
use crate::record;
use crate::store::Store;
use rusqlite::{params, Connection, OptionalExtension, Transaction};
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

const SELECT_SESSION: &str = "SELECT s.id FROM sessions s JOIN projects p ON p.id = s.project_id
     WHERE p.key = ?1 AND s.session_id = ?2";

const SELECT_STREAM: &str = "SELECT t.id FROM transcripts t
     JOIN sessions s ON s.id = t.session_id JOIN projects p ON p.id = s.project_id
     WHERE p.key = ?1 AND s.session_id = ?2 AND t.subpath = ?3 AND t.superseded_at IS NULL";

const SELECT_LIVE_TRANSCRIPT: &str = "SELECT id FROM transcripts
     WHERE session_id = ?1 AND subpath = ?2 AND superseded_at IS NULL";

const SELECT_STORED_UUIDS: &str = "SELECT uuid FROM rows
     WHERE transcript_id = ?1 AND uuid IN (SELECT value FROM json_each(?2))";

/// The uuids of a batch that the stream already holds, in one statement.
fn stored_uuids(
    tx: &Transaction<'_>,
    transcript: i64,
    envelopes: &[Envelope<'_>],
) -> Result<HashSet<String>> {
    let uuids: Vec<&str> = envelopes
        .iter()
        .filter_map(|e| e.uuid.as_deref().filter(|u| !u.is_empty()))
        .collect();
    if uuids.is_empty() {
        return Ok(HashSet::new());
    }
    let list = serde_json::to_string(&uuids)?;
    let found = tx
        .prepare_cached(SELECT_STORED_UUIDS)?
        .query_map(params![transcript, list], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(found)
}

/// The mtime a main stream shows: the API's own write time, or the catalog's
/// `last_modified` (a file's mtime, or another sessiondb write) when that is later.
const SELECT_MAIN_MTIME: &str = "SELECT max(coalesce((SELECT mtime FROM store_streams
            WHERE transcript_id = ?1), 0),
        coalesce((SELECT last_modified FROM catalog WHERE session_key = ?2), 0))";

const SELECT_SUB_MTIME: &str =
    "SELECT coalesce((SELECT mtime FROM store_streams WHERE transcript_id = ?1), 0)";

const UPSERT_MTIME: &str = "INSERT INTO store_streams (transcript_id, mtime) VALUES (?1, ?2)
     ON CONFLICT (transcript_id) DO UPDATE SET mtime = excluded.mtime";

/// `append(key, entries)`: stores the entries of one batch in one IMMEDIATE transaction.
///
/// # Errors
/// [`Error::Invalid`] for a bad subpath or an entry that is not an object with a string
/// `type` (nothing is stored then); database errors.
pub fn append(store: &Store, key: &StreamKey, entries: &[&RawValue]) -> Result<AppendOutcome> {
    check_key(key)?;
    let lines = entry_lines(entries);
    let envelopes = check_entries(&lines)?;
    if lines.is_empty() {
        return Ok(AppendOutcome::default());
    }
    store.write(|tx| {
        let session = upsert_session(tx, &key.project_key, &key.session_id)?;
        let subpath = key.stored_subpath();
        let transcript = stream_for_write(tx, session, subpath)?;
        let next = record::next_ordinal(tx, transcript)?;
        let mut outcome = AppendOutcome::default();
        let stored = if next > 0 {
            stored_uuids(tx, transcript, &envelopes)?
        } else {
            HashSet::new()
        };
        let mut seen: HashSet<&str> = HashSet::new();
        let mut batch: Vec<(Line<'_>, LineStatus, Envelope<'_>)> = Vec::with_capacity(lines.len());
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
        // Multi-row inserts under explicit ids, as import stores lines: one statement (and
        // statement journal) per 64 lines instead of one per line. Their few distinct
        // statements stay prepared.
        tx.set_prepared_statement_cache_capacity(64);
        let first: i64 = tx
            .prepare_cached("SELECT coalesce(max(id), 0) + 1 FROM rows")?
            .query_row([], |r| r.get(0))?;
        insert_rows(tx, transcript, next, first, &batch, Origin::Local)?;
        let mut cwd: Option<&str> = None;
        let mut agent_meta: Option<&[u8]> = None;
        for (row, (line, _, env)) in (first..).zip(&batch) {
            project_record(tx, transcript, row, line.bytes, env)?;
            if cwd.is_none() {
                cwd = env.cwd.as_deref().filter(|c| !c.is_empty());
            }
            if env.kind.as_deref() == Some("agent_metadata") {
                agent_meta = Some(line.bytes);
            }
        }
        outcome.appended = batch.len() as u64;
        if outcome.appended == 0 {
            return Ok(outcome);
        }
        if let Some(cwd) = cwd {
            tx.prepare_cached(
                "UPDATE projects SET cwd = ?2
                 WHERE id = (SELECT project_id FROM sessions WHERE id = ?1) AND cwd IS NULL",
            )?
            .execute(params![session, cwd])?;
        }
        if let Some(meta) = agent_meta {
            set_agent_meta(tx, transcript, meta)?;
        }
        let previous = stream_mtime(tx, session, transcript, subpath.is_empty())?;
        let mtime = crate::time::now_ms().max(previous + 1);
        tx.prepare_cached(UPSERT_MTIME)?
            .execute(params![transcript, mtime])?;
        if subpath.is_empty() {
            catalog::touch_session(tx, session, mtime)?;
        } else {
            catalog::refresh_session(tx, session)?;
        }
        outcome.mtime = Some(mtime);
        Ok(outcome)
    })
}

/// The sub-agent sidecar an `agent_metadata` entry carries: the entry without its `type`
/// (what `agent-<id>.meta.json` held), so messages get `parent_tool_use_id` as from a file.
fn set_agent_meta(tx: &Transaction<'_>, transcript: i64, entry: &[u8]) -> Result<()> {
    let Some(serde_json::Value::Object(mut map)) = jsonl::parse_record(entry) else {
        return Ok(());
    };
    map.shift_remove("type");
    let meta = serde_json::to_vec(&map)?;
    tx.prepare_cached("UPDATE transcripts SET meta_json = ?2 WHERE id = ?1")?
        .execute(params![transcript, meta])?;
    Ok(())
}

fn stream_mtime(conn: &Connection, session: i64, transcript: i64, main: bool) -> Result<i64> {
    Ok(if main {
        conn.prepare_cached(SELECT_MAIN_MTIME)?
            .query_row(params![transcript, session], |r| r.get(0))?
    } else {
        conn.prepare_cached(SELECT_SUB_MTIME)?
            .query_row([transcript], |r| r.get(0))?
    })
}

/// The live transcript of a stream, created when missing. A sub-agent subpath
/// (`subagents/…/agent-<id>`) records its agent id, as an imported agent file does.
fn stream_for_write(tx: &Transaction<'_>, session: i64, subpath: &str) -> Result<i64> {
    if let Some(id) = tx
        .prepare_cached(SELECT_LIVE_TRANSCRIPT)?
        .query_row(params![session, subpath], |r| r.get(0))
        .optional()?
    {
        return Ok(id);
    }
    let agent_id = subpath
        .strip_prefix("subagents/")
        .and_then(|rest| rest.rsplit('/').next())
        .and_then(|name| name.strip_prefix("agent-"));
    tx.prepare_cached(
        "INSERT INTO transcripts (session_id, subpath, agent_id) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![session, subpath, agent_id])?;
    Ok(tx.last_insert_rowid())
}

/// Appends the stored entries of `transcript` from `after_ordinal` on to `out` as JSON array
/// elements (comma-separated, no brackets). Blank and malformed lines of imported files are
/// skipped; a BOM is dropped; a line that no longer matches its checksum is an error
/// ([`Error::Damaged`]). Returns the last ordinal written and how many were written.
fn write_entries(
    conn: &Connection,
    transcript: i64,
    after_ordinal: i64,
    out: &mut Vec<u8>,
) -> Result<(i64, u64)> {
    let mut stmt = conn.prepare_cached(
        "SELECT ordinal, raw, id, checksum FROM rows
         WHERE transcript_id = ?1 AND ordinal > ?2 AND status = 0 ORDER BY ordinal",
    )?;
    let mut rows = stmt.query(params![transcript, after_ordinal])?;
    let mut last = after_ordinal;
    let mut count = 0u64;
    while let Some(row) = rows.next()? {
        last = row.get(0)?;
        let bytes = match row.get_ref(1)? {
            rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => b,
            _ => continue,
        };
        crate::integrity::check_row(conn, row.get(2)?, bytes, row.get(3)?)?;
        let Some(text) = jsonl::parse_text(bytes) else {
            continue;
        };
        if count > 0 {
            out.push(b',');
        }
        out.extend_from_slice(text.as_bytes());
        count += 1;
    }
    Ok((last, count))
}

/// `load(key)`: the stream's entries as a JSON array (text), in append order; `None` when the
/// stream was never written.
///
/// # Errors
/// [`Error::Invalid`] for a bad subpath; database errors.
pub fn load(store: &Store, key: &StreamKey) -> Result<Option<Vec<u8>>> {
    check_key(key)?;
    let mut conn = store.reader()?;
    let tx = conn.transaction()?;
    let Some(transcript) = tx
        .prepare_cached(SELECT_STREAM)?
        .query_row(
            params![key.project_key, key.session_id, key.stored_subpath()],
            |r| r.get::<_, i64>(0),
        )
        .optional()?
    else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(64 * 1024);
    out.push(b'[');
    write_entries(&tx, transcript, -1, &mut out)?;
    out.push(b']');
    Ok(Some(out))
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
pub fn list_sessions(store: &Store, project_key: &str) -> Result<Vec<StreamInfo>> {
    let conn = store.reader()?;
    let out = conn
        .prepare_cached(
            "SELECT s.session_id, max(coalesce(ss.mtime, 0), coalesce(c.last_modified, 0))
             FROM sessions s JOIN projects p ON p.id = s.project_id
             JOIN transcripts t ON t.session_id = s.id AND t.subpath = ''
                  AND t.superseded_at IS NULL
             LEFT JOIN store_streams ss ON ss.transcript_id = t.id
             LEFT JOIN catalog c ON c.session_key = s.id
             WHERE p.key = ?1 ORDER BY s.id",
        )?
        .query_map([project_key], |r| {
            Ok(StreamInfo {
                session_id: r.get(0)?,
                mtime: r.get(1)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(out)
}

/// `list_session_summaries(project_key)`: the stored sidecars of the project as a JSON array
/// (text) of `{session_id, mtime, data}`, `data` exactly as it was put.
///
/// # Errors
/// Database errors.
pub fn list_session_summaries(store: &Store, project_key: &str) -> Result<Vec<u8>> {
    let conn = store.reader()?;
    let mut stmt = conn.prepare_cached(
        "SELECT s.session_id, m.mtime, m.data FROM store_summaries m
         JOIN sessions s ON s.id = m.session_key JOIN projects p ON p.id = s.project_id
         WHERE p.key = ?1 ORDER BY s.id",
    )?;
    let mut rows = stmt.query([project_key])?;
    let mut out = b"[".to_vec();
    let mut first = true;
    while let Some(row) = rows.next()? {
        if !first {
            out.push(b',');
        }
        first = false;
        let session_id: String = row.get(0)?;
        let mtime: i64 = row.get(1)?;
        let data: String = row.get(2)?;
        out.extend_from_slice(b"{\"session_id\":");
        serde_json::to_writer(&mut out, &session_id)?;
        out.extend_from_slice(format!(",\"mtime\":{mtime},\"data\":").as_bytes());
        out.extend_from_slice(data.as_bytes());
        out.push(b'}');
    }
    out.push(b']');
    Ok(out)
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
pub fn delete(store: &Store, key: &StreamKey) -> Result<DeleteOutcome> {
    check_key(key)?;
    store.write(|tx| {
        let Some(session) = tx
            .prepare_cached(SELECT_SESSION)?
            .query_row(params![key.project_key, key.session_id], |r| {
                r.get::<_, i64>(0)
            })
            .optional()?
        else {
            return Ok(DeleteOutcome::default());
        };
        match &key.subpath {
            None => {
                let streams: i64 = tx
                    .prepare_cached("SELECT count(*) FROM transcripts WHERE session_id = ?1")?
                    .query_row([session], |r| r.get(0))?;
                tx.prepare_cached(
                    "DELETE FROM source_files WHERE transcript_id IN
                        (SELECT id FROM transcripts WHERE session_id = ?1)
                     OR session_file_id IN (SELECT id FROM session_files WHERE session_id = ?1)",
                )?
                .execute([session])?;
                tx.prepare_cached("DELETE FROM sessions WHERE id = ?1")?
                    .execute([session])?;
                Ok(DeleteOutcome {
                    streams: streams as u64,
                })
            }
            Some(subpath) => {
                let streams = tx
                    .prepare_cached(
                        "DELETE FROM transcripts WHERE session_id = ?1 AND subpath = ?2",
                    )?
                    .execute(params![session, subpath])?;
                let sidecar = format!("{subpath}.meta.json");
                tx.prepare_cached(
                    "DELETE FROM source_files WHERE session_file_id IN
                        (SELECT id FROM session_files WHERE session_id = ?1 AND relpath = ?2)",
                )?
                .execute(params![session, sidecar])?;
                tx.prepare_cached(
                    "DELETE FROM session_files WHERE session_id = ?1 AND relpath = ?2",
                )?
                .execute(params![session, sidecar])?;
                if streams > 0 {
                    catalog::refresh_session(tx, session)?;
                }
                Ok(DeleteOutcome {
                    streams: streams as u64,
                })
            }
        }
    })
}

/// `list_subkeys({project_key, session_id})`: the session's subpaths (never the main
/// transcript), in the order they were first written.
///
/// # Errors
/// Database errors.
pub fn list_subkeys(store: &Store, project_key: &str, session_id: &str) -> Result<Vec<String>> {
    let conn = store.reader()?;
    let out = conn
        .prepare_cached(
            "SELECT t.subpath FROM transcripts t
             JOIN sessions s ON s.id = t.session_id JOIN projects p ON p.id = s.project_id
             WHERE p.key = ?1 AND s.session_id = ?2 AND t.subpath <> ''
               AND t.superseded_at IS NULL
             ORDER BY t.id",
        )?
        .query_map(params![project_key, session_id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(out)
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
    store: &Store,
    project_key: &str,
    session_id: &str,
) -> Result<Option<Vec<u8>>> {
    let mut conn = store.reader()?;
    let tx = conn.transaction()?;
    let Some(session) = tx
        .prepare_cached(SELECT_SESSION)?
        .query_row(params![project_key, session_id], |r| r.get::<_, i64>(0))
        .optional()?
    else {
        return Ok(None);
    };
    let Some(transcript) = tx
        .prepare_cached(SELECT_LIVE_TRANSCRIPT)?
        .query_row(params![session, ""], |r| r.get::<_, i64>(0))
        .optional()?
    else {
        return Ok(None);
    };
    let stored: Option<(i64, String, i64, i64)> = tx
        .prepare_cached(
            "SELECT mtime, data, folded_transcript, folded_ordinal FROM store_summaries
             WHERE session_key = ?1",
        )?
        .query_row([session], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .optional()?;
    let mtime = stream_mtime(&tx, session, transcript, true)?;
    let mut out = b"{\"summary\":".to_vec();
    let (watermark, after) = match &stored {
        Some((m, data, t, o)) if *t == transcript => {
            out.extend_from_slice(b"{\"session_id\":");
            serde_json::to_writer(&mut out, session_id)?;
            out.extend_from_slice(format!(",\"mtime\":{m},\"data\":").as_bytes());
            out.extend_from_slice(data.as_bytes());
            out.push(b'}');
            (
                Some(Watermark {
                    transcript: *t,
                    ordinal: *o,
                }),
                *o,
            )
        }
        Some((_, _, t, o)) => {
            // Another transcript (a re-imported file): fold it from the start.
            out.extend_from_slice(b"null");
            (
                Some(Watermark {
                    transcript: *t,
                    ordinal: *o,
                }),
                -1,
            )
        }
        None => {
            out.extend_from_slice(b"null");
            (None, -1)
        }
    };
    out.extend_from_slice(b",\"watermark\":");
    serde_json::to_writer(&mut out, &watermark)?;
    out.extend_from_slice(b",\"entries\":[");
    let (last, _) = write_entries(&tx, transcript, after, &mut out)?;
    let max_ordinal: Option<i64> = tx
        .prepare_cached("SELECT max(ordinal) FROM rows WHERE transcript_id = ?1")?
        .query_row([transcript], |r| r.get(0))?;
    let through = Watermark {
        transcript,
        ordinal: max_ordinal.unwrap_or(-1).max(last),
    };
    out.extend_from_slice(b"],\"through\":");
    serde_json::to_writer(&mut out, &through)?;
    out.extend_from_slice(format!(",\"mtime\":{mtime}}}").as_bytes());
    Ok(Some(out))
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
    store: &Store,
    project_key: &str,
    session_id: &str,
    put: &SummaryPut<'_>,
) -> Result<bool> {
    check_names(project_key, Some(session_id))?;
    if !put.data.get().starts_with('{') {
        return Err(Error::Invalid("summary data must be a JSON object".into()));
    }
    store.write(|tx| {
        let Some(session) = tx
            .prepare_cached(SELECT_SESSION)?
            .query_row(params![project_key, session_id], |r| r.get::<_, i64>(0))
            .optional()?
        else {
            return Ok(false);
        };
        let live: Option<i64> = tx
            .prepare_cached(SELECT_LIVE_TRANSCRIPT)?
            .query_row(params![session, ""], |r| r.get(0))
            .optional()?;
        if live != Some(put.through.transcript) {
            return Ok(false);
        }
        let current: Option<Watermark> = tx
            .prepare_cached(
                "SELECT folded_transcript, folded_ordinal FROM store_summaries
                 WHERE session_key = ?1",
            )?
            .query_row([session], |r| {
                Ok(Watermark {
                    transcript: r.get(0)?,
                    ordinal: r.get(1)?,
                })
            })
            .optional()?;
        if current != put.expect {
            return Ok(false);
        }
        tx.prepare_cached(
            "INSERT INTO store_summaries (session_key, mtime, data, folded_transcript, folded_ordinal)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (session_key) DO UPDATE SET mtime = excluded.mtime, data = excluded.data,
                folded_transcript = excluded.folded_transcript,
                folded_ordinal = excluded.folded_ordinal",
        )?
        .execute(params![
            session,
            put.mtime,
            put.data.get(),
            put.through.transcript,
            put.through.ordinal
        ])?;
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
