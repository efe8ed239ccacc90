//! The local SQLite store as a sync reads it: its sessions, live transcripts (with their
//! fingerprints), session files, lines and ledger entries.

use super::Fingerprint;
use crate::error::Result;
use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};

/// One local session.
pub(super) struct LocalSession {
    pub project: String,
    pub cwd: Option<String>,
    pub session_id: String,
    pub written_at: Option<i64>,
}

/// One live local transcript and its fingerprint.
pub(super) struct LocalTranscript {
    pub id: i64,
    /// Its session's index in the inventory.
    pub session: usize,
    pub subpath: String,
    pub agent_id: Option<String>,
    pub meta_json: Option<Vec<u8>>,
    pub fingerprint: Fingerprint,
}

/// One local session file (its bytes are read when it is compared, one file at a time).
pub(super) struct LocalFile {
    pub id: i64,
    /// Its session's index in the inventory.
    pub session: usize,
    pub relpath: String,
    pub size: u64,
}

/// One stored line, as the local store holds it.
pub(super) struct LocalRow {
    pub raw: Vec<u8>,
    pub terminated: bool,
    pub local: bool,
}

/// The source file ledger entry of a local unit, carried to the target as it is.
pub(crate) struct LedgerCopy {
    pub path: String,
    pub size: i64,
    pub mtime_ns: i64,
    pub imported_bytes: i64,
    pub prefix_hash: i64,
    pub tail_hash: Option<i64>,
    pub vanished: bool,
}

type Inventory = (Vec<LocalSession>, Vec<LocalTranscript>, Vec<LocalFile>);

/// The local sessions, their live transcripts (with fingerprints) and their files, read in
/// one snapshot.
pub(super) fn inventory(conn: &Connection) -> Result<Inventory> {
    let tx = conn.unchecked_transaction()?;
    let mut sessions = Vec::new();
    let mut index = HashMap::new();
    {
        let mut stmt = tx.prepare(
            "SELECT s.id, p.key, p.cwd, s.session_id, c.written_at
             FROM sessions s JOIN projects p ON p.id = s.project_id
             LEFT JOIN catalog c ON c.session_key = s.id
             ORDER BY p.key, s.session_id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            index.insert(r.get::<_, i64>(0)?, sessions.len());
            sessions.push(LocalSession {
                project: r.get(1)?,
                cwd: r.get(2)?,
                session_id: r.get(3)?,
                written_at: r.get(4)?,
            });
        }
    }
    let mut transcripts = Vec::new();
    {
        let mut stmt = tx.prepare(
            "SELECT t.id, t.session_id, t.subpath, t.agent_id, t.meta_json,
                    (SELECT count(*) FROM rows r WHERE r.transcript_id = t.id),
                    (SELECT coalesce(sum(iif(r.dict IS NULL, length(r.raw), line_len(r.raw, r.dict)) + r.terminated), 0)
                       FROM rows r WHERE r.transcript_id = t.id),
                    (SELECT line(r.raw, r.dict) FROM rows r WHERE r.transcript_id = t.id
                       ORDER BY r.ordinal DESC LIMIT 1),
                    (SELECT r.terminated FROM rows r WHERE r.transcript_id = t.id
                       ORDER BY r.ordinal DESC LIMIT 1)
             FROM transcripts t WHERE t.superseded_at IS NULL
             ORDER BY t.session_id, t.subpath",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let session_key: i64 = r.get(1)?;
            let Some(&session) = index.get(&session_key) else {
                continue;
            };
            let last: Option<Vec<u8>> = r.get(7)?;
            let terminated: Option<bool> = r.get(8)?;
            transcripts.push(LocalTranscript {
                id: r.get(0)?,
                session,
                subpath: r.get(2)?,
                agent_id: r.get(3)?,
                meta_json: r.get(4)?,
                fingerprint: Fingerprint {
                    rows: r.get(5)?,
                    bytes: r.get(6)?,
                    last: last.map(|raw| line_digest(&raw, terminated.unwrap_or(true))),
                },
            });
        }
    }
    let mut files = Vec::new();
    {
        let mut stmt = tx.prepare(
            "SELECT id, session_id, relpath, length(content) FROM session_files
             ORDER BY session_id, relpath",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let session_key: i64 = r.get(1)?;
            let Some(&session) = index.get(&session_key) else {
                continue;
            };
            files.push(LocalFile {
                id: r.get(0)?,
                session,
                relpath: r.get(2)?,
                size: r.get::<_, i64>(3)? as u64,
            });
        }
    }
    tx.finish()?;
    Ok((sessions, transcripts, files))
}

/// A local transcript's lines in file order.
pub(super) fn rows(conn: &Connection, transcript: i64) -> Result<Vec<LocalRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT line(raw, dict) AS raw, terminated, local FROM rows WHERE transcript_id = ?1 ORDER BY ordinal",
    )?;
    let rows = stmt
        .query_map([transcript], |r| {
            Ok(LocalRow {
                raw: r.get(0)?,
                terminated: r.get(1)?,
                local: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Every line any version of a local transcript's file ever held (superseded versions
/// included), as (SHA-256 of its bytes, newline flag).
pub(super) fn lines_ever_held(
    conn: &Connection,
    transcript: i64,
) -> Result<HashSet<(Vec<u8>, bool)>> {
    let mut stmt = conn.prepare(
        "SELECT line(r.raw, r.dict) AS raw, r.terminated FROM rows r JOIN transcripts t ON t.id = r.transcript_id
         JOIN transcripts me ON me.session_id = t.session_id AND me.subpath = t.subpath
         WHERE me.id = ?1",
    )?;
    let mut rows = stmt.query([transcript])?;
    let mut out = HashSet::new();
    while let Some(r) = rows.next()? {
        let raw: Vec<u8> = r.get(0)?;
        out.insert((Sha256::digest(&raw).to_vec(), r.get(1)?));
    }
    Ok(out)
}

/// A local session file's bytes.
pub(super) fn file_content(conn: &Connection, id: i64) -> Result<Option<Vec<u8>>> {
    Ok(conn
        .query_row(
            "SELECT content FROM session_files WHERE id = ?1",
            [id],
            |r| r.get(0),
        )
        .optional()?)
}

/// The newest local ledger entry of a transcript or session file (`column` names which).
pub(super) fn ledger(conn: &Connection, column: &str, id: i64) -> Result<Option<LedgerCopy>> {
    let sql = format!(
        "SELECT path, size, mtime_ns, imported_bytes, prefix_hash, tail_hash, vanished
         FROM source_files
         WHERE {column} = ?1 ORDER BY rowid DESC LIMIT 1"
    );
    Ok(conn
        .query_row(&sql, [id], |r| {
            Ok(LedgerCopy {
                path: r.get(0)?,
                size: r.get(1)?,
                mtime_ns: r.get(2)?,
                imported_bytes: r.get(3)?,
                prefix_hash: r.get(4)?,
                tail_hash: r.get(5)?,
                vanished: r.get(6)?,
            })
        })
        .optional()?)
}

/// The SHA-256 of one line as the file holds it (with its newline when it has one).
fn line_digest(raw: &[u8], terminated: bool) -> Vec<u8> {
    let mut hash = Sha256::new();
    hash.update(raw);
    if terminated {
        hash.update(b"\n");
    }
    hash.finalize().to_vec()
}
