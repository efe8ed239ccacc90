//! Import into the team store: the same discovery, line reading and projections as the
//! SQLite importer ([`crate::import`]), written with PostgreSQL statements. One transaction
//! per source file: a file is wholly stored or not at all.
//!
//! The ledger is keyed by (host, path), so that two machines importing the same path keep
//! separate ledgers; the session's row is locked (`FOR UPDATE`) for the transaction, so
//! two importers of one session on different machines take turns instead of racing.

use super::PgStore;
use crate::error::{Error, Result};
use crate::import::{self, Side, Source, SourceKind};
use crate::jsonl::{LineStatus, SearchText};
use crate::model::{ImportReport, LineRef, Progress, SuspiciousFile, MAX_REPORTED_LINES};
use postgres::Transaction;
use std::borrow::Cow;
use std::path::PathBuf;
use std::time::{Instant, UNIX_EPOCH};

/// Indexed text per column, in bytes: a `tsvector` holds at most 1 MB, and one over it
/// would fail the line's import. Past this a line's text is not searched.
const MAX_INDEXED_TEXT: usize = 200_000;

/// Lines per `INSERT … SELECT FROM unnest(…)`.
const ROW_BATCH: usize = 512;

/// Imports the transcripts and session files under `paths` (as [`import::import_paths`]).
///
/// # Errors
/// Fails when a path cannot be scanned or on a database error; a file that cannot be read
/// is counted in the report.
pub fn import_paths(
    store: &PgStore,
    paths: &[PathBuf],
    progress: &dyn Progress,
) -> Result<ImportReport> {
    let started = Instant::now();
    let mut report = ImportReport::default();
    let mut sources = Vec::new();
    for path in paths {
        let found = import::discover(path)?;
        report.symlinks_skipped += found.skipped_links.len() as u64;
        sources.extend(found.sources);
    }
    report.files = sources.len() as u64;
    let sizes: Vec<u64> = sources
        .iter()
        .map(|s| std::fs::metadata(&s.path).map(|m| m.len()).unwrap_or(0))
        .collect();
    progress.start(sizes.iter().sum());
    let mut sessions = std::collections::BTreeSet::new();
    for (source, size) in sources.iter().zip(&sizes) {
        if let Err(e) = import::check_names(source) {
            report.files_failed += 1;
            report.bad_names += 1;
            report
                .errors
                .push(format!("{}: {e}; not imported", source.path.display()));
            continue;
        }
        sessions.insert((source.project.clone(), source.session.clone()));
        import_source(store, source, &mut report)?;
        progress.advance(*size, &source.path.to_string_lossy());
    }
    report.sessions = sessions.len() as u64;
    report.seconds = started.elapsed().as_secs_f64();
    report.mb_per_s = if report.seconds > 0.0 {
        report.bytes_read as f64 / 1e6 / report.seconds
    } else {
        0.0
    };
    progress.finish();
    Ok(report)
}

/// Imports one file unless this machine's ledger says it is unchanged.
fn import_source(store: &PgStore, source: &Source, report: &mut ImportReport) -> Result<()> {
    let meta = match std::fs::metadata(&source.path) {
        Ok(m) => m,
        Err(e) => {
            report.files_failed += 1;
            report.errors.push(Error::io(&source.path, e).to_string());
            return Ok(());
        }
    };
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64);
    let host = store.origin().host.clone();
    let key = import::path_key(&source.path);
    let unchanged = store.read(|tx| {
        let row = tx.query_opt(
            "SELECT size, mtime_ns, vanished, coalesce(transcript_id, session_file_id)
             FROM source_files WHERE host = $1 AND path = $2",
            &[&host, &key],
        )?;
        Ok(row.is_some_and(|r| {
            r.get::<_, i64>(0) == meta.len() as i64
                && r.get::<_, i64>(1) == mtime_ns
                && !r.get::<_, bool>(2)
                && r.get::<_, Option<i64>>(3).is_some()
        }))
    })?;
    if unchanged {
        report.files_unchanged += 1;
        return Ok(());
    }
    let bytes = match std::fs::read(&source.path) {
        Ok(b) => b,
        Err(e) => {
            report.files_failed += 1;
            report.errors.push(Error::io(&source.path, e).to_string());
            return Ok(());
        }
    };
    report.bytes_read += bytes.len() as u64;
    let stamp = Stamp {
        host: &host,
        key: &key,
        size: bytes.len() as i64,
        mtime_ns,
    };
    let origin = store.origin().clone();
    store.write(|tx| {
        let session = upsert_session(tx, &source.project, &source.session, &origin)?;
        match &source.kind {
            SourceKind::File { relpath } => {
                import_session_file(tx, session, relpath, &bytes, &stamp, report)?;
            }
            kind => import_transcript(tx, session, source, kind, &bytes, &stamp, report)?,
        }
        super::catalog::refresh_session(tx, session, None)
    })
}

/// Where a source file was read: this machine, its path, its size and mtime.
struct Stamp<'a> {
    host: &'a str,
    key: &'a str,
    size: i64,
    mtime_ns: i64,
}

/// The session row for a project folder and session id, created (with its project and its
/// origin) when new, and locked for the rest of the transaction.
pub(crate) fn upsert_session(
    tx: &mut Transaction<'_>,
    project: &str,
    session: &str,
    origin: &super::Origin,
) -> Result<i64> {
    tx.execute(
        "INSERT INTO projects (key) VALUES ($1) ON CONFLICT (key) DO NOTHING",
        &[&project],
    )?;
    let project_id: i64 = tx
        .query_one("SELECT id FROM projects WHERE key = $1", &[&project])?
        .get(0);
    tx.execute(
        "INSERT INTO sessions (project_id, session_id, origin_host, origin_user)
         VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, session_id) DO NOTHING",
        &[&project_id, &session, &origin.host, &origin.user],
    )?;
    Ok(tx
        .query_one(
            "SELECT id FROM sessions WHERE project_id = $1 AND session_id = $2 FOR UPDATE",
            &[&project_id, &session],
        )?
        .get(0))
}

fn write_ledger(
    tx: &mut Transaction<'_>,
    stamp: &Stamp<'_>,
    transcript: Option<i64>,
    file: Option<i64>,
    imported: &[u8],
) -> Result<()> {
    tx.execute(
        "INSERT INTO source_files (host, path, transcript_id, session_file_id, size, mtime_ns,
            imported_bytes, prefix_hash, vanished)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, false)
         ON CONFLICT (host, path) DO UPDATE SET
            transcript_id = excluded.transcript_id, session_file_id = excluded.session_file_id,
            size = excluded.size, mtime_ns = excluded.mtime_ns,
            imported_bytes = excluded.imported_bytes, prefix_hash = excluded.prefix_hash,
            vanished = false",
        &[
            &stamp.host,
            &stamp.key,
            &transcript,
            &file,
            &stamp.size,
            &stamp.mtime_ns,
            &(imported.len() as i64),
            &import::prefix_hash(imported),
        ],
    )?;
    Ok(())
}

fn import_session_file(
    tx: &mut Transaction<'_>,
    session: i64,
    relpath: &str,
    bytes: &[u8],
    stamp: &Stamp<'_>,
    report: &mut ImportReport,
) -> Result<()> {
    let existing: Option<Vec<u8>> = tx
        .query_opt(
            "SELECT content FROM session_files WHERE session_id = $1 AND relpath = $2",
            &[&session, &relpath],
        )?
        .map(|r| r.get(0));
    if existing.as_deref() != Some(bytes) {
        tx.execute(
            "INSERT INTO session_files (session_id, relpath, content) VALUES ($1, $2, $3)
             ON CONFLICT (session_id, relpath) DO UPDATE SET content = excluded.content",
            &[&session, &relpath, &bytes],
        )?;
        report.files_imported += 1;
    } else {
        report.files_unchanged += 1;
    }
    if let Some(sidechain) = relpath.strip_suffix(".meta.json") {
        tx.execute(
            "UPDATE transcripts SET meta_json = $3
             WHERE session_id = $1 AND subpath = $2 AND superseded_at IS NULL",
            &[&session, &sidechain, &bytes],
        )?;
    }
    let id: i64 = tx
        .query_one(
            "SELECT id FROM session_files WHERE session_id = $1 AND relpath = $2",
            &[&session, &relpath],
        )?
        .get(0);
    write_ledger(tx, stamp, None, Some(id), bytes)
}

/// Where the stored copy of a transcript ends (see the SQLite importer's `StoredState`).
struct Stored {
    imported_bytes: usize,
    prefix_hash: i64,
    next_ordinal: i64,
    open_tail: Option<(i64, usize)>,
}

/// The stored state of a live transcript as its ledger saw it: this machine's entry, else
/// the newest entry of any machine (the same session's file, synced between two machines,
/// then grows one copy instead of replacing it). `None` when the transcript holds lines no
/// ledger accounts for (written through the API only), which makes the file a new version.
fn stored_state(tx: &mut Transaction<'_>, transcript: i64, host: &str) -> Result<Option<Stored>> {
    let ledger: Option<(i64, i64)> = tx
        .query_opt(
            "SELECT imported_bytes, prefix_hash FROM source_files WHERE transcript_id = $1
             ORDER BY host = $2 DESC, id DESC LIMIT 1",
            &[&transcript, &host],
        )?
        .map(|r| (r.get(0), r.get(1)));
    let last: Option<(i64, i64, bool, i32)> = tx
        .query_opt(
            "SELECT id, ordinal, terminated, length(raw) FROM rows
             WHERE transcript_id = $1 ORDER BY ordinal DESC LIMIT 1",
            &[&transcript],
        )?
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)));
    let Some((imported_bytes, prefix_hash)) = ledger else {
        return Ok(last.is_none().then(|| Stored {
            imported_bytes: 0,
            prefix_hash: import::prefix_hash(b""),
            next_ordinal: 0,
            open_tail: None,
        }));
    };
    let (next_ordinal, open_tail) = match last {
        Some((id, ordinal, false, len)) => (ordinal, Some((id, len as usize))),
        Some((_, ordinal, true, _)) => (ordinal + 1, None),
        None => (0, None),
    };
    Ok(Some(Stored {
        imported_bytes: imported_bytes as usize,
        prefix_hash,
        next_ordinal,
        open_tail,
    }))
}

fn import_transcript(
    tx: &mut Transaction<'_>,
    session: i64,
    source: &Source,
    kind: &SourceKind,
    bytes: &[u8],
    stamp: &Stamp<'_>,
    report: &mut ImportReport,
) -> Result<()> {
    let subpath = kind.subpath();
    let agent_id = match kind {
        SourceKind::Sidechain { agent_id, .. } => Some(agent_id.as_str()),
        _ => None,
    };
    let live: Option<i64> = tx
        .query_opt(
            "SELECT id FROM transcripts WHERE session_id = $1 AND subpath = $2
               AND superseded_at IS NULL",
            &[&session, &subpath],
        )?
        .map(|r| r.get(0));
    let mut start = 0usize;
    let mut ordinal = 0i64;
    let transcript = match live {
        Some(id) => match stored_state(tx, id, stamp.host)? {
            Some(state)
                if bytes.len() >= state.imported_bytes
                    && import::prefix_hash(&bytes[..state.imported_bytes]) == state.prefix_hash =>
            {
                start = state.imported_bytes;
                ordinal = state.next_ordinal;
                if start < bytes.len() {
                    if let Some((row, len)) = state.open_tail {
                        // The unterminated last line grew: store its complete version instead.
                        tx.execute("DELETE FROM rows WHERE id = $1", &[&row])?;
                        start -= len;
                    }
                }
                id
            }
            _ => {
                tx.execute(
                    "UPDATE transcripts
                     SET superseded_at = to_char(now() AT TIME ZONE 'UTC',
                                                 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')
                     WHERE id = $1",
                    &[&id],
                )?;
                report.files_rewritten += 1;
                create_transcript(tx, session, subpath, agent_id)?
            }
        },
        None => create_transcript(tx, session, subpath, agent_id)?,
    };
    if start < bytes.len() {
        report.files_imported += 1;
    } else {
        report.files_unchanged += 1;
    }
    let own = source.session.as_str();
    let lines = import::parse_ahead(bytes, start).lines_from(bytes, start);
    let (mut nonblank, mut malformed) = (0u64, 0u64);
    let mut lines_before_start: Option<u64> = None;
    let mut lines_since_start = 0u64;
    let mut cwd_seen = false;
    for chunk in lines.chunks(ROW_BATCH) {
        let ids = insert_rows(tx, transcript, ordinal, chunk, own)?;
        for ((line, status, env, _), row) in chunk.iter().zip(ids) {
            report.new_rows += 1;
            match status {
                LineStatus::Malformed => {
                    nonblank += 1;
                    malformed += 1;
                    report.malformed_lines += 1;
                    if report.malformed.len() < MAX_REPORTED_LINES {
                        let before = *lines_before_start
                            .get_or_insert_with(|| import::newlines(&bytes[..start]));
                        report.malformed.push(LineRef {
                            path: source.path.clone(),
                            line: before + lines_since_start + 1,
                        });
                    }
                }
                LineStatus::Record => {
                    nonblank += 1;
                    if !env.has_known_type() {
                        report.unknown_types += 1;
                    }
                    report.unknown_fields += u64::from(env.unknown_fields);
                    if !cwd_seen {
                        if let Some(cwd) = env.cwd.as_deref() {
                            cwd_seen = true;
                            tx.execute(
                                "UPDATE projects SET cwd = $2
                                 WHERE id = (SELECT project_id FROM sessions WHERE id = $1)
                                   AND cwd IS NULL",
                                &[&session, &cwd],
                            )?;
                        }
                    }
                    project_record(tx, transcript, row, line.bytes, env)?;
                }
                LineStatus::Blank => {}
            }
            ordinal += 1;
            lines_since_start += 1;
            if *status == LineStatus::Blank {
                lines_since_start += import::newlines(line.bytes);
            }
        }
    }
    if SuspiciousFile::is_suspicious(nonblank, malformed) {
        report.suspicious_files.push(SuspiciousFile {
            path: source.path.clone(),
            lines: nonblank,
            malformed,
        });
    }
    if let Some(sidecar) = agent_id.map(|_| format!("{subpath}.meta.json")) {
        tx.execute(
            "UPDATE transcripts SET meta_json =
                (SELECT content FROM session_files WHERE session_id = $1 AND relpath = $2)
             WHERE id = $3",
            &[&session, &sidecar, &transcript],
        )?;
    }
    write_ledger(tx, stamp, Some(transcript), None, bytes)
}

pub(crate) fn create_transcript(
    tx: &mut Transaction<'_>,
    session: i64,
    subpath: &str,
    agent_id: Option<&str>,
) -> Result<i64> {
    Ok(tx
        .query_one(
            "INSERT INTO transcripts (session_id, subpath, agent_id) VALUES ($1, $2, $3)
             RETURNING id",
            &[&session, &subpath, &agent_id],
        )?
        .get(0))
}

/// `text` without NUL characters, which PostgreSQL's `text` cannot hold (a JSON string may
/// spell one as `\u0000`): each becomes U+FFFD. The line itself keeps them, byte for byte.
pub(crate) fn without_nul(text: &str) -> Cow<'_, str> {
    if text.contains('\0') {
        Cow::Owned(text.replace('\0', "\u{fffd}"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The words a line is searched by (see [`super::search::words`]: no NULs, which
/// PostgreSQL's text cannot hold), cut to what a `tsvector` can hold.
pub(crate) fn indexed_text(text: Option<&str>) -> Option<String> {
    let text = text?;
    let mut end = text.len().min(MAX_INDEXED_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(super::search::words(&text[..end]))
}

/// The searchable text of a line the search index takes, by the shared reader; a line
/// longer than [`crate::search::MAX_PARSED_LINE`] is indexed by its first
/// [`crate::search::INDEXED_PREFIX`] bytes (SQLite's V9 rule).
pub(crate) fn search_of(
    status: LineStatus,
    env: &crate::jsonl::Envelope<'_>,
    raw: &[u8],
    ahead: Option<&SearchText>,
) -> Option<SearchText> {
    if !crate::search::is_indexed(status, env) {
        return None;
    }
    if let Some(text) = ahead {
        return Some(text.clone());
    }
    if raw.len() > crate::search::MAX_PARSED_LINE {
        let cut = raw.len().min(crate::search::INDEXED_PREFIX);
        return Some(SearchText {
            body: Some(String::from_utf8_lossy(&raw[..cut]).into_owned()),
            tools: None,
        });
    }
    Some(uncertain_text(raw))
}

/// The searchable text of a line the shared reader leaves to SQLite's JSON functions (a NUL,
/// a duplicate or escaped key): read whole, with each string cut at its first NUL as
/// SQLite's functions cut it.
fn uncertain_text(raw: &[u8]) -> SearchText {
    use serde_json::Value;
    let cut = |s: &str| s.split('\0').next().unwrap_or_default().to_owned();
    let Some(record) = crate::jsonl::parse_record(raw) else {
        return SearchText::default();
    };
    let content = record.get("message").and_then(|m| m.get("content"));
    let blocks = content.and_then(Value::as_array);
    let body = match content {
        Some(Value::String(s)) => Some(cut(s)),
        _ => blocks.map(|b| {
            b.iter()
                .filter(|e| e.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|e| e.get("text").and_then(Value::as_str))
                .map(cut)
                .collect::<Vec<_>>()
                .join("\n")
        }),
    };
    let tools = blocks.map(|b| {
        b.iter()
            .filter_map(|e| match e.get("type").and_then(Value::as_str) {
                Some("tool_use") => Some(format!(
                    "{} {}",
                    e.get("name")
                        .and_then(Value::as_str)
                        .map(cut)
                        .unwrap_or_default(),
                    e.get("input").map(Value::to_string).unwrap_or_default()
                )),
                Some("tool_result") => match e.get("content") {
                    Some(Value::String(s)) => Some(cut(s)),
                    Some(Value::Array(parts)) => Some(
                        parts
                            .iter()
                            .filter_map(|p| p.get("text").and_then(Value::as_str))
                            .map(cut)
                            .collect::<Vec<_>>()
                            .join("\n"),
                    ),
                    _ => None,
                },
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    });
    SearchText { body, tools }
}

/// Stores `lines` from `ordinal` on with their projected columns and search vectors, in
/// one statement; returns their row ids in line order.
pub(crate) fn insert_rows(
    tx: &mut Transaction<'_>,
    transcript: i64,
    ordinal: i64,
    lines: &[crate::import::Parsed<'_>],
    own_session: &str,
) -> Result<Vec<i64>> {
    insert_lines(tx, transcript, ordinal, lines, own_session, false)
}

/// [`insert_rows`] with the `local` flag (lines written by sessiondb itself).
pub(crate) fn insert_lines(
    tx: &mut Transaction<'_>,
    transcript: i64,
    ordinal: i64,
    lines: &[crate::import::Parsed<'_>],
    own_session: &str,
    local: bool,
) -> Result<Vec<i64>> {
    if lines.is_empty() {
        return Ok(Vec::new());
    }
    let n = lines.len();
    let mut ordinals = Vec::with_capacity(n);
    let mut raws: Vec<&[u8]> = Vec::with_capacity(n);
    let mut terminated = Vec::with_capacity(n);
    let mut status = Vec::with_capacity(n);
    let mut text_cols: [Vec<Option<Cow<'_, str>>>; 11] = Default::default();
    let mut bool_cols: [Vec<bool>; 5] = Default::default();
    let mut unknown_fields = Vec::with_capacity(n);
    let mut indexed = Vec::with_capacity(n);
    let mut bodies: Vec<Option<String>> = Vec::with_capacity(n);
    let mut tools: Vec<Option<String>> = Vec::with_capacity(n);
    for (i, (line, st, env, search)) in lines.iter().enumerate() {
        ordinals.push(ordinal + i as i64);
        raws.push(line.bytes);
        terminated.push(line.terminated);
        status.push(*st as i16);
        let texts = [
            env.kind.as_deref(),
            env.uuid.as_deref(),
            env.parent_uuid.as_deref(),
            env.logical_parent_uuid.as_deref(),
            crate::import::line_session_id(env, Some(own_session)),
            env.agent_id.as_deref(),
            env.timestamp.as_deref(),
            env.subtype.as_deref(),
            env.message_id.as_deref(),
            env.role.as_deref(),
            env.source_tool_assistant_uuid.as_deref(),
        ];
        for (col, v) in text_cols.iter_mut().zip(texts) {
            col.push(v.map(without_nul));
        }
        let flags = [
            env.is_sidechain,
            env.is_meta,
            env.is_compact_summary,
            env.is_api_error,
            *st == LineStatus::Record && !env.has_known_type(),
        ];
        for (col, v) in bool_cols.iter_mut().zip(flags) {
            col.push(v);
        }
        unknown_fields.push(i64::from(env.unknown_fields));
        let search = search_of(*st, env, line.bytes, search.as_ref());
        indexed.push(search.is_some());
        let (b, t) = search.map_or((None, None), |s| (s.body, s.tools));
        bodies.push(indexed_text(b.as_deref()));
        tools.push(indexed_text(t.as_deref()));
    }
    let [kind, uuid, parent, logical, entry_session, agent, timestamp, subtype, message, role, source_tool] =
        &text_cols;
    let [sidechain, meta, compact, api_error, unknown_type] = &bool_cols;
    let rows = tx.query(
        "INSERT INTO rows (transcript_id, ordinal, raw, terminated, status, type, uuid,
            parent_uuid, logical_parent_uuid, is_sidechain, entry_session_id, agent_id, timestamp,
            subtype, message_id, role, is_meta, is_compact_summary, is_api_error,
            source_tool_assistant_uuid, unknown_type, unknown_fields, local, search)
         SELECT $1, u.ordinal, u.raw, u.terminated, u.status, u.type, u.uuid, u.parent_uuid,
            u.logical_parent_uuid, u.is_sidechain, u.entry_session_id, u.agent_id, u.timestamp,
            u.subtype, u.message_id, u.role, u.is_meta, u.is_compact_summary, u.is_api_error,
            u.source_tool_assistant_uuid, u.unknown_type, u.unknown_fields, $23,
            CASE WHEN u.indexed THEN
                setweight(to_tsvector('simple', coalesce(u.body, '')), 'A')
                || setweight(to_tsvector('simple', coalesce(u.tools, '')), 'D')
            END
         FROM unnest($2::bigint[], $3::bytea[], $4::boolean[], $5::smallint[], $6::text[],
                     $7::text[], $8::text[], $9::text[], $10::boolean[], $11::text[],
                     $12::text[], $13::text[], $14::text[], $15::text[], $16::text[],
                     $17::boolean[], $18::boolean[], $19::boolean[], $20::text[],
                     $21::boolean[], $22::bigint[], $24::boolean[], $25::text[], $26::text[])
           AS u(ordinal, raw, terminated, status, type, uuid, parent_uuid, logical_parent_uuid,
                is_sidechain, entry_session_id, agent_id, timestamp, subtype, message_id, role,
                is_meta, is_compact_summary, is_api_error, source_tool_assistant_uuid,
                unknown_type, unknown_fields, indexed, body, tools)
         RETURNING id, ordinal",
        &[
            &transcript,
            &ordinals,
            &raws,
            &terminated,
            &status,
            kind,
            uuid,
            parent,
            logical,
            sidechain,
            entry_session,
            agent,
            timestamp,
            subtype,
            message,
            role,
            meta,
            compact,
            api_error,
            source_tool,
            unknown_type,
            &unknown_fields,
            &local,
            &indexed,
            &bodies,
            &tools,
        ],
    )?;
    let mut ids = vec![0i64; n];
    for r in rows {
        let at = (r.get::<_, i64>(1) - ordinal) as usize;
        ids[at] = r.get(0);
    }
    Ok(ids)
}

/// Fills the side tables for a record (the shared [`crate::import::side_of`]).
pub(crate) fn project_record(
    tx: &mut Transaction<'_>,
    transcript: i64,
    row: i64,
    bytes: &[u8],
    env: &crate::jsonl::Envelope<'_>,
) -> Result<()> {
    let Some(kind) = env.kind.as_deref() else {
        return Ok(());
    };
    if kind == "user" && env.is_compact_summary {
        tx.execute(
            "UPDATE compactions SET summary_uuid = $3 WHERE transcript_id = $1 AND boundary_uuid = $2",
            &[&transcript, &env.parent_uuid.as_deref(), &env.uuid.as_deref()],
        )?;
    }
    let Some(side) = import::side_of(bytes, env) else {
        return Ok(());
    };
    match side {
        Side::Compaction {
            trigger,
            pre_tokens,
            head_uuid,
            anchor_uuid,
            tail_uuid,
        } => {
            tx.execute(
                "INSERT INTO compactions (row_id, transcript_id, boundary_uuid, logical_parent_uuid,
                    trigger, pre_tokens, head_uuid, anchor_uuid, tail_uuid)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                &[
                    &row,
                    &transcript,
                    &env.uuid.as_deref(),
                    &env.logical_parent_uuid.as_deref(),
                    &trigger,
                    &pre_tokens,
                    &head_uuid,
                    &anchor_uuid,
                    &tail_uuid,
                ],
            )?;
        }
        Side::Replacements(replacements) => {
            for (rkind, tool_use_id, replacement) in replacements {
                tx.execute(
                    "INSERT INTO content_replacements (row_id, transcript_id, entry_session_id,
                        agent_id, kind, tool_use_id, replacement)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    &[
                        &row,
                        &transcript,
                        &env.session_id.as_deref(),
                        &env.agent_id.as_deref(),
                        &rkind,
                        &tool_use_id,
                        &replacement.map(|r| r.replace('\0', "\u{fffd}")),
                    ],
                )?;
            }
        }
        Side::FileHistory {
            message_id,
            is_snapshot_update,
        } => {
            tx.execute(
                "INSERT INTO file_history (row_id, transcript_id, kind, message_id, is_snapshot_update)
                 VALUES ($1, $2, $3, $4, $5)",
                &[&row, &transcript, &kind, &message_id, &is_snapshot_update],
            )?;
        }
        Side::Metadata { leaf_uuid, value } => {
            tx.execute(
                "INSERT INTO metadata (row_id, transcript_id, kind, entry_session_id, leaf_uuid, value)
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    &row,
                    &transcript,
                    &kind,
                    &env.session_id.as_deref(),
                    &leaf_uuid,
                    &value.map(|v| v.replace('\0', "\u{fffd}")),
                ],
            )?;
        }
    }
    Ok(())
}
