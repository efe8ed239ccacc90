//! Export from the team store: rows → files, byte for byte, with the same path checks and
//! atomic writes as [`crate::export`].

use super::decode::RowExt;
use super::PgStore;
use crate::error::{Error, Result};
use crate::export::{
    claim, set_recorded_mtime, tally, write_atomically, write_transcript_file, ExportReport,
};
use crate::model::SessionRef;
use postgres::fallible_iterator::FallibleIterator;
use postgres::Transaction;
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

/// Writes the rows of one transcript to `out` in file order; returns the bytes written.
///
/// # Errors
/// Fails on a database or write error.
pub fn write_transcript(
    tx: &mut Transaction<'_>,
    transcript: i64,
    out: &mut dyn Write,
) -> Result<u64> {
    write_transcript_mapped(tx, transcript, out, &mut |_| None)
}

/// [`write_transcript`] with each line passed through `map` (`None` keeps it as stored):
/// `restore` rewrites the `cwd` of a session that moves.
///
/// # Errors
/// Fails on a database or write error.
pub fn write_transcript_mapped(
    tx: &mut Transaction<'_>,
    transcript: i64,
    out: &mut dyn Write,
    map: &mut dyn FnMut(&[u8]) -> Option<Vec<u8>>,
) -> Result<u64> {
    let mut rows = tx.query_raw(
        "SELECT raw, terminated FROM rows WHERE transcript_id = $1 ORDER BY ordinal",
        [&transcript],
    )?;
    let mut written = 0u64;
    while let Some(row) = rows.next()? {
        let raw: &[u8] = row.col(0)?;
        let mapped = map(raw);
        let raw = mapped.as_deref().unwrap_or(raw);
        out.write_all(raw).map_err(|e| Error::io("<output>", e))?;
        written += raw.len() as u64;
        if row.col::<bool>(1)? {
            out.write_all(b"\n").map_err(|e| Error::io("<output>", e))?;
            written += 1;
        }
    }
    Ok(written)
}

/// The live main transcript of a session, if it has one.
///
/// # Errors
/// Fails on a database error.
pub fn main_transcript(tx: &mut Transaction<'_>, session: &SessionRef) -> Result<Option<i64>> {
    tx.query_typed_opt(
        "SELECT id FROM transcripts WHERE session_id = $1 AND subpath = ''
           AND superseded_at IS NULL",
        &[(&session.key, postgres::types::Type::INT8)],
    )?
    .map(|r| r.col(0))
    .transpose()
}

/// Writes a session's main transcript exactly as imported.
///
/// # Errors
/// Fails when the session has no main transcript, or on a database or write error.
pub fn export_session(store: &PgStore, session: &SessionRef, out: &mut dyn Write) -> Result<u64> {
    store.read(|tx| {
        let transcript = main_transcript(tx, session)?.ok_or_else(|| {
            Error::NotFound(format!(
                "session {} has no main transcript (only subagent files)",
                session.session_id
            ))
        })?;
        write_transcript(tx, transcript, out)
    })
}

/// Rebuilds the projects tree under `dir` (see [`crate::export::export_tree`]).
///
/// # Errors
/// Fails on a database error, or when `dir` itself cannot be created.
pub fn export_tree(store: &PgStore, dir: &Path, project: Option<&str>) -> Result<ExportReport> {
    crate::export::create_private_dir(dir)?;
    store.read(|tx| {
        let mut report = ExportReport::default();
        let sessions: Vec<(i64, String, String)> = tx
            .query(
                "SELECT s.id, p.key, s.session_id FROM sessions s
                 JOIN projects p ON p.id = s.project_id
                 WHERE $1::text IS NULL OR p.key = $1 ORDER BY p.key, s.session_id",
                &[&project],
            )?
            .into_iter()
            .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?)))
            .collect::<Result<_>>()?;
        let mut written = HashSet::new();
        for (key, project, session) in sessions {
            report.sessions += 1;
            let names = crate::names::check_session(&project, &session);
            let transcripts: Vec<(i64, String, Option<i64>)> = tx
                .query(
                    "SELECT t.id, t.subpath, (SELECT f.mtime_ns FROM source_files f
                        WHERE f.transcript_id = t.id ORDER BY f.id DESC LIMIT 1)
                     FROM transcripts t WHERE t.session_id = $1 AND t.superseded_at IS NULL
                     ORDER BY t.subpath",
                    &[&key],
                )?
                .into_iter()
                .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?)))
                .collect::<Result<_>>()?;
            let files: Vec<(String, Vec<u8>, Option<i64>)> = tx
                .query(
                    "SELECT s.relpath, s.content, (SELECT f.mtime_ns FROM source_files f
                        WHERE f.session_file_id = s.id ORDER BY f.id DESC LIMIT 1)
                     FROM session_files s WHERE s.session_id = $1 ORDER BY s.relpath",
                    &[&key],
                )?
                .into_iter()
                .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?)))
                .collect::<Result<_>>()?;
            if let Err(e) = names {
                let n = transcripts.len() + files.len();
                report.skipped.push(format!(
                    "session {project:?}/{session:?} ({n} files) not exported: {e}"
                ));
                continue;
            }
            for (id, subpath, mtime) in transcripts {
                let relative = if subpath.is_empty() {
                    format!("{project}/{session}.jsonl")
                } else {
                    format!("{project}/{session}/{subpath}.jsonl")
                };
                let outcome = claim(dir, &relative, &mut written).and_then(|path| {
                    let bytes = write_transcript_file(&path, |out| write_transcript(tx, id, out))?;
                    set_recorded_mtime(&path, mtime)?;
                    Ok(bytes)
                });
                tally(&mut report, &relative, outcome)?;
            }
            for (relpath, content, mtime) in files {
                let relative = format!("{project}/{session}/{relpath}");
                let outcome = claim(dir, &relative, &mut written).and_then(|path| {
                    let bytes = write_atomically(&path, |out| {
                        out.write_all(&content)
                            .map_err(|e| Error::io("<output>", e))?;
                        Ok(content.len() as u64)
                    })?;
                    set_recorded_mtime(&path, mtime)?;
                    Ok(bytes)
                });
                tally(&mut report, &relative, outcome)?;
            }
        }
        Ok(report)
    })
}
