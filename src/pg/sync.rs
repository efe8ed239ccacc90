//! `sessiondb sync`: copies a local SQLite store into a team store, incrementally.
//!
//! The unit of work is one live file of a session: a transcript (main or sidechain) or a
//! session file (tool result, sidecar). Each unit is compared with the team store's copy
//! and, when the target lacks something, written in one PostgreSQL transaction: a killed
//! sync leaves whole units behind, and the next run finds them equal and goes on.
//!
//! Comparing is cheap first and exact where it matters: a transcript whose line count,
//! byte count and last line match on both sides is taken as synced without reading it.
//! Otherwise the target's lines must be a prefix of the local ones (the SHA-256 of each
//! line, computed on each side) before only the missing lines are sent. A target that
//! disagrees is replaced by a new version (the old one kept, superseded) only when it holds
//! no line this store never had (the local file was rewritten: its old lines are kept
//! here too); otherwise it is reported as a conflict and left alone, so a sync never hides
//! a line another writer put in the team store.
//!
//! Lines are stored with the same projections the importer computes (the shared line
//! reader), keep their `local` flag (lines `append`, `tag`, `rename` wrote), and the
//! import ledger of each file is carried over under this machine's name, so a later
//! `import` into the team store from this machine continues where the local store stood.

use super::{import as pg_import, Origin, PgStore};
use crate::error::Result;
use crate::jsonl::{self, Envelope, LineStatus};
use crate::model::Progress;
use crate::store::Store;
use postgres::Transaction;
use rusqlite::OptionalExtension;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::time::Instant;

/// Lines per insert statement (as the importer).
const ROW_BATCH: usize = 512;

/// What a sync did.
#[derive(Debug, Default, Clone, Serialize, PartialEq)]
pub struct SyncReport {
    /// Sessions in the local store.
    pub sessions: u64,
    /// Sessions this run wrote to that the team store did not list when it started.
    pub sessions_created: u64,
    /// Transcripts (live file versions) in the local store.
    pub transcripts: u64,
    /// Transcripts copied whole because the target had none.
    pub transcripts_copied: u64,
    /// Transcripts whose missing tail lines were sent.
    pub transcripts_extended: u64,
    /// Transcripts the target held differently, replaced by a new version there.
    pub transcripts_replaced: u64,
    /// Transcripts already complete in the target (or longer there).
    pub transcripts_unchanged: u64,
    /// Session files (tool results, sidecars) in the local store.
    pub files: u64,
    /// Session files sent.
    pub files_copied: u64,
    /// Session files already equal in the target.
    pub files_unchanged: u64,
    /// Lines sent.
    pub rows_sent: u64,
    /// Bytes sent (lines with their newlines, and file contents).
    pub bytes_sent: u64,
    /// Units left alone because the target holds another machine's different version.
    pub conflicts: Vec<String>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// One local session.
struct LocalSession {
    project: String,
    cwd: Option<String>,
    session_id: String,
    written_at: Option<i64>,
}

/// One live local transcript and its fingerprint.
struct LocalTranscript {
    id: i64,
    session: usize,
    subpath: String,
    agent_id: Option<String>,
    meta_json: Option<Vec<u8>>,
    fingerprint: Fingerprint,
}

/// One local session file (its bytes are read when it is compared, one file at a time).
struct LocalFile {
    id: i64,
    session: usize,
    relpath: String,
    size: u64,
}

/// What identifies a transcript's content cheaply: line count, file bytes, and the SHA-256
/// of the last line (raw bytes, with its newline when it has one).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Fingerprint {
    rows: i64,
    bytes: i64,
    last: Option<Vec<u8>>,
}

/// One stored line, as the local store holds it.
struct LocalRow {
    raw: Vec<u8>,
    terminated: bool,
    local: bool,
}

/// The source file ledger entry of a local unit.
struct LedgerEntry {
    path: String,
    size: i64,
    mtime_ns: i64,
    imported_bytes: i64,
    prefix_hash: i64,
    tail_hash: Option<i64>,
    vanished: bool,
}

/// Copies every live session file of `source` that `target` lacks.
///
/// # Errors
/// Fails on a database error on either side; what was committed before stays.
pub fn sync(source: &Store, target: &PgStore, progress: &dyn Progress) -> Result<SyncReport> {
    let started = Instant::now();
    let mut report = SyncReport::default();
    let reader = source.reader()?;
    let (sessions, transcripts, files) = local_inventory(&reader)?;
    let remote_transcripts = remote_transcripts(target)?;
    let remote_files = remote_files(target)?;
    report.sessions = sessions.len() as u64;
    report.transcripts = transcripts.len() as u64;
    report.files = files.len() as u64;
    let total = transcripts
        .iter()
        .map(|t| t.fingerprint.bytes as u64)
        .chain(files.iter().map(|f| f.size))
        .sum();
    progress.start(total);
    let mut known_sessions: std::collections::HashSet<(String, String)> = remote_transcripts
        .keys()
        .map(|(p, s, _)| (p.clone(), s.clone()))
        .chain(remote_files.keys().map(|(p, s, _)| (p.clone(), s.clone())))
        .collect();
    let origin = target.origin().clone();
    for t in &transcripts {
        let session = &sessions[t.session];
        let key = (
            session.project.clone(),
            session.session_id.clone(),
            t.subpath.clone(),
        );
        let shown = format!("{}/{}", session.project, session.session_id);
        let rows = if remote_transcripts.get(&key) == Some(&t.fingerprint) {
            None
        } else {
            Some(local_rows(&reader, t.id)?)
        };
        match rows {
            None => report.transcripts_unchanged += 1,
            // Deleted locally since the listing: nothing to send.
            Some(rows) if rows.is_empty() && t.fingerprint.rows > 0 => {}
            Some(rows) => {
                let ledger = local_ledger(&reader, "transcript_id", t.id)?;
                let outcome = target.write(|tx| {
                    let key = open_session(tx, session, &origin)?;
                    let outcome = copy_transcript(tx, key, t, &rows, &reader)?;
                    if outcome.changed() {
                        finish_unit(
                            tx,
                            key,
                            session,
                            &origin,
                            ledger.as_ref(),
                            Unit::Transcript(&t.subpath),
                        )?;
                    }
                    Ok(outcome)
                })?;
                if outcome.changed()
                    && known_sessions.insert((session.project.clone(), session.session_id.clone()))
                {
                    report.sessions_created += 1;
                }
                match outcome {
                    Outcome::Copied(sent) => {
                        report.transcripts_copied += 1;
                        report.add_sent(sent);
                    }
                    Outcome::Extended(sent) => {
                        report.transcripts_extended += 1;
                        report.add_sent(sent);
                    }
                    Outcome::Replaced(sent) => {
                        report.transcripts_replaced += 1;
                        report.add_sent(sent);
                    }
                    Outcome::Unchanged => report.transcripts_unchanged += 1,
                    Outcome::Conflict(why) => report.conflicts.push(format!(
                        "{shown}: {}: {why}",
                        transcript_name(&session.session_id, &t.subpath)
                    )),
                }
            }
        }
        progress.advance(t.fingerprint.bytes as u64, &shown);
    }
    for f in &files {
        let session = &sessions[f.session];
        let key = (
            session.project.clone(),
            session.session_id.clone(),
            f.relpath.clone(),
        );
        let shown = format!("{}/{}/{}", session.project, session.session_id, f.relpath);
        let Some(content) = local_file_content(&reader, f.id)? else {
            // Deleted locally since the listing: nothing to send.
            continue;
        };
        let digest = Sha256::digest(&content).to_vec();
        if remote_files.get(&key) == Some(&digest) {
            report.files_unchanged += 1;
        } else {
            let ledger = local_ledger(&reader, "session_file_id", f.id)?;
            let outcome = target.write(|tx| {
                let key = open_session(tx, session, &origin)?;
                let outcome = copy_file(tx, key, &f.relpath, &content, &digest, &origin)?;
                if outcome.changed() {
                    finish_unit(
                        tx,
                        key,
                        session,
                        &origin,
                        ledger.as_ref(),
                        Unit::File(&f.relpath),
                    )?;
                }
                Ok(outcome)
            })?;
            if outcome.changed()
                && known_sessions.insert((session.project.clone(), session.session_id.clone()))
            {
                report.sessions_created += 1;
            }
            match outcome {
                Outcome::Unchanged => report.files_unchanged += 1,
                Outcome::Conflict(why) => report.conflicts.push(format!("{shown}: {why}")),
                Outcome::Copied(sent) | Outcome::Extended(sent) | Outcome::Replaced(sent) => {
                    report.files_copied += 1;
                    report.add_sent(sent);
                }
            }
        }
        progress.advance(f.size, &shown);
    }
    progress.finish();
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

impl SyncReport {
    fn add_sent(&mut self, sent: Sent) {
        self.rows_sent += sent.rows;
        self.bytes_sent += sent.bytes;
    }

    /// Whether the run sent nothing (the target already held everything, or conflicted).
    pub fn sent_nothing(&self) -> bool {
        self.rows_sent == 0 && self.files_copied == 0
    }
}

/// A transcript's file name within its session, for messages.
fn transcript_name(session: &str, subpath: &str) -> String {
    if subpath.is_empty() {
        format!("{session}.jsonl")
    } else {
        format!("{subpath}.jsonl")
    }
}

/// What one unit's transaction did.
#[derive(Debug)]
enum Outcome {
    Copied(Sent),
    Extended(Sent),
    Replaced(Sent),
    Unchanged,
    Conflict(String),
}

impl Outcome {
    fn changed(&self) -> bool {
        matches!(
            self,
            Outcome::Copied(_) | Outcome::Extended(_) | Outcome::Replaced(_)
        )
    }
}

/// Lines and bytes one unit sent.
#[derive(Debug, Default, Clone, Copy)]
struct Sent {
    rows: u64,
    bytes: u64,
}

/// Which kind of unit a ledger entry belongs to, and its name in the session.
#[derive(Clone, Copy)]
enum Unit<'a> {
    Transcript(&'a str),
    File(&'a str),
}

type Inventory = (Vec<LocalSession>, Vec<LocalTranscript>, Vec<LocalFile>);

/// The local sessions, their live transcripts (with fingerprints) and their files, read in
/// one snapshot.
fn local_inventory(conn: &rusqlite::Connection) -> Result<Inventory> {
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
                    (SELECT coalesce(sum(length(r.raw) + r.terminated), 0)
                       FROM rows r WHERE r.transcript_id = t.id),
                    (SELECT r.raw FROM rows r WHERE r.transcript_id = t.id
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
fn local_rows(conn: &rusqlite::Connection, transcript: i64) -> Result<Vec<LocalRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT raw, terminated, local FROM rows WHERE transcript_id = ?1 ORDER BY ordinal",
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
fn lines_ever_held(
    conn: &rusqlite::Connection,
    transcript: i64,
) -> Result<std::collections::HashSet<(Vec<u8>, bool)>> {
    let mut stmt = conn.prepare(
        "SELECT r.raw, r.terminated FROM rows r JOIN transcripts t ON t.id = r.transcript_id
         JOIN transcripts me ON me.session_id = t.session_id AND me.subpath = t.subpath
         WHERE me.id = ?1",
    )?;
    let mut rows = stmt.query([transcript])?;
    let mut out = std::collections::HashSet::new();
    while let Some(r) = rows.next()? {
        let raw: Vec<u8> = r.get(0)?;
        out.insert((Sha256::digest(&raw).to_vec(), r.get(1)?));
    }
    Ok(out)
}

/// A local session file's bytes.
fn local_file_content(conn: &rusqlite::Connection, id: i64) -> Result<Option<Vec<u8>>> {
    Ok(conn
        .query_row(
            "SELECT content FROM session_files WHERE id = ?1",
            [id],
            |r| r.get(0),
        )
        .optional()?)
}

/// The newest local ledger entry of a transcript or session file (`column` names which).
fn local_ledger(conn: &rusqlite::Connection, column: &str, id: i64) -> Result<Option<LedgerEntry>> {
    let sql = format!(
        "SELECT path, size, mtime_ns, imported_bytes, prefix_hash, tail_hash, vanished
         FROM source_files
         WHERE {column} = ?1 ORDER BY rowid DESC LIMIT 1"
    );
    Ok(conn
        .query_row(&sql, [id], |r| {
            Ok(LedgerEntry {
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

type RemoteKey = (String, String, String);

/// The fingerprints of the target's live transcripts, by (project, session, subpath).
fn remote_transcripts(target: &PgStore) -> Result<HashMap<RemoteKey, Fingerprint>> {
    target.read(|tx| {
        let rows = tx.query(
            "SELECT p.key, s.session_id, t.subpath, agg.n, agg.bytes, last.digest
             FROM transcripts t
             JOIN sessions s ON s.id = t.session_id
             JOIN projects p ON p.id = s.project_id
             CROSS JOIN LATERAL (
                SELECT count(*) AS n,
                       coalesce(sum(length(r.raw) + r.terminated::int), 0)::bigint AS bytes
                FROM rows r WHERE r.transcript_id = t.id) agg
             LEFT JOIN LATERAL (
                SELECT sha256(CASE WHEN r.terminated THEN r.raw || '\\x0a'::bytea ELSE r.raw END)
                    AS digest
                FROM rows r WHERE r.transcript_id = t.id
                ORDER BY r.ordinal DESC LIMIT 1) last ON true
             WHERE t.superseded_at IS NULL",
            &[],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| {
                (
                    (r.get(0), r.get(1), r.get(2)),
                    Fingerprint {
                        rows: r.get(3),
                        bytes: r.get(4),
                        last: r.get(5),
                    },
                )
            })
            .collect())
    })
}

/// The SHA-256 of the target's session files, by (project, session, relpath).
fn remote_files(target: &PgStore) -> Result<HashMap<RemoteKey, Vec<u8>>> {
    target.read(|tx| {
        let rows = tx.query(
            "SELECT p.key, s.session_id, f.relpath, sha256(f.content)
             FROM session_files f
             JOIN sessions s ON s.id = f.session_id
             JOIN projects p ON p.id = s.project_id",
            &[],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| ((r.get(0), r.get(1), r.get(2)), r.get(3)))
            .collect())
    })
}

/// The target's session row for a local session (created with this machine as its origin
/// when new), locked for the unit's transaction; the project's cwd is filled in if unknown.
fn open_session(tx: &mut Transaction<'_>, session: &LocalSession, origin: &Origin) -> Result<i64> {
    let key = pg_import::upsert_session(tx, &session.project, &session.session_id, origin)?;
    if let Some(cwd) = &session.cwd {
        tx.execute(
            "UPDATE projects SET cwd = $2 WHERE key = $1 AND cwd IS NULL",
            &[&session.project, &super::rows::without_nul(cwd).as_ref()],
        )?;
    }
    Ok(key)
}

/// Whether the target's session was first written by this machine: only then may a sync
/// replace one of its files.
fn owned(tx: &mut Transaction<'_>, session: i64, origin: &Origin) -> Result<bool> {
    let host: String = tx
        .query_one(
            "SELECT origin_host FROM sessions WHERE id = $1",
            &[&session],
        )?
        .get(0);
    Ok(host == origin.host)
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

/// Brings the target's live transcript of `t` up to the local lines `rows`.
fn copy_transcript(
    tx: &mut Transaction<'_>,
    session: i64,
    t: &LocalTranscript,
    rows: &[LocalRow],
    reader: &rusqlite::Connection,
) -> Result<Outcome> {
    let live: Option<i64> = tx
        .query_opt(
            "SELECT id FROM transcripts WHERE session_id = $1 AND subpath = $2
               AND superseded_at IS NULL",
            &[&session, &t.subpath],
        )?
        .map(|r| r.get(0));
    let Some(live) = live else {
        let id = pg_import::create_transcript(tx, session, &t.subpath, t.agent_id.as_deref())?;
        set_meta(tx, id, t.meta_json.as_deref())?;
        return Ok(Outcome::Copied(send_rows(tx, id, 0, rows)?));
    };
    // The target's lines, each as the SHA-256 of its bytes and its newline flag: enough to
    // find how far it agrees with the local lines without sending either side's bytes.
    let remote: Vec<(i64, Vec<u8>, bool, bool)> = tx
        .query(
            "SELECT ordinal, sha256(raw), terminated, local FROM rows WHERE transcript_id = $1
             ORDER BY ordinal",
            &[&live],
        )?
        .into_iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    let have = remote.len();
    let next = remote.last().map_or(0, |(ordinal, ..)| ordinal + 1);
    let common = remote
        .iter()
        .zip(rows)
        .take_while(|((_, digest, terminated, _), row)| {
            *terminated == row.terminated
                && digest.as_slice() == Sha256::digest(&row.raw).as_slice()
        })
        .count();
    if common == have {
        // The target holds a prefix of the local lines: send the rest.
        set_meta(tx, live, t.meta_json.as_deref())?;
        if have == rows.len() {
            return Ok(Outcome::Unchanged);
        }
        return Ok(Outcome::Extended(send_rows(tx, live, next, &rows[have..])?));
    }
    if common == rows.len() {
        // The target holds every local line and more (another writer appended there).
        return Ok(Outcome::Unchanged);
    }
    if common + 1 == have && !remote[common].2 {
        // The target's last line is unterminated and differs: Claude Code was writing it
        // when it was read. Store the complete version, as import does.
        let open = remote[common].0;
        tx.execute(
            "DELETE FROM rows WHERE transcript_id = $1 AND ordinal = $2",
            &[&live, &open],
        )?;
        set_meta(tx, live, t.meta_json.as_deref())?;
        return Ok(Outcome::Extended(send_rows(
            tx,
            live,
            open,
            &rows[common..],
        )?));
    }
    // The versions differ: the rule for a rewritten file (`pg_import::replace_version`,
    // the same as import's). The team store's version is replaced only when every line of
    // it past the common part that sessiondb did not write is one this store holds or held
    // (the local file was rewritten and re-imported: its old lines are kept here as a
    // superseded version); a line from another machine's copy must stay visible there.
    // Lines sessiondb wrote (a `serve` client's, an `append`) are carried over.
    let known = lines_ever_held(reader, t.id)?;
    let foreign = remote[common..]
        .iter()
        .filter(|(_, digest, terminated, local)| {
            !local && !known.contains(&(digest.clone(), *terminated))
        })
        .count();
    if foreign > 0 {
        return Ok(Outcome::Conflict(format!(
            "the team store holds {foreign} line(s) this store never had (another writer's); \
             left as it is"
        )));
    }
    let mut held = crate::import::Held::default();
    let envelopes: Vec<Envelope<'_>> = rows.iter().map(|r| Envelope::parse(&r.raw).1).collect();
    for (row, env) in rows.iter().zip(&envelopes) {
        held.note(&row.raw, env);
    }
    let replaced = pg_import::replace_version(
        tx,
        session,
        live,
        &t.subpath,
        t.agent_id.as_deref(),
        &held,
        true,
    )?;
    let id = replaced.expect("a replacement from here is never refused");
    set_meta(tx, id, t.meta_json.as_deref())?;
    let mut sent = send_rows(tx, id, 0, rows)?;
    let own = own_session(tx, id)?;
    sent.rows += pg_import::carry_local_rows(tx, session, live, id, &own, &held)?;
    Ok(Outcome::Replaced(sent))
}

/// Sets a transcript's sidecar (`.meta.json`) bytes when the local store has them.
fn set_meta(tx: &mut Transaction<'_>, transcript: i64, meta: Option<&[u8]>) -> Result<()> {
    if let Some(meta) = meta {
        tx.execute(
            "UPDATE transcripts SET meta_json = $2 WHERE id = $1
               AND meta_json IS DISTINCT FROM $2",
            &[&transcript, &meta],
        )?;
    }
    Ok(())
}

/// Stores `rows` from `ordinal` on, with the importer's projections and each line's
/// `local` flag.
fn send_rows(
    tx: &mut Transaction<'_>,
    transcript: i64,
    ordinal: i64,
    rows: &[LocalRow],
) -> Result<Sent> {
    let mut sent = Sent::default();
    let mut at = ordinal;
    let own = own_session(tx, transcript)?;
    // Runs of lines with one `local` flag, in batches: one insert statement each.
    let mut start = 0;
    while start < rows.len() {
        let local = rows[start].local;
        let mut end = start;
        while end < rows.len() && rows[end].local == local && end - start < ROW_BATCH {
            end += 1;
        }
        let batch = &rows[start..end];
        let parsed: Vec<crate::import::Parsed<'_>> = batch
            .iter()
            .map(|row| {
                let (status, env) = Envelope::parse(&row.raw);
                let search = if crate::search::is_indexed(status, &env) {
                    jsonl::search_text(&row.raw)
                } else {
                    None
                };
                let line = jsonl::Line {
                    bytes: &row.raw,
                    terminated: row.terminated,
                };
                (line, status, env, search)
            })
            .collect();
        let ids = super::rows::insert_lines(tx, transcript, at, &parsed, &own, local)?;
        for ((line, status, env, _), id) in parsed.iter().zip(ids) {
            if *status == LineStatus::Record {
                super::rows::project_record(tx, transcript, id, line.bytes, env)?;
            }
            sent.rows += 1;
            sent.bytes += line.bytes.len() as u64 + u64::from(line.terminated);
        }
        at += batch.len() as i64;
        start = end;
    }
    Ok(sent)
}

/// The session id a line is filed under when it names none: its transcript's own.
fn own_session(tx: &mut Transaction<'_>, transcript: i64) -> Result<String> {
    Ok(tx
        .query_one(
            "SELECT s.session_id FROM transcripts t JOIN sessions s ON s.id = t.session_id
             WHERE t.id = $1",
            &[&transcript],
        )?
        .get(0))
}

/// Brings the target's copy of a session file up to the local bytes.
fn copy_file(
    tx: &mut Transaction<'_>,
    session: i64,
    relpath: &str,
    content: &[u8],
    digest: &[u8],
    origin: &Origin,
) -> Result<Outcome> {
    let existing: Option<Vec<u8>> = tx
        .query_opt(
            "SELECT sha256(content) FROM session_files WHERE session_id = $1 AND relpath = $2",
            &[&session, &relpath],
        )?
        .map(|r| r.get(0));
    match existing {
        Some(stored) if stored == digest => return Ok(Outcome::Unchanged),
        Some(_) if !owned(tx, session, origin)? => {
            return Ok(Outcome::Conflict(
                "the team store holds different bytes written by another machine; left as they are"
                    .to_owned(),
            ))
        }
        _ => {}
    }
    pg_import::store_session_file(tx, session, relpath, content)?;
    Ok(Outcome::Copied(Sent {
        rows: 0,
        bytes: content.len() as u64,
    }))
}

/// Carries the unit's import ledger entry over (under this machine's name) and refreshes
/// the session's catalog row, in the unit's transaction.
fn finish_unit(
    tx: &mut Transaction<'_>,
    session: i64,
    local: &LocalSession,
    origin: &Origin,
    ledger: Option<&LedgerEntry>,
    unit: Unit<'_>,
) -> Result<()> {
    if let Some(l) = ledger {
        let (transcript, file): (Option<i64>, Option<i64>) = match unit {
            Unit::Transcript(subpath) => (
                tx.query_opt(
                    "SELECT id FROM transcripts WHERE session_id = $1 AND subpath = $2
                       AND superseded_at IS NULL",
                    &[&session, &subpath],
                )?
                .map(|r| r.get(0)),
                None,
            ),
            Unit::File(relpath) => (
                None,
                tx.query_opt(
                    "SELECT id FROM session_files WHERE session_id = $1 AND relpath = $2",
                    &[&session, &relpath],
                )?
                .map(|r| r.get(0)),
            ),
        };
        tx.execute(
            "INSERT INTO source_files (host, path, transcript_id, session_file_id, size,
                mtime_ns, imported_bytes, prefix_hash, tail_hash, vanished)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (host, path) DO UPDATE SET
                transcript_id = excluded.transcript_id,
                session_file_id = excluded.session_file_id,
                size = excluded.size, mtime_ns = excluded.mtime_ns,
                imported_bytes = excluded.imported_bytes, prefix_hash = excluded.prefix_hash,
                tail_hash = excluded.tail_hash, vanished = excluded.vanished",
            &[
                &origin.host,
                &l.path,
                &transcript,
                &file,
                &l.size,
                &l.mtime_ns,
                &l.imported_bytes,
                &l.prefix_hash,
                &l.tail_hash,
                &l.vanished,
            ],
        )?;
    }
    super::catalog::refresh_session(tx, session, local.written_at)
}
