//! `restore` and `launch` from a team store: the session's files as the team store holds
//! them, gathered for the shared rules of [`crate::restore`].

use super::decode::RowExt;
use super::export::{main_transcript, write_transcript_mapped};
use super::PgStore;
use crate::error::Result;
use crate::export::safe_relative;
use crate::import::Adopted;
use crate::model::SessionRef;
use crate::restore::{CwdRewrite, Planned, RestoreOptions, RestoreReport, RestoreSource};
use postgres::Transaction;
use std::path::{Path, PathBuf};

/// Writes a session of the team store into Claude Code's folder (see
/// [`crate::restore::restore`]).
///
/// # Errors
/// As [`crate::restore::restore`].
pub fn restore(
    store: &PgStore,
    session: &SessionRef,
    options: &RestoreOptions,
) -> Result<RestoreReport> {
    crate::restore::restore_from(store, session, options)
}

/// The session's recorded cwd: the first `cwd` of its main transcript, else its project's
/// (as [`crate::restore::recorded_cwd`]).
///
/// # Errors
/// Fails on a database error.
pub fn recorded_cwd(tx: &mut Transaction<'_>, session: &SessionRef) -> Result<Option<String>> {
    if let Some(transcript) = main_transcript(tx, session)? {
        let portal = tx.bind(
            "SELECT raw FROM rows WHERE transcript_id = $1 AND status = 0 ORDER BY ordinal",
            &[&transcript],
        )?;
        loop {
            let rows = tx.query_portal(&portal, 64)?;
            if rows.is_empty() {
                break;
            }
            for row in &rows {
                let raw: &[u8] = row.col(0)?;
                if let Some([Some(value)]) = crate::jsonl::fields::pick(raw, [b"cwd".as_slice()]) {
                    if let Ok(cwd) = serde_json::from_slice::<String>(value) {
                        return Ok(Some(cwd));
                    }
                }
            }
        }
    }
    tx.query_one(
        "SELECT p.cwd FROM sessions s JOIN projects p ON p.id = s.project_id
         WHERE s.id = $1",
        &[&session.key],
    )?
    .col(0)
}

impl RestoreSource for PgStore {
    fn recorded_cwd(&self, session: &SessionRef) -> Result<Option<String>> {
        self.read(|tx| recorded_cwd(tx, session))
    }

    fn plan(
        &self,
        session: &SessionRef,
        rewrite: Option<&CwdRewrite>,
    ) -> Result<(Vec<Planned>, u64)> {
        let sid = &session.session_id;
        let mut rewritten = 0u64;
        let mut map = |line: &[u8]| {
            let out = rewrite.and_then(|r| r.rewrite_line(line));
            rewritten += u64::from(out.is_some());
            out
        };
        let files = self.read(|tx| {
            let mut files = Vec::new();
            for row in tx.query(
                "SELECT s.relpath, s.content, (SELECT f.mtime_ns FROM source_files f
                    WHERE f.session_file_id = s.id ORDER BY f.id DESC LIMIT 1), s.id
                 FROM session_files s WHERE s.session_id = $1 ORDER BY s.relpath",
                &[&session.key],
            )? {
                files.push(Planned {
                    holds: Adopted::File(row.col(3)?),
                    relpath: safe_relative(sid)?.join(safe_relative(row.col(0)?)?),
                    bytes: row.col(1)?,
                    mtime_ns: row.col(2)?,
                });
            }
            let transcripts: Vec<(i64, String, Option<i64>)> = tx
                .query(
                    "SELECT t.id, t.subpath, (SELECT f.mtime_ns FROM source_files f
                        WHERE f.transcript_id = t.id ORDER BY f.id DESC LIMIT 1)
                     FROM transcripts t WHERE t.session_id = $1 AND t.superseded_at IS NULL
                     ORDER BY t.subpath = '', t.subpath",
                    &[&session.key],
                )?
                .iter()
                .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?)))
                .collect::<Result<_>>()?;
            for (id, subpath, mtime_ns) in transcripts {
                let relpath = if subpath.is_empty() {
                    safe_relative(&format!("{sid}.jsonl"))?
                } else {
                    safe_relative(sid)?.join(safe_relative(&format!("{subpath}.jsonl"))?)
                };
                let mut bytes = Vec::new();
                write_transcript_mapped(tx, id, &mut bytes, &mut map)?;
                files.push(Planned {
                    holds: Adopted::Transcript(id),
                    relpath,
                    bytes,
                    mtime_ns,
                });
            }
            Ok(files)
        })?;
        Ok((files, rewritten))
    }

    fn fork(&self, session: &SessionRef) -> Result<SessionRef> {
        Ok(super::fork::fork(self, session, &crate::fork::ForkOptions::default())?.session)
    }

    fn adopt(&self, files: &[(Adopted, PathBuf, &[u8])]) -> Result<()> {
        super::import::adopt_written(self, files)
    }

    fn import_session(&self, transcript: &Path) -> Result<()> {
        super::import::import_session(self, transcript, &crate::model::NoProgress).map(drop)
    }
}

/// The places a session lives in Claude Code's trees, on every machine (see
/// [`crate::restore::locations`]).
///
/// # Errors
/// Fails on a database error.
pub fn locations(
    tx: &mut Transaction<'_>,
    session: &SessionRef,
) -> Result<Vec<crate::restore::Location>> {
    let rows = tx.query(
        "SELECT f.host, f.path, bool_and(f.vanished) FROM source_files f
         JOIN transcripts t ON t.id = f.transcript_id
         WHERE t.session_id = $1 AND t.subpath = ''
         GROUP BY f.host, f.path ORDER BY min(f.id)",
        &[&session.key],
    )?;
    rows.iter()
        .map(|r| {
            Ok(crate::restore::Location {
                host: Some(r.col(0)?),
                path: r.col(1)?,
                vanished: r.col(2)?,
            })
        })
        .collect()
}
