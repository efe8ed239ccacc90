//! Appending to a session in the team store: the record API's rules ([`crate::record::plan`]:
//! the uuid dedup, the parent chain, the stamps) over PostgreSQL.
//!
//! The uuid rule across processes: the session's row is locked (`SELECT … FOR UPDATE`) for
//! the whole transaction, so the check "is this uuid recorded" and the insert that follows
//! are never interleaved with another writer of the same session, on any machine. A second
//! writer waits for the first to commit and then sees its lines.

use super::decode::RowExt;
use super::PgStore;
use crate::error::{Error, Result};
use crate::jsonl::{self, Envelope, Line, LineStatus};
use crate::model::SessionRef;
use crate::record::{check_entry, plan, AppendOptions, AppendReport, Parent, Stamp, STAMP_KEYS};
use postgres::Transaction;
use serde_json::{Map, Value};
use std::cell::RefCell;

/// Appends a batch of entries to a session (see [`crate::store::Store::append_with`]).
///
/// # Errors
/// As [`crate::store::Store::append_with`].
pub fn append_with(
    store: &PgStore,
    session: &SessionRef,
    entries: &[Value],
    options: &AppendOptions,
) -> Result<AppendReport> {
    crate::names::check_session(&session.project, &session.session_id)?;
    for (i, entry) in entries.iter().enumerate() {
        check_entry(entry).map_err(|m| Error::Invalid(format!("entry {}: {m}", i + 1)))?;
    }
    store.write(|tx| {
        tx.query_opt(
            "SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE",
            &[&session.key],
        )?
        .ok_or_else(|| Error::SessionNotFound(session.session_id.clone()))?;
        let transcript = match super::export::main_transcript(tx, session)? {
            Some(t) => t,
            None => super::import::create_transcript(tx, session.key, "", None)?,
        };
        let stamp = Stamp {
            session_id: session.session_id.clone(),
            defaults: session_defaults(tx, transcript)?,
            fork: false,
        };
        let cell = RefCell::new(&mut *tx);
        let planned = plan(
            entries,
            &stamp,
            |uuid| {
                let mut tx = cell.borrow_mut();
                tx.query_one(
                    "SELECT EXISTS (SELECT 1 FROM rows WHERE transcript_id = $1 AND uuid = $2
                       AND type IN ('user', 'assistant', 'attachment', 'system', 'progress'))",
                    &[&transcript, &uuid],
                )?
                .col(0)
            },
            || {
                let mut tx = cell.borrow_mut();
                match &options.parent {
                    Parent::Leaf => super::resume::pick_leaf(&mut tx, transcript),
                    Parent::Root => Ok(None),
                    Parent::Uuid(u) => {
                        if super::resume::has_entry(&mut tx, transcript, u)? {
                            Ok(Some(u.clone()))
                        } else {
                            Err(Error::NotFound(format!(
                                "record {u} is not a message of session {}",
                                session.session_id
                            )))
                        }
                    }
                }
            },
        )?;
        write_lines(tx, transcript, &session.session_id, &planned.lines)?;
        if !planned.lines.is_empty() {
            super::catalog::refresh_session(tx, session.key, Some(crate::time::now_ms()))?;
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
    })
}

/// Stores `lines` after the transcript's last row, serialized as `JSON.stringify` would.
fn write_lines(
    tx: &mut Transaction<'_>,
    transcript: i64,
    session_id: &str,
    lines: &[Value],
) -> Result<()> {
    let bytes: Vec<Vec<u8>> = lines
        .iter()
        .map(serde_json::to_vec)
        .collect::<serde_json::Result<_>>()?;
    write_line_bytes(tx, transcript, session_id, &bytes)
}

/// Stores lines given as bytes after the transcript's last row, as local lines with their
/// projections and side-table rows (as import stores a line), their search vectors queued
/// ([`super::search_queue`]).
pub(crate) fn write_line_bytes(
    tx: &mut Transaction<'_>,
    transcript: i64,
    session_id: &str,
    bytes: &[Vec<u8>],
) -> Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    let first = next_ordinal(tx, transcript)?;
    // Their words are cut later, by the search queue's catch-up.
    let parsed: Vec<crate::import::Parsed<'_>> = bytes
        .iter()
        .map(|b| {
            let (status, env) = Envelope::parse(b);
            let line = Line {
                bytes: b,
                terminated: true,
            };
            (line, status, env, None)
        })
        .collect();
    let ids = super::search_queue::insert_local_lines(tx, transcript, first, &parsed, session_id)?;
    for (row, (line, status, env, _)) in ids.into_iter().zip(&parsed) {
        if *status == LineStatus::Record {
            super::rows::project_record(tx, transcript, row, line.bytes, env)?;
        }
    }
    Ok(())
}

/// The ordinal that follows the transcript's last row (see [`crate::record`]'s): a last row
/// without its newline gets one first, so that lines stored after it do not glue onto it.
pub(crate) fn next_ordinal(tx: &mut Transaction<'_>, transcript: i64) -> Result<i64> {
    let sql = super::prepared(
        tx,
        "SELECT id, ordinal, terminated FROM rows WHERE transcript_id = $1
         ORDER BY ordinal DESC LIMIT 1",
    )?;
    let last: Option<(i64, i64, bool)> = tx
        .query_opt(&sql, &[&transcript])?
        .map(|r| Ok::<_, Error>((r.col(0)?, r.col(1)?, r.col(2)?)))
        .transpose()?;
    Ok(match last {
        None => 0,
        Some((id, ordinal, terminated)) => {
            if !terminated {
                tx.execute("UPDATE rows SET terminated = true WHERE id = $1", &[&id])?;
            }
            ordinal + 1
        }
    })
}

/// The stamp defaults of a transcript: the session-level fields of its last message.
fn session_defaults(tx: &mut Transaction<'_>, transcript: i64) -> Result<Map<String, Value>> {
    let raw: Option<Vec<u8>> = tx
        .query_opt(
            "SELECT raw FROM rows WHERE transcript_id = $1 AND status = 0
               AND type IN ('user', 'assistant', 'attachment', 'system') AND NOT is_sidechain
             ORDER BY ordinal DESC LIMIT 1",
            &[&transcript],
        )?
        .map(|r| r.col(0))
        .transpose()?;
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
