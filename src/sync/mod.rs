//! `sessiondb sync`: copies a local SQLite store into another store (the team store),
//! incrementally. The rules live here once; the target answers through [`SyncTarget`] and
//! [`SyncTx`] (an import's transaction, [`TranscriptTx`], and a few questions more), the
//! source is read by [`sqlite`].
//!
//! The unit of work is one live file of a session: a transcript (main or sidechain) or a
//! session file (tool result, sidecar). Each unit is compared with the target's copy and,
//! when the target lacks something, written in one transaction: a killed sync leaves whole
//! units behind, and the next run finds them equal and goes on.
//!
//! Comparing is cheap first and exact where it matters: a transcript whose line count,
//! byte count and last line match on both sides is taken as synced without reading it.
//! Otherwise the target's lines must be a prefix of the local ones (the SHA-256 of each
//! line, computed on each side) before only the missing lines are sent. A target that
//! disagrees is replaced by a new version (the old one kept, superseded) only when it holds
//! no line this store never had (the local file was rewritten: its old lines are kept
//! here too); otherwise it is reported as a conflict and left alone, so a sync never hides
//! a line another writer put in the target.
//!
//! Lines are stored with the same projections the importer computes, keep their `local`
//! flag (lines `append`, `tag`, `rename` wrote), and the import ledger of each file is
//! carried over under this machine's name, so a later `import` into the target from this
//! machine continues where the local store stood.

mod sqlite;

use crate::error::Result;
use crate::import::transcript::{self, TranscriptTx};
use crate::import::{Held, Parsed};
use crate::jsonl::{self, Envelope, LineStatus};
use crate::model::Progress;
use crate::store::Store;
use crate::usage::record::Fold;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlite::{LocalFile, LocalRow, LocalSession, LocalTranscript};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

pub(crate) use sqlite::LedgerCopy;

/// What a sync did.
#[derive(Debug, Default, Clone, Serialize, PartialEq)]
#[non_exhaustive]
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

/// A unit's place on both sides: (project, session, subpath or relpath).
pub(crate) type UnitKey = (String, String, String);

/// What identifies a transcript's content cheaply: line count, file bytes, and the SHA-256
/// of the last line (raw bytes, with its newline when it has one).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Fingerprint {
    pub rows: i64,
    pub bytes: i64,
    pub last: Option<Vec<u8>>,
}

/// One line of the target's copy, as the comparison needs it: its ordinal, the SHA-256 of
/// its bytes, its newline flag and whether sessiondb wrote it.
pub(crate) struct TargetLine {
    pub ordinal: i64,
    pub digest: Vec<u8>,
    pub terminated: bool,
    pub local: bool,
}

/// What a store answers to receive a sync, beyond what an import asks.
pub(crate) trait SyncTx: TranscriptTx {
    /// The target's session for a local one (created with this machine as its origin when
    /// new), locked for the unit's transaction; the project's cwd is filled in if unknown.
    fn open_session(&mut self, project: &str, session: &str, cwd: Option<&str>) -> Result<i64>;
    /// Whether the session was first written by this machine: only then may a sync
    /// replace one of its files.
    fn owned(&mut self, session: i64) -> Result<bool>;
    /// A transcript's lines, in order.
    fn target_lines(&mut self, transcript: i64) -> Result<Vec<TargetLine>>;
    /// Sets a transcript's sidecar (`.meta.json`) bytes.
    fn set_meta(&mut self, transcript: i64, meta: &[u8]) -> Result<()>;
    /// The SHA-256 of a session file's bytes.
    fn file_digest(&mut self, session: i64, relpath: &str) -> Result<Option<Vec<u8>>>;
    /// Writes a local ledger entry under this machine's name, naming the target's
    /// transcript or session file.
    fn carry_ledger(
        &mut self,
        entry: &LedgerCopy,
        transcript: Option<i64>,
        session_file: Option<i64>,
    ) -> Result<()>;
    /// Recomputes the session's catalog row (`written_at`: the local one, when known).
    fn refresh_catalog(&mut self, session: i64, written_at: Option<i64>) -> Result<()>;
}

/// One unit's work, run by [`SyncTarget::write_unit`] in a transaction of its own.
pub(crate) trait Unit {
    /// Writes the unit through `tx`.
    fn write<T: SyncTx>(&self, tx: &mut T) -> Result<Outcome>;
}

/// A store a sync can write to.
pub(crate) trait SyncTarget {
    /// The fingerprints of the target's live transcripts.
    fn fingerprints(&self) -> Result<HashMap<UnitKey, Fingerprint>>;
    /// The SHA-256 of the target's session files.
    fn file_digests(&self) -> Result<HashMap<UnitKey, Vec<u8>>>;
    /// Runs `unit` in one transaction, committed only when it succeeds.
    fn write_unit<U: Unit>(&self, unit: &U) -> Result<Outcome>;
}

/// Copies every live session file of `source` that `target` lacks.
///
/// # Errors
/// Fails on a database error on either side; what was committed before stays.
pub(crate) fn sync(
    source: &Store,
    target: &impl SyncTarget,
    progress: &dyn Progress,
) -> Result<SyncReport> {
    let started = Instant::now();
    let mut report = SyncReport::default();
    let reader = source.reader()?;
    let (sessions, transcripts, files) = sqlite::inventory(&reader)?;
    let remote_transcripts = target.fingerprints()?;
    let remote_files = target.file_digests()?;
    report.sessions = sessions.len() as u64;
    report.transcripts = transcripts.len() as u64;
    report.files = files.len() as u64;
    let total = transcripts
        .iter()
        .map(|t| t.fingerprint.bytes as u64)
        .chain(files.iter().map(|f| f.size))
        .sum();
    progress.start(total);
    let mut known_sessions: HashSet<(String, String)> = remote_transcripts
        .keys()
        .chain(remote_files.keys())
        .map(|(p, s, _)| (p.clone(), s.clone()))
        .collect();
    let mut created = |report: &mut SyncReport, session: &LocalSession| {
        if known_sessions.insert((session.project.clone(), session.session_id.clone())) {
            report.sessions_created += 1;
        }
    };
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
            Some(sqlite::rows(&reader, t.id)?)
        };
        match rows {
            None => report.transcripts_unchanged += 1,
            // Deleted locally since the listing: nothing to send.
            Some(rows) if rows.is_empty() && t.fingerprint.rows > 0 => {}
            Some(rows) => {
                let unit = TranscriptUnit {
                    session,
                    transcript: t,
                    rows: &rows,
                    ledger: sqlite::ledger(&reader, "transcript_id", t.id)?,
                    reader: &reader,
                };
                let outcome = target.write_unit(&unit)?;
                if outcome.changed() {
                    created(&mut report, session);
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
        let Some(content) = sqlite::file_content(&reader, f.id)? else {
            // Deleted locally since the listing: nothing to send.
            continue;
        };
        let digest = Sha256::digest(&content).to_vec();
        if remote_files.get(&key) == Some(&digest) {
            report.files_unchanged += 1;
        } else {
            let unit = FileUnit {
                session,
                file: f,
                content: &content,
                digest: &digest,
                ledger: sqlite::ledger(&reader, "session_file_id", f.id)?,
            };
            let outcome = target.write_unit(&unit)?;
            if outcome.changed() {
                created(&mut report, session);
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
pub(crate) enum Outcome {
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
pub(crate) struct Sent {
    rows: u64,
    bytes: u64,
}

/// One local transcript to bring the target's copy up to.
struct TranscriptUnit<'a> {
    session: &'a LocalSession,
    transcript: &'a LocalTranscript,
    rows: &'a [LocalRow],
    ledger: Option<LedgerCopy>,
    reader: &'a rusqlite::Connection,
}

impl Unit for TranscriptUnit<'_> {
    fn write<T: SyncTx>(&self, tx: &mut T) -> Result<Outcome> {
        let s = self.session;
        let key = tx.open_session(&s.project, &s.session_id, s.cwd.as_deref())?;
        let outcome = copy_transcript(tx, key, self)?;
        if outcome.changed() {
            let subpath = &self.transcript.subpath;
            if let Some(entry) = &self.ledger {
                let live = tx.live_transcript(key, subpath)?;
                tx.carry_ledger(entry, live, None)?;
            }
            tx.refresh_catalog(key, s.written_at)?;
        }
        Ok(outcome)
    }
}

/// Brings the target's live transcript up to the unit's local lines.
fn copy_transcript<T: SyncTx>(
    tx: &mut T,
    session: i64,
    unit: &TranscriptUnit<'_>,
) -> Result<Outcome> {
    let (t, rows, own) = (unit.transcript, unit.rows, &unit.session.session_id);
    let Some(live) = tx.live_transcript(session, &t.subpath)? else {
        let id = tx.create_transcript(session, &t.subpath, t.agent_id.as_deref())?;
        set_meta(tx, id, t)?;
        return Ok(Outcome::Copied(send_rows(tx, session, id, 0, rows, own)?));
    };
    // The target's lines, each as the SHA-256 of its bytes and its newline flag: enough to
    // find how far it agrees with the local lines without sending either side's bytes.
    let remote = tx.target_lines(live)?;
    let have = remote.len();
    let next = remote.last().map_or(0, |line| line.ordinal + 1);
    let common = remote
        .iter()
        .zip(rows)
        .take_while(|(line, row)| {
            line.terminated == row.terminated
                && line.digest.as_slice() == Sha256::digest(&row.raw).as_slice()
        })
        .count();
    if common == have {
        // The target holds a prefix of the local lines: send the rest.
        set_meta(tx, live, t)?;
        if have == rows.len() {
            return Ok(Outcome::Unchanged);
        }
        let sent = send_rows(tx, session, live, next, &rows[have..], own)?;
        return Ok(Outcome::Extended(sent));
    }
    if common == rows.len() {
        // The target holds every local line and more (another writer appended there).
        return Ok(Outcome::Unchanged);
    }
    if common + 1 == have && !remote[common].terminated {
        // The target's last line is unterminated and differs: Claude Code was writing it
        // when it was read. Store the complete version, as import does.
        if let Some(last) = tx.last_row(live)? {
            tx.delete_row(last.id)?;
        }
        set_meta(tx, live, t)?;
        let open = remote[common].ordinal;
        let sent = send_rows(tx, session, live, open, &rows[common..], own)?;
        return Ok(Outcome::Extended(sent));
    }
    // The versions differ: the rule for a rewritten file (`transcript::replace_version`,
    // the same as import's). The target's version is replaced only when every line of it
    // past the common part that sessiondb did not write is one this store holds or held
    // (the local file was rewritten and re-imported: its old lines are kept here as a
    // superseded version); a line from another machine's copy must stay visible there.
    // Lines sessiondb wrote (a `serve` client's, an `append`) are carried over.
    let known = sqlite::lines_ever_held(unit.reader, t.id)?;
    let foreign = remote[common..]
        .iter()
        .filter(|line| !line.local && !known.contains(&(line.digest.clone(), line.terminated)))
        .count();
    if foreign > 0 {
        return Ok(Outcome::Conflict(format!(
            "the team store holds {foreign} line(s) this store never had (another writer's); \
             left as it is"
        )));
    }
    let mut held = Held::default();
    for row in rows {
        held.note(&row.raw, &Envelope::parse(&row.raw).1);
    }
    let agent = t.agent_id.as_deref();
    let id = match transcript::replace_version(tx, session, live, &t.subpath, agent, &held, true)? {
        Ok(id) => id,
        Err(why) => return Ok(Outcome::Conflict(why)),
    };
    set_meta(tx, id, t)?;
    let mut sent = send_rows(tx, session, id, 0, rows, own)?;
    let mut usage = Fold::default();
    sent.rows += transcript::carry_local_rows(tx, live, id, own, &held, &mut usage)?;
    tx.store_usage(session, &usage)?;
    Ok(Outcome::Replaced(sent))
}

/// Sets a transcript's sidecar bytes when the local store has them.
fn set_meta<T: SyncTx>(tx: &mut T, transcript: i64, t: &LocalTranscript) -> Result<()> {
    match &t.meta_json {
        Some(meta) => tx.set_meta(transcript, meta),
        None => Ok(()),
    }
}

/// Stores `rows` from `ordinal` on, with the importer's projections and each line's
/// `local` flag (`own`: the session id a line is filed under when it names none).
fn send_rows<T: SyncTx>(
    tx: &mut T,
    session: i64,
    transcript: i64,
    ordinal: i64,
    rows: &[LocalRow],
    own: &str,
) -> Result<Sent> {
    let mut sent = Sent::default();
    let mut usage = Fold::default();
    let mut at = ordinal;
    // Runs of lines with one `local` flag, in batches: one insert statement each.
    for run in rows.chunk_by(|a, b| a.local == b.local) {
        for batch in run.chunks(T::BATCH) {
            let mut parsed: Vec<Parsed<'_>> = batch
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
                    (line, status, env, search, None)
                })
                .collect();
            let ids = tx.insert_lines(transcript, at, &mut parsed, own, batch[0].local)?;
            for ((line, status, env, _, _), id) in parsed.iter().zip(ids) {
                if *status == LineStatus::Record {
                    tx.project_sides(transcript, id, line.bytes, env)?;
                    usage.add(id, crate::usage::record::responses(line.bytes, env));
                }
                sent.rows += 1;
                sent.bytes += line.bytes.len() as u64 + u64::from(line.terminated);
            }
            at += batch.len() as i64;
        }
    }
    tx.store_usage(session, &usage)?;
    Ok(sent)
}

/// One local session file to bring the target's copy up to.
struct FileUnit<'a> {
    session: &'a LocalSession,
    file: &'a LocalFile,
    content: &'a [u8],
    digest: &'a [u8],
    ledger: Option<LedgerCopy>,
}

impl Unit for FileUnit<'_> {
    fn write<T: SyncTx>(&self, tx: &mut T) -> Result<Outcome> {
        let s = self.session;
        let key = tx.open_session(&s.project, &s.session_id, s.cwd.as_deref())?;
        let relpath = &self.file.relpath;
        match tx.file_digest(key, relpath)? {
            Some(stored) if stored == self.digest => return Ok(Outcome::Unchanged),
            Some(_) if !tx.owned(key)? => {
                return Ok(Outcome::Conflict(
                    "the team store holds different bytes written by another machine; left as \
                     they are"
                        .to_owned(),
                ))
            }
            _ => {}
        }
        let id = tx.store_session_file(key, relpath, self.content)?;
        if let Some(entry) = &self.ledger {
            tx.carry_ledger(entry, None, Some(id))?;
        }
        tx.refresh_catalog(key, s.written_at)?;
        Ok(Outcome::Copied(Sent {
            rows: 0,
            bytes: self.content.len() as u64,
        }))
    }
}
