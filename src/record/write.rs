//! Writing lines sessiondb makes itself (an append's batch, a rename's or tag's record, a
//! fork's lines) on any engine: one rule for where they go and what they fill, over the
//! [`LineTx`] port each engine answers.
//!
//! Such lines are marked local (carried over when a re-import replaces the transcript),
//! follow the transcript's last line (which gets its newline first, so that the two do not
//! glue together), and fill the usage projection and side tables as an imported line does.

use super::{check_entry, plan, AppendOptions, AppendReport, Parent, Stamp, STAMP_KEYS};
use crate::error::{Error, Result};
use crate::jsonl::{self, Envelope, Line, LineStatus};
use crate::model::SessionRef;
use serde_json::{Map, Value};

/// A line about to be stored: its bytes, what kind of line it is, and its projection.
pub(crate) type NewLine<'a> = (Line<'a>, LineStatus, Envelope<'a>);

/// What an engine answers for lines sessiondb writes, in the caller's write transaction.
pub(crate) trait LineTx {
    /// Makes other writers of the session wait until this transaction ends (the team
    /// store locks the session's row; SQLite's write transaction already excludes them).
    /// [`Error::SessionNotFound`] when the session is gone.
    fn lock_session(&mut self, session: &SessionRef) -> Result<()>;
    /// The session's live main transcript.
    fn main_transcript(&mut self, session: i64) -> Result<Option<i64>>;
    /// A new, empty main transcript for the session.
    fn create_main_transcript(&mut self, session: i64) -> Result<i64>;
    /// The transcript's last row: its id, ordinal and whether it ends in a newline.
    fn last_row(&mut self, transcript: i64) -> Result<Option<(i64, i64, bool)>>;
    /// Marks a row's line as ending in a newline.
    fn terminate_row(&mut self, row: i64) -> Result<()>;
    /// Stores `lines` from `ordinal` on as local rows with their projected columns (a
    /// line's `sessionId` only when it is not `own`), their search text as the engine keeps
    /// it; returns their row ids in line order.
    fn insert_local(
        &mut self,
        transcript: i64,
        ordinal: i64,
        lines: &[NewLine<'_>],
        own: &str,
    ) -> Result<Vec<i64>>;
    /// Fills the usage projection and the side tables of a record stored as `row`.
    fn project_record(
        &mut self,
        transcript: i64,
        row: i64,
        bytes: &[u8],
        env: &Envelope<'_>,
    ) -> Result<()>;
    /// Recomputes the session's catalog row after a write at `written_ms`.
    fn touch_catalog(&mut self, session: i64, written_ms: i64) -> Result<()>;
    /// The bytes of the transcript's last main-chain message (not a sidechain's).
    fn last_message(&mut self, transcript: i64) -> Result<Option<Vec<u8>>>;
    /// Whether the transcript holds a message or `progress` record with this uuid.
    fn recorded(&mut self, transcript: i64, uuid: &str) -> Result<bool>;
    /// The leaf `resume` would pick.
    fn current_leaf(&mut self, transcript: i64) -> Result<Option<String>>;
    /// Whether `uuid` is a message of the transcript a batch may hang from.
    fn has_entry(&mut self, transcript: i64, uuid: &str) -> Result<bool>;
}

/// The ordinal that follows the transcript's last row. A last row without its newline gets
/// one first, so that lines stored after it do not glue onto it.
pub(crate) fn next_ordinal(tx: &mut impl LineTx, transcript: i64) -> Result<i64> {
    let Some((id, ordinal, terminated)) = tx.last_row(transcript)? else {
        return Ok(0);
    };
    if !terminated {
        tx.terminate_row(id)?;
    }
    Ok(ordinal + 1)
}

/// Stores lines already serialized (each one JSON object) after the transcript's last
/// row, as local lines with their projections (`own`: the transcript's session id).
pub(crate) fn write_line_bytes(
    tx: &mut impl LineTx,
    transcript: i64,
    own: &str,
    bytes: &[Vec<u8>],
) -> Result<Vec<i64>> {
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let first = next_ordinal(tx, transcript)?;
    let lines: Vec<NewLine<'_>> = bytes
        .iter()
        .map(|b| {
            let (status, env) = Envelope::parse(b);
            let line = Line {
                bytes: b,
                terminated: true,
            };
            (line, status, env)
        })
        .collect();
    let ids = tx.insert_local(transcript, first, &lines, own)?;
    for (row, (line, status, env)) in ids.iter().zip(&lines) {
        if *status == LineStatus::Record {
            tx.project_record(transcript, *row, line.bytes, env)?;
        }
    }
    Ok(ids)
}

/// Appends one record line (a rename's or tag's) to the session's main transcript and
/// refreshes the catalog. Returns the new row id.
///
/// # Errors
/// [`Error::Invalid`] when the session has no non-empty main transcript (the SDK appends
/// only to an existing, non-empty file); database errors.
pub(crate) fn append_line(tx: &mut impl LineTx, session: &SessionRef, line: &str) -> Result<i64> {
    tx.lock_session(session)?;
    let transcript = match tx.main_transcript(session.key)? {
        Some(t) if tx.last_row(t)?.is_some() => t,
        _ => {
            return Err(Error::Invalid(format!(
                "session {} has no main transcript to write to",
                session.session_id
            )))
        }
    };
    let bytes = [line.as_bytes().to_vec()];
    let ids = write_line_bytes(tx, transcript, &session.session_id, &bytes)?;
    tx.touch_catalog(session.key, crate::time::now_ms())?;
    Ok(ids[0])
}

/// Appends a batch of entries with Claude Code's write rules ([`plan`]), in the caller's
/// write transaction: all of the batch or none of it.
///
/// # Errors
/// As [`crate::store::Store::append_with`].
pub(crate) fn append(
    tx: &mut impl LineTx,
    session: &SessionRef,
    entries: &[Value],
    options: &AppendOptions,
) -> Result<AppendReport> {
    tx.lock_session(session)?;
    let transcript = match tx.main_transcript(session.key)? {
        Some(t) => t,
        None => tx.create_main_transcript(session.key)?,
    };
    let stamp = Stamp {
        session_id: session.session_id.clone(),
        defaults: session_defaults(tx, transcript)?,
        fork: false,
    };
    let cell = std::cell::RefCell::new(&mut *tx);
    let planned = plan(
        entries,
        &stamp,
        |uuid| cell.borrow_mut().recorded(transcript, uuid),
        || match &options.parent {
            Parent::Leaf => cell.borrow_mut().current_leaf(transcript),
            Parent::Root => Ok(None),
            Parent::Uuid(u) => {
                if cell.borrow_mut().has_entry(transcript, u)? {
                    Ok(Some(u.clone()))
                } else {
                    Err(Error::NotFound(format!(
                        "record {u} is not a message of session {}",
                        session.session_id
                    )))
                }
            }
        },
    )?;
    let bytes: Vec<Vec<u8>> = planned
        .lines
        .iter()
        .map(serde_json::to_vec)
        .collect::<serde_json::Result<_>>()?;
    write_line_bytes(tx, transcript, &session.session_id, &bytes)?;
    if !planned.lines.is_empty() {
        tx.touch_catalog(session.key, crate::time::now_ms())?;
    }
    Ok(AppendReport {
        session_id: session.session_id.clone(),
        project: session.project.clone(),
        written: planned.lines.len() as u64,
        messages: planned.messages,
        duplicates: planned.duplicates,
        dropped_progress: planned.dropped_progress,
        leaf_uuid: planned.leaf_uuid,
    })
}

/// Checks a batch before any transaction starts: the session's names and every entry.
///
/// # Errors
/// [`Error::BadName`], or [`Error::Invalid`] naming the first entry [`check_entry`] rejects.
pub(crate) fn check_batch(session: &SessionRef, entries: &[Value]) -> Result<()> {
    crate::names::check_session(&session.project, &session.session_id)?;
    for (i, entry) in entries.iter().enumerate() {
        check_entry(entry).map_err(|m| Error::Invalid(format!("entry {}: {m}", i + 1)))?;
    }
    Ok(())
}

/// The stamp defaults of a transcript: the session-level fields of its last message.
fn session_defaults(tx: &mut impl LineTx, transcript: i64) -> Result<Map<String, Value>> {
    let raw = tx.last_message(transcript)?;
    let mut out = Map::new();
    if let Some(record) = raw.as_deref().and_then(jsonl::parse_record) {
        for key in STAMP_KEYS.iter().filter(|k| **k != "sessionId") {
            if let Some(v) = record.get(*key).filter(|v| !v.is_null()) {
                out.insert((*key).to_owned(), v.clone());
            }
        }
    }
    Ok(out)
}
