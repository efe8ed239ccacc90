//! Export from the team store: rows → files, byte for byte, with the same path checks and
//! atomic writes as [`crate::export`].

use super::decode::RowExt;
use super::{prepared, PgStore};
use crate::error::{Error, Result};
use crate::export::{ExportReport, ExportSource, OnDamage, Recorded};
use crate::model::SessionRef;
use postgres::fallible_iterator::FallibleIterator;
use postgres::Transaction;
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
    store.read(|tx| crate::export::session_over(&mut PgExport(tx), session, out, OnDamage::Fail))
}

/// Rebuilds the projects tree under `dir` (see [`crate::export::export_tree`]).
///
/// # Errors
/// Fails on a database error, or when `dir` itself cannot be created.
pub fn export_tree(store: &PgStore, dir: &Path, project: Option<&str>) -> Result<ExportReport> {
    crate::export::create_private_dir(dir)?;
    store.read(|tx| crate::export::tree_over(&mut PgExport(tx), dir, project, false))
}

/// An export's reads in one team-store transaction. The team store keeps no per-line
/// checksums: lines are written as stored.
struct PgExport<'a, 't>(&'a mut Transaction<'t>);

impl ExportSource for PgExport<'_, '_> {
    fn sessions(&mut self, project: Option<&str>) -> Result<Vec<(i64, String, String)>> {
        self.0
            .query(
                "SELECT s.id, p.key, s.session_id FROM sessions s
                 JOIN projects p ON p.id = s.project_id
                 WHERE $1::text IS NULL OR p.key = $1 ORDER BY p.key, s.session_id",
                &[&project],
            )?
            .into_iter()
            .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?)))
            .collect()
    }

    fn main_transcript(&mut self, session: i64) -> Result<Option<i64>> {
        let stmt = prepared(
            self.0,
            "SELECT id FROM transcripts WHERE session_id = $1 AND subpath = ''
               AND superseded_at IS NULL",
        )?;
        self.0
            .query_opt(&stmt, &[&session])?
            .map(|r| r.col(0))
            .transpose()
    }

    fn transcripts(&mut self, session: i64) -> Result<Vec<(i64, String)>> {
        let stmt = prepared(
            self.0,
            "SELECT id, subpath FROM transcripts WHERE session_id = $1 AND superseded_at IS NULL
             ORDER BY subpath",
        )?;
        self.0
            .query(&stmt, &[&session])?
            .into_iter()
            .map(|r| Ok((r.col(0)?, r.col(1)?)))
            .collect()
    }

    fn files(&mut self, session: i64) -> Result<Vec<(i64, String)>> {
        let stmt = prepared(
            self.0,
            "SELECT id, relpath FROM session_files WHERE session_id = $1 ORDER BY relpath",
        )?;
        self.0
            .query(&stmt, &[&session])?
            .into_iter()
            .map(|r| Ok((r.col(0)?, r.col(1)?)))
            .collect()
    }

    fn file_content(&mut self, file: i64) -> Result<Vec<u8>> {
        let stmt = prepared(self.0, "SELECT content FROM session_files WHERE id = $1")?;
        self.0.query_one(&stmt, &[&file])?.col(0)
    }

    fn recorded_mtime(&mut self, what: Recorded) -> Result<Option<i64>> {
        let (stmt, id) = match what {
            Recorded::Transcript(id) => (
                prepared(
                    self.0,
                    "SELECT mtime_ns FROM source_files WHERE transcript_id = $1
                     ORDER BY id DESC LIMIT 1",
                )?,
                id,
            ),
            Recorded::File(id) => (
                prepared(
                    self.0,
                    "SELECT mtime_ns FROM source_files WHERE session_file_id = $1
                     ORDER BY id DESC LIMIT 1",
                )?,
                id,
            ),
        };
        self.0
            .query_opt(&stmt, &[&id])?
            .map(|r| r.col(0))
            .transpose()
    }

    fn write_transcript(
        &mut self,
        transcript: i64,
        out: &mut dyn Write,
        _on_damage: OnDamage<'_>,
    ) -> Result<u64> {
        write_transcript(self.0, transcript, out)
    }
}
