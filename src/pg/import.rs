//! Import into the team store: the same discovery, line reading, per-line accounting
//! ([`crate::import::LineTally`]) and projections as the SQLite importer
//! ([`crate::import`]), written with PostgreSQL statements. One transaction per source file:
//! a file is wholly stored or not at all.
//!
//! The ledger is keyed by (host, path), so that two machines importing the same path keep
//! separate ledgers; the session's row is locked (`FOR UPDATE`) for the transaction, so
//! two importers of one session on different machines take turns instead of racing.
//!
//! A rewritten file follows the rule [`replace_version`] states, which `sync` applies too.

use super::decode::RowExt;
use super::rows::{insert_lines, project_sides, without_nul};
use super::{prepared, PgStore};
use crate::error::{Error, Result};
use crate::import::transcript::{self, FileStamp, LastRow, LedgerEntry, TranscriptTx};
use crate::import::{self, FileView, Fingerprint, Ledger, Source, SourceKind};
use crate::jsonl::Envelope;
use crate::model::{ImportReport, Progress};
use crate::usage::record::Fold;
use postgres::Transaction;
use std::path::{Path, PathBuf};
use std::time::{Instant, UNIX_EPOCH};

/// Lines per `INSERT … SELECT FROM unnest(…)`.
const ROW_BATCH: usize = 512;

/// Imports the transcripts and session files under `paths` (as [`import::import_paths`]);
/// this machine's ledger entries under a scanned folder whose file is gone are marked
/// vanished, their lines kept.
///
/// # Errors
/// Fails when a path cannot be scanned or on a database error; a file that cannot be read
/// is counted in the report.
pub fn import_paths(
    store: &PgStore,
    paths: &[PathBuf],
    progress: &dyn Progress,
) -> Result<ImportReport> {
    import_paths_with(store, paths, progress, &import::ImportLimits::default())
}

/// [`import_paths`] with explicit limits; of them, the team store uses those on reading a
/// large transcript in pieces ([`import::ImportLimits::stream_above`]).
///
/// # Errors
/// As [`import_paths`].
pub fn import_paths_with(
    store: &PgStore,
    paths: &[PathBuf],
    progress: &dyn Progress,
    limits: &import::ImportLimits,
) -> Result<ImportReport> {
    let started = Instant::now();
    let host = store.origin().host.clone();
    let (found, scanned_dirs) = import::discover_paths(paths, |path| {
        store.read(|tx| {
            let stmt = prepared(
                tx,
                "SELECT s.session_id FROM source_files f
                 JOIN transcripts t ON t.id = f.transcript_id
                 JOIN sessions s ON s.id = t.session_id
                 WHERE f.host = $1 AND f.path = $2 LIMIT 1",
            )?;
            tx.query_opt(&stmt, &[&host, &path])?
                .map(|r| r.col(0))
                .transpose()
        })
    })?;
    let mut report = import_discovered(store, found, progress, limits)?;
    report.vanished_files = mark_vanished(store, &gone_under(store, &scanned_dirs)?)?;
    Ok(import::finished(report, started, progress))
}

/// Imports one session's files (as [`import::import_session`]: the main transcript and its
/// session folder, nothing else scanned): what hook capture does on a team store. Files of
/// the session folder that are gone, and the main transcript when it is gone, are marked
/// vanished.
///
/// # Errors
/// Fails when the session folder cannot be scanned or on a database error.
pub fn import_session(
    store: &PgStore,
    transcript: &Path,
    progress: &dyn Progress,
) -> Result<ImportReport> {
    let started = Instant::now();
    let (found, scanned_dirs) = import::discover_session(transcript)?;
    let limits = import::ImportLimits::default();
    let mut report = import_discovered(store, found, progress, &limits)?;
    let mut gone = gone_under(store, &scanned_dirs)?;
    let main = std::path::absolute(transcript).map_err(|e| Error::io(transcript, e))?;
    if !main.exists() {
        gone.push(import::path_key(&main));
    }
    report.vanished_files = mark_vanished(store, &gone)?;
    Ok(import::finished(report, started, progress))
}

/// Imports what discovery found (its files' sessions, rows and failures counted in the
/// report; no timing yet).
fn import_discovered(
    store: &PgStore,
    found: import::Discovery,
    progress: &dyn Progress,
    limits: &import::ImportLimits,
) -> Result<ImportReport> {
    let (mut report, sources, sizes) = import::checked_sources(found, progress);
    let mut transcripts = Vec::new();
    for (part, transcript) in import_sources(store, &sources, &sizes, progress, limits)? {
        report.add(part);
        transcripts.extend(transcript);
    }
    report.rows = rows_of(store, &transcripts)?;
    Ok(report)
}

/// The lines stored in `transcripts` (the summary's `rows`, as the SQLite importer counts
/// them: every transcript the import saw, changed or not).
fn rows_of(store: &PgStore, transcripts: &[i64]) -> Result<u64> {
    store.read(|tx| {
        let stmt = prepared(
            tx,
            "SELECT count(*) FROM rows WHERE transcript_id = ANY($1::bigint[])",
        )?;
        let n: i64 = tx.query_one(&stmt, &[&transcripts])?.col(0)?;
        Ok(n as u64)
    })
}

/// Connections an import writes over at most. The server does most of an import's work
/// (search vectors, indexes, compression) on one core per connection: more connections put
/// more of its cores to work, while the files of each session stay in order on one.
const MAX_CONNECTIONS: usize = 4;

/// Imports `sources`, spread by session over up to [`MAX_CONNECTIONS`] connections (one
/// per core of this machine), each file in a transaction of its own. Returns each file's
/// report and its transcript (as [`import_source`]), in order, so that the merged report is
/// the one a single connection would give.
fn import_sources(
    store: &PgStore,
    sources: &[Source],
    sizes: &[u64],
    progress: &dyn Progress,
    limits: &import::ImportLimits,
) -> Result<Vec<(ImportReport, Option<i64>)>> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let lanes = cores.clamp(1, MAX_CONNECTIONS).min(sources.len().max(1));
    let mut parts: Vec<Option<(ImportReport, Option<i64>)>> = vec![None; sources.len()];
    if lanes == 1 {
        for (at, source) in sources.iter().enumerate() {
            let mut part = ImportReport::default();
            let transcript = import_source(store, source, &mut part, limits)?;
            progress.advance(sizes[at], &source.path.to_string_lossy());
            parts[at] = Some((part, transcript));
        }
        return Ok(parts.into_iter().flatten().collect());
    }
    let mut stores = Vec::with_capacity(lanes - 1);
    for _ in 1..lanes {
        stores.push(store.another()?);
    }
    // Each session's files go to one lane, in file order.
    let lane_of = |index: usize| {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&sources[index].project, &sources[index].session).hash(&mut h);
        (h.finish() % lanes as u64) as usize
    };
    let failed = std::sync::atomic::AtomicBool::new(false);
    let mut first_error = None;
    std::thread::scope(|scope| {
        let (done, results) =
            std::sync::mpsc::channel::<(usize, Result<(ImportReport, Option<i64>)>)>();
        for (lane, conn) in std::iter::once(store).chain(&stores).enumerate() {
            let done = done.clone();
            let failed = &failed;
            let lane_of = &lane_of;
            scope.spawn(move || {
                for (at, source) in sources.iter().enumerate() {
                    if lane_of(at) != lane {
                        continue;
                    }
                    if failed.load(std::sync::atomic::Ordering::Relaxed) {
                        break;
                    }
                    let mut part = ImportReport::default();
                    let result = import_source(conn, source, &mut part, limits)
                        .map(|transcript| (part, transcript));
                    if result.is_err() {
                        failed.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                    if done.send((at, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done);
        for (at, result) in results {
            match result {
                Ok(part) => {
                    progress.advance(sizes[at], &sources[at].path.to_string_lossy());
                    parts[at] = Some(part);
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(parts.into_iter().flatten().collect())
}

/// Imports one file unless this machine's ledger says it is unchanged, in one
/// transaction (the ledger read in it: a transaction of its own would cost two more round
/// trips per file). Returns the live transcript a transcript file is stored in, imported or
/// unchanged.
fn import_source(
    store: &PgStore,
    source: &Source,
    report: &mut ImportReport,
    limits: &import::ImportLimits,
) -> Result<Option<i64>> {
    let origin = store.origin().clone();
    let is_file = matches!(source.kind, SourceKind::File { .. });
    store.write(|tx| {
        let loaded = import::load(
            source,
            |key| read_ledger(tx, &origin.host, key),
            Vec::new(),
            limits,
            // The team store keeps lines as they came (compressed lines are SQLite's alone).
            None,
        )?;
        let mut kept = None;
        let Some(file) = loaded.into_write(report, |target| kept = target.filter(|_| !is_file))
        else {
            return Ok(kept);
        };
        let mut sink = PgTx {
            tx,
            origin: &origin,
        };
        let written = match transcript::write_file(&mut sink, source, file, report)? {
            Ok(written) => written,
            // A conflict is found before anything of the file is written or counted.
            Err(why) => {
                report.files_failed += 1;
                report
                    .errors
                    .push(format!("{}: {why}; not imported", source.path.display()));
                return Ok(None);
            }
        };
        super::catalog::refresh_session(tx, written.session, None)?;
        Ok((!is_file).then_some(written.id))
    })
}

/// This machine's ledger entry of the file at `key`.
fn read_ledger(tx: &mut Transaction<'_>, host: &str, key: &str) -> Result<Option<Ledger>> {
    let stmt = prepared(
        tx,
        "SELECT transcript_id, session_file_id, size, mtime_ns, vanished, imported_bytes,
                prefix_hash, tail_hash
         FROM source_files WHERE host = $1 AND path = $2",
    )?;
    tx.query_opt(&stmt, &[&host, &key])?
        .map(|r| {
            Ok(Ledger {
                target: r.col::<Option<i64>>(0)?.or(r.col(1)?),
                size: r.col(2)?,
                mtime_ns: r.col(3)?,
                vanished: r.col(4)?,
                imported_bytes: r.col::<i64>(5)?.max(0) as usize,
                fingerprint: Fingerprint::read(r.col(6)?, r.col(7)?),
            })
        })
        .transpose()
}

/// Where a source file was read: this machine, its path, its size and mtime.
#[derive(Clone, Copy)]
struct Stamp<'a> {
    host: &'a str,
    key: &'a str,
    size: i64,
    mtime_ns: i64,
}

/// The stored session a source's file is a location of, when a restore wrote its session
/// there (see [`crate::import`]'s `located_session`): this machine's ledger entry of the
/// session's main transcript path names it. Locked for the rest of the transaction.
fn located_session(tx: &mut Transaction<'_>, source: &Source, host: &str) -> Result<Option<i64>> {
    let main = import::path_key(&import::main_transcript_path(source));
    let stmt = prepared(
        tx,
        "SELECT s.id FROM source_files f
         JOIN transcripts t ON t.id = f.transcript_id
         JOIN sessions s ON s.id = t.session_id
         WHERE f.host = $1 AND f.path = $2 AND s.session_id = $3
         ORDER BY f.id DESC LIMIT 1",
    )?;
    let Some(id) = tx
        .query_opt(&stmt, &[&host, &main, &source.session])?
        .map(|r| r.col::<i64>(0))
        .transpose()?
    else {
        return Ok(None);
    };
    let lock = prepared(tx, "SELECT id FROM sessions WHERE id = $1 FOR UPDATE")?;
    tx.query_opt(&lock, &[&id])?.map(|r| r.col(0)).transpose()
}

/// Records in this machine's ledger that each file at `path` starts with `known`, the bytes
/// a restore wrote there (see [`crate::import::adopt_written`]).
///
/// # Errors
/// Fails when a file cannot be read or the database cannot be written.
pub fn adopt_written(store: &PgStore, files: &[(import::Adopted, PathBuf, &[u8])]) -> Result<()> {
    let host = store.origin().host.clone();
    let mut stamps = Vec::with_capacity(files.len());
    for (target, path, known) in files {
        let path = std::path::absolute(path).map_err(|e| Error::io(path, e))?;
        let meta = std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
        let mtime_ns = if meta.len() == known.len() as u64 {
            meta.modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64)
        } else {
            -1
        };
        stamps.push((*target, import::path_key(&path), mtime_ns, *known));
    }
    store.write(|tx| {
        for (target, key, mtime_ns, known) in &stamps {
            let stamp = Stamp {
                host: &host,
                key,
                size: known.len() as i64,
                mtime_ns: *mtime_ns,
            };
            let (transcript, file) = match target {
                import::Adopted::Transcript(id) => (Some(*id), None),
                import::Adopted::File(id) => (None, Some(*id)),
            };
            write_ledger(tx, &stamp, transcript, file, &FileView::whole(known))?;
        }
        Ok(())
    })
}

/// The session row for a project folder and session id, created (with its project and its
/// origin) when new, and locked for the rest of the transaction.
///
/// Two statements in the usual cases (each is a round trip, and an import makes one call per
/// file): the project is looked up before it is inserted, and a session row this
/// transaction inserts is already its own, so only one that existed is locked afterwards.
/// The lookups that follow an insert which did nothing are separate statements: the row
/// another transaction committed meanwhile is visible only to a later statement.
pub(crate) fn upsert_session(
    tx: &mut Transaction<'_>,
    project: &str,
    session: &str,
    origin: &super::Origin,
) -> Result<i64> {
    let stmt = prepared(tx, "SELECT id FROM projects WHERE key = $1")?;
    let project_id: i64 = match tx.query_opt(&stmt, &[&project])? {
        Some(row) => row.col(0)?,
        None => {
            let stmt = prepared(
                tx,
                "INSERT INTO projects (key) VALUES ($1) ON CONFLICT (key) DO NOTHING",
            )?;
            tx.execute(&stmt, &[&project])?;
            let stmt = prepared(tx, "SELECT id FROM projects WHERE key = $1")?;
            tx.query_one(&stmt, &[&project])?.col(0)?
        }
    };
    let insert = prepared(
        tx,
        "INSERT INTO sessions (project_id, session_id, origin_host, origin_user)
         VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, session_id) DO NOTHING
         RETURNING id",
    )?;
    let lock = prepared(
        tx,
        "SELECT id FROM sessions WHERE project_id = $1 AND session_id = $2 FOR UPDATE",
    )?;
    loop {
        // A row this transaction inserts is its own until it commits: no lock to take.
        if let Some(row) = tx.query_opt(
            &insert,
            &[&project_id, &session, &origin.host, &origin.user],
        )? {
            return row.col(0);
        }
        if let Some(row) = tx.query_opt(&lock, &[&project_id, &session])? {
            return row.col(0);
        }
        // The row the insert found was deleted (`delete`, another process) before it could
        // be locked: the session is new again, so it is inserted again.
    }
}

fn write_ledger(
    tx: &mut Transaction<'_>,
    stamp: &Stamp<'_>,
    transcript: Option<i64>,
    file: Option<i64>,
    imported: &FileView<'_>,
) -> Result<()> {
    let fingerprint = Fingerprint::of(imported, imported.len())
        .expect("what was read holds the file's last TAIL_BYTES");
    let (prefix_hash, tail_hash) = fingerprint.columns();
    let stmt = prepared(
        tx,
        "INSERT INTO source_files (host, path, transcript_id, session_file_id, size, mtime_ns,
            imported_bytes, prefix_hash, tail_hash, vanished)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, false)
         ON CONFLICT (host, path) DO UPDATE SET
            transcript_id = excluded.transcript_id, session_file_id = excluded.session_file_id,
            size = excluded.size, mtime_ns = excluded.mtime_ns,
            imported_bytes = excluded.imported_bytes, prefix_hash = excluded.prefix_hash,
            tail_hash = excluded.tail_hash, vanished = false",
    )?;
    tx.execute(
        &stmt,
        &[
            &stamp.host,
            &stamp.key,
            &transcript,
            &file,
            &stamp.size,
            &stamp.mtime_ns,
            &(imported.len() as i64),
            &prefix_hash,
            &tail_hash,
        ],
    )?;
    Ok(())
}

/// Stores a session file's bytes (a tool result, a sidecar), and a sidecar's on its live
/// transcript too. Returns its id.
pub(crate) fn store_session_file(
    tx: &mut Transaction<'_>,
    session: i64,
    relpath: &str,
    content: &[u8],
) -> Result<i64> {
    let stmt = prepared(
        tx,
        "INSERT INTO session_files (session_id, relpath, content) VALUES ($1, $2, $3)
         ON CONFLICT (session_id, relpath) DO UPDATE SET content = excluded.content
         RETURNING id",
    )?;
    let id = tx
        .query_one(&stmt, &[&session, &relpath, &content])?
        .col(0)?;
    if let Some(sidechain) = relpath.strip_suffix(".meta.json") {
        let stmt = prepared(
            tx,
            "UPDATE transcripts SET meta_json = $3
             WHERE session_id = $1 AND subpath = $2 AND superseded_at IS NULL",
        )?;
        tx.execute(&stmt, &[&session, &sidechain, &content])?;
    }
    Ok(id)
}

/// The team store's answers to the import of a file ([`TranscriptTx`]), in the
/// transaction that writes it; `origin` is this machine, whose ledger entries come first.
pub(crate) struct PgTx<'a, 't> {
    pub tx: &'a mut Transaction<'t>,
    pub origin: &'a super::Origin,
}

impl TranscriptTx for PgTx<'_, '_> {
    const SHARED: bool = true;
    const BATCH: usize = ROW_BATCH;

    fn session_of(&mut self, source: &Source) -> Result<i64> {
        match located_session(self.tx, source, &self.origin.host)? {
            Some(session) => Ok(session),
            None => upsert_session(self.tx, &source.project, &source.session, self.origin),
        }
    }

    fn session_file(&mut self, session: i64, relpath: &str) -> Result<Option<(i64, Vec<u8>)>> {
        let stmt = prepared(
            self.tx,
            "SELECT id, content FROM session_files WHERE session_id = $1 AND relpath = $2",
        )?;
        self.tx
            .query_opt(&stmt, &[&session, &relpath])?
            .map(|r| Ok((r.col(0)?, r.col(1)?)))
            .transpose()
    }

    fn store_session_file(&mut self, session: i64, relpath: &str, content: &[u8]) -> Result<i64> {
        store_session_file(self.tx, session, relpath, content)
    }

    fn live_transcript(&mut self, session: i64, subpath: &str) -> Result<Option<i64>> {
        let stmt = prepared(
            self.tx,
            "SELECT id FROM transcripts WHERE session_id = $1 AND subpath = $2
               AND superseded_at IS NULL",
        )?;
        self.tx
            .query_opt(&stmt, &[&session, &subpath])?
            .map(|r| r.col(0))
            .transpose()
    }

    /// This machine's entry of the file at `path`, else this machine's newest, else the
    /// newest entry of any machine (the same session's file, synced between two machines,
    /// then grows one copy instead of replacing it).
    fn ledger_entry(&mut self, transcript: i64, path: &str) -> Result<Option<LedgerEntry>> {
        let stmt = prepared(
            self.tx,
            "SELECT imported_bytes, prefix_hash, tail_hash, host = $2 FROM source_files
             WHERE transcript_id = $1
             ORDER BY host = $2 AND path = $3 DESC, host = $2 DESC, id DESC LIMIT 1",
        )?;
        self.tx
            .query_opt(&stmt, &[&transcript, &self.origin.host, &path])?
            .map(|r| {
                Ok(LedgerEntry {
                    imported_bytes: r.col::<i64>(0)? as usize,
                    fingerprint: Fingerprint::read(r.col(1)?, r.col(2)?),
                    ours: r.col(3)?,
                })
            })
            .transpose()
    }

    fn last_row(&mut self, transcript: i64) -> Result<Option<LastRow>> {
        let stmt = prepared(
            self.tx,
            "SELECT id, ordinal, terminated, length(raw) FROM rows
             WHERE transcript_id = $1 ORDER BY ordinal DESC LIMIT 1",
        )?;
        self.tx
            .query_opt(&stmt, &[&transcript])?
            .map(|r| {
                Ok(LastRow {
                    id: r.col(0)?,
                    ordinal: r.col(1)?,
                    terminated: r.col(2)?,
                    len: r.col::<i32>(3)? as usize,
                })
            })
            .transpose()
    }

    fn delete_row(&mut self, row: i64) -> Result<()> {
        let stmt = prepared(self.tx, "DELETE FROM rows WHERE id = $1")?;
        self.tx.execute(&stmt, &[&row])?;
        Ok(())
    }

    fn terminate_row(&mut self, row: i64) -> Result<()> {
        let stmt = prepared(self.tx, "UPDATE rows SET terminated = true WHERE id = $1")?;
        self.tx.execute(&stmt, &[&row])?;
        Ok(())
    }

    fn lines_of(&mut self, transcript: i64, local: bool) -> Result<Vec<Vec<u8>>> {
        let stmt = prepared(
            self.tx,
            "SELECT raw FROM rows WHERE transcript_id = $1 AND local = $2 ORDER BY ordinal",
        )?;
        self.tx
            .query(&stmt, &[&transcript, &local])?
            .into_iter()
            .map(|r| r.col(0))
            .collect()
    }

    fn supersede(&mut self, transcript: i64) -> Result<()> {
        let stmt = prepared(
            self.tx,
            "UPDATE transcripts
             SET superseded_at = to_char(now() AT TIME ZONE 'UTC',
                                         'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')
             WHERE id = $1",
        )?;
        self.tx.execute(&stmt, &[&transcript])?;
        Ok(())
    }

    fn create_transcript(
        &mut self,
        session: i64,
        subpath: &str,
        agent_id: Option<&str>,
    ) -> Result<i64> {
        create_transcript(self.tx, session, subpath, agent_id)
    }

    fn insert_lines(
        &mut self,
        transcript: i64,
        ordinal: i64,
        lines: &mut [import::Parsed<'_>],
        own: &str,
        local: bool,
    ) -> Result<Vec<i64>> {
        insert_lines(self.tx, transcript, ordinal, lines, own, local)
    }

    fn set_project_cwd(&mut self, session: i64, cwd: &str) -> Result<()> {
        let stmt = prepared(
            self.tx,
            "UPDATE projects SET cwd = $2
             WHERE id = (SELECT project_id FROM sessions WHERE id = $1)
               AND cwd IS NULL",
        )?;
        self.tx
            .execute(&stmt, &[&session, &without_nul(cwd).as_ref()])?;
        Ok(())
    }

    fn project_sides(
        &mut self,
        transcript: i64,
        row: i64,
        bytes: &[u8],
        env: &Envelope<'_>,
    ) -> Result<()> {
        project_sides(self.tx, transcript, row, bytes, env)
    }

    fn store_usage(&mut self, session: i64, usage: &Fold<'_>) -> Result<()> {
        crate::pg::usage::store_folded(self.tx, session, usage)
    }

    fn copy_sidecar(&mut self, session: i64, relpath: &str, transcript: i64) -> Result<()> {
        let stmt = prepared(
            self.tx,
            "UPDATE transcripts SET meta_json =
                (SELECT content FROM session_files WHERE session_id = $1 AND relpath = $2)
             WHERE id = $3",
        )?;
        self.tx.execute(&stmt, &[&session, &relpath, &transcript])?;
        Ok(())
    }

    fn write_ledger(
        &mut self,
        stamp: &FileStamp<'_>,
        transcript: Option<i64>,
        session_file: Option<i64>,
        file: &FileView<'_>,
        imported: usize,
    ) -> Result<()> {
        debug_assert_eq!(imported, file.len());
        let stamp = Stamp {
            host: &self.origin.host,
            key: stamp.key,
            size: stamp.size,
            mtime_ns: stamp.mtime_ns,
        };
        write_ledger(self.tx, &stamp, transcript, session_file, file)
    }
}

/// A new, empty version of `subpath` in `session`.
pub(crate) fn create_transcript(
    tx: &mut Transaction<'_>,
    session: i64,
    subpath: &str,
    agent_id: Option<&str>,
) -> Result<i64> {
    let stmt = prepared(
        tx,
        "INSERT INTO transcripts (session_id, subpath, agent_id) VALUES ($1, $2, $3)
         RETURNING id",
    )?;
    tx.query_one(&stmt, &[&session, &subpath, &agent_id])?
        .col(0)
}

/// This machine's ledger entries under the scanned folders whose file is gone (not yet
/// marked vanished).
fn gone_under(store: &PgStore, dirs: &[PathBuf]) -> Result<Vec<String>> {
    if dirs.is_empty() {
        return Ok(Vec::new());
    }
    let host = store.origin().host.clone();
    store.read(|tx| {
        // The range compares in the C collation, where '0' follows '/'.
        let stmt = prepared(
            tx,
            "SELECT path FROM source_files WHERE host = $1
               AND path COLLATE \"C\" >= $2 AND path COLLATE \"C\" < $3 AND NOT vanished",
        )?;
        import::gone_under(dirs, |from, to| {
            tx.query(&stmt, &[&host, &from, &to])?
                .into_iter()
                .map(|r| r.col(0))
                .collect()
        })
    })
}

/// Marks this machine's ledger entries for `gone` (paths as the ledger keys them) vanished,
/// keeping their lines (as the SQLite importer does), and refreshes their sessions'
/// catalog rows. Returns how many were marked.
fn mark_vanished(store: &PgStore, gone: &[String]) -> Result<u64> {
    let host = store.origin().host.clone();
    let mut marked = 0;
    for path in gone {
        // One transaction each, as an import of one file: the session's row is locked first.
        marked += store.write(|tx| {
            let stmt = prepared(
                tx,
                "SELECT t.session_id FROM source_files f
                 JOIN transcripts t ON t.id = f.transcript_id
                 WHERE f.host = $1 AND f.path = $2
                 UNION ALL
                 SELECT sf.session_id FROM source_files f
                 JOIN session_files sf ON sf.id = f.session_file_id
                 WHERE f.host = $1 AND f.path = $2",
            )?;
            let session: Option<i64> = tx
                .query_opt(&stmt, &[&host, path])?
                .map(|r| r.col(0))
                .transpose()?;
            if let Some(session) = session {
                let stmt = prepared(tx, "SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE")?;
                tx.query_opt(&stmt, &[&session])?;
            }
            let stmt = prepared(
                tx,
                "UPDATE source_files SET vanished = true
                 WHERE host = $1 AND path = $2 AND NOT vanished",
            )?;
            let n = tx.execute(&stmt, &[&host, path])?;
            if let (Some(session), 1) = (session, n) {
                super::catalog::refresh_session(tx, session, None)?;
            }
            Ok(n)
        })?;
    }
    Ok(marked)
}
