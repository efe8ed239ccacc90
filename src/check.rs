//! `sessiondb check [--repair]`: everything that can be verified about a database, and the
//! repairs that can be made from what is still on disk.
//!
//! What is checked, in order: SQLite's own `PRAGMA integrity_check` (page structure) and
//! `foreign_key_check`; the full-text index against the lines it indexes (FTS5
//! `integrity-check`, which recomputes every indexed text); every stored line against the
//! checksum written with it (see [`crate::integrity`]); every catalog row against a
//! recomputation from its session's lines ([`catalog::stale_columns`]).
//!
//! What a repair does, in one IMMEDIATE transaction: a damaged line is read again from the
//! source file it was imported from, when that file still holds it (at the same byte offset,
//! else anywhere in the file) with the stored checksum; lines stored before migration V10
//! get their checksum; the full-text index is rebuilt when it was damaged or a line was
//! restored; stale catalog rows are recomputed. Then everything is checked again. Damaged
//! page structure and lines that no source holds any more cannot be repaired here: they are
//! reported (a backup, or a re-import of the source files, is the way back).

use crate::catalog;
use crate::error::{Error, Result};
use crate::integrity::{self, DamagedLine};
use crate::search;
use crate::store::Store;
use rusqlite::{params, Connection};
use serde::Serialize;
use std::io::{BufRead, Read, Seek};
use std::path::PathBuf;

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Problem {
    /// A line of `PRAGMA integrity_check` other than `ok`: the file's pages are damaged.
    Sqlite {
        /// What SQLite said.
        detail: String,
    },
    /// A row whose parent row is missing (`PRAGMA foreign_key_check`).
    ForeignKey {
        /// The table holding the row.
        table: String,
        /// Its rowid.
        rowid: Option<i64>,
        /// The table it refers to.
        parent: String,
    },
    /// The full-text index does not match the lines it indexes.
    SearchIndex {
        /// What FTS5 said.
        detail: String,
    },
    /// A stored line whose bytes no longer match their checksum.
    DamagedLine(DamagedLine),
    /// A catalog row that differs from a recomputation from its session's lines.
    Catalog {
        /// The project folder.
        project: String,
        /// The session id.
        session_id: String,
        /// The columns that differ (`(missing)` when the row is missing).
        columns: Vec<String>,
        /// The session's key, for the repair.
        #[serde(skip)]
        session_key: i64,
    },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Sqlite { detail } => write!(f, "database pages: {detail}"),
            Problem::ForeignKey {
                table,
                rowid,
                parent,
            } => match rowid {
                Some(id) => write!(f, "{table} row {id} refers to a missing {parent} row"),
                None => write!(f, "a {table} row refers to a missing {parent} row"),
            },
            Problem::SearchIndex { detail } => write!(f, "search index: {detail}"),
            Problem::DamagedLine(line) => write!(f, "{line}"),
            Problem::Catalog {
                project,
                session_id,
                columns,
                ..
            } => write!(
                f,
                "catalog row of session {session_id} (project {project}) differs from its \
                 lines in {}",
                columns.join(", ")
            ),
        }
    }
}

/// A damaged line that `--repair` read again from its source file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Restored {
    /// The line.
    #[serde(flatten)]
    pub line: DamagedLine,
    /// The source file it was read from.
    pub source: PathBuf,
}

/// A problem `--repair` could not fix, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotRepaired {
    /// The problem.
    pub problem: Problem,
    /// Why it stays.
    pub reason: String,
}

/// What `--repair` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Repair {
    /// Damaged lines restored from their source files.
    pub restored: Vec<Restored>,
    /// Problems left as they were, with the reason.
    pub not_repaired: Vec<NotRepaired>,
    /// Lines stored before migration V10 that got their checksum.
    pub summed: u64,
    /// Whether the full-text index was rebuilt.
    pub search_index_rebuilt: bool,
    /// Catalog rows recomputed.
    pub catalog_rebuilt: u64,
}

/// What [`check`] found (and, with `repair`, did).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CheckReport {
    /// No problem is left (after the repair, when there was one).
    pub ok: bool,
    /// Stored lines compared with their checksum.
    pub lines_checked: u64,
    /// Stored lines without a checksum (stored before migration V10), not checked; `check
    /// --repair` sums them.
    pub lines_unsummed: u64,
    /// Sessions whose catalog row was recomputed and compared.
    pub sessions_checked: u64,
    /// On a team store: lines whose search vector was computed afresh and compared (a
    /// team store has no line checksums, so `lines_checked` stays 0 there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vectors_checked: Option<u64>,
    /// What the check found.
    pub problems: Vec<Problem>,
    /// With `repair`: what was repaired and what was not.
    pub repair: Option<Repair>,
    /// With `repair`: what a second check still found.
    pub remaining: Option<Vec<Problem>>,
}

/// Checks the database and, with `repair`, repairs what can be repaired (see the module
/// docs). Without `repair` nothing is written, except that lines still queued for the
/// full-text index are indexed first, as every search does (the index can only be compared
/// with the lines once it holds them all).
///
/// # Errors
/// A database error that stops the check itself; [`Error::ReadOnly`] for `repair` on a
/// read-only database. Problems found are not errors: they are in the report.
pub fn check(store: &Store, repair: bool) -> Result<CheckReport> {
    if store.read_only_reason().is_none() {
        search::catch_up(store)?;
    }
    check_with(
        || scan(store),
        repair.then_some(|problems: &[Problem]| repair_problems(store, problems)),
    )
}

/// A check's course on either store: scan; with a repair, repair what was found and scan
/// again, the report saying what was done and what is left.
pub(crate) fn check_with(
    mut scan: impl FnMut() -> Result<CheckReport>,
    repair: Option<impl FnOnce(&[Problem]) -> Result<Repair>>,
) -> Result<CheckReport> {
    let mut report = scan()?;
    let Some(repair) = repair else {
        report.ok = report.problems.is_empty();
        return Ok(report);
    };
    let done = repair(&report.problems)?;
    let again = scan()?;
    report.ok = again.problems.is_empty();
    report.remaining = Some(again.problems);
    report.repair = Some(done);
    Ok(report)
}

/// Every check, on one read snapshot.
fn scan(store: &Store) -> Result<CheckReport> {
    let mut conn = store.reader()?;
    let tx = conn.transaction()?;
    let mut report = CheckReport::default();
    let mut integrity = tx.prepare("PRAGMA integrity_check")?;
    let mut rows = integrity.query([])?;
    while let Some(row) = rows.next()? {
        let line: String = row.get(0)?;
        if line.starts_with("fts5:") {
            report.problems.push(Problem::SearchIndex { detail: line });
        } else if line != "ok" {
            report.problems.push(Problem::Sqlite { detail: line });
        }
    }
    drop(rows);
    drop(integrity);
    let mut fk = tx.prepare("PRAGMA foreign_key_check")?;
    let found: Vec<Problem> = fk
        .query_map([], |r| {
            Ok(Problem::ForeignKey {
                table: r.get(0)?,
                rowid: r.get(1)?,
                parent: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    drop(fk);
    report.problems.extend(found);
    // integrity_check ran FTS5's own check of the index's inner consistency (its lines
    // start with "fts5:"); this compares the index with the lines.
    let index_damaged = report
        .problems
        .iter()
        .any(|p| matches!(p, Problem::SearchIndex { .. }));
    if !index_damaged {
        if let Some(detail) = compare_search_index(&tx)? {
            report.problems.push(Problem::SearchIndex { detail });
        }
    }
    let damaged_sessions = scan_lines(&tx, &mut report)?;
    scan_catalog(&tx, &mut report, &damaged_sessions)?;
    Ok(report)
}

/// Compares the full-text index with an index built afresh from the lines, term instance by
/// term instance (row, column, position). FTS5's own `integrity-check` (which `PRAGMA
/// integrity_check` runs) only checks the index's inner consistency here: comparing it with
/// the content needs FTS5 to read the `search_source` view, which it cannot (see
/// `search::reindex`). The fresh index lives in
/// the connection's temporary schema and goes with the read transaction. Lines still queued
/// for indexing (a read-only database) are left out of both sides.
fn compare_search_index(conn: &Connection) -> Result<Option<String>> {
    conn.execute_batch(
        "CREATE VIRTUAL TABLE temp.check_fts USING fts5(body, tools,
             tokenize = 'unicode61 remove_diacritics 2');
         INSERT INTO temp.check_fts (rowid, body, tools)
             SELECT id, body, tools FROM main.search_source
             WHERE id NOT IN (SELECT row_id FROM main.search_pending);
         CREATE VIRTUAL TABLE temp.check_stored USING fts5vocab(main, rows_fts, instance);
         CREATE VIRTUAL TABLE temp.check_fresh USING fts5vocab(temp, check_fts, instance);",
    )?;
    let (extra, missing): (i64, i64) = conn.query_row(
        "SELECT
            (SELECT count(*) FROM (
                SELECT term, doc, col, offset FROM temp.check_stored
                WHERE doc NOT IN (SELECT row_id FROM main.search_pending)
                EXCEPT SELECT term, doc, col, offset FROM temp.check_fresh)),
            (SELECT count(*) FROM (
                SELECT term, doc, col, offset FROM temp.check_fresh
                EXCEPT SELECT term, doc, col, offset FROM temp.check_stored))",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    conn.execute_batch(
        "DROP TABLE temp.check_stored; DROP TABLE temp.check_fresh; DROP TABLE temp.check_fts;",
    )?;
    Ok((extra > 0 || missing > 0).then(|| {
        format!(
            "the index does not match the stored lines: {extra} indexed words are not in them, \
             {missing} words of them are not indexed"
        )
    }))
}

/// Compares every line with its checksum; returns the sessions with a damaged line.
fn scan_lines(conn: &Connection, report: &mut CheckReport) -> Result<Vec<i64>> {
    let mut stmt =
        conn.prepare("SELECT id, line(raw, dict) AS raw, checksum FROM rows ORDER BY id")?;
    let mut rows = stmt.query([])?;
    let mut damaged = Vec::new();
    while let Some(row) = rows.next()? {
        let checksum: Option<i64> = row.get(2)?;
        let Some(checksum) = checksum else {
            report.lines_unsummed += 1;
            continue;
        };
        report.lines_checked += 1;
        let raw = row.get_ref(1)?.as_bytes().map_err(rusqlite::Error::from)?;
        if integrity::line_checksum(raw) != checksum {
            damaged.push(row.get::<_, i64>(0)?);
        }
    }
    let mut sessions = Vec::new();
    for id in damaged {
        report
            .problems
            .push(Problem::DamagedLine(integrity::locate(conn, id)?));
        sessions.extend(session_of_row(conn, id)?);
    }
    Ok(sessions)
}

/// Compares every catalog row with a recomputation, except those of `damaged` sessions: a
/// recomputation would read the damaged bytes (they are recomputed once restored).
fn scan_catalog(conn: &Connection, report: &mut CheckReport, damaged: &[i64]) -> Result<()> {
    let sessions: Vec<(i64, String, String)> = conn
        .prepare(
            "SELECT s.id, p.key, s.session_id FROM sessions s JOIN projects p ON p.id = s.project_id
             ORDER BY p.key, s.session_id",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (key, project, session_id) in sessions {
        if damaged.contains(&key) {
            continue;
        }
        report.sessions_checked += 1;
        let columns = catalog::stale_columns(conn, key)?;
        if !columns.is_empty() {
            report.problems.push(Problem::Catalog {
                project,
                session_id,
                columns: columns.into_iter().map(str::to_owned).collect(),
                session_key: key,
            });
        }
    }
    Ok(())
}

/// Repairs what `problems` allow, in one IMMEDIATE transaction; the source files are read
/// before it is taken.
fn repair_problems(store: &Store, problems: &[Problem]) -> Result<Repair> {
    let mut done = Repair::default();
    let mut restorations = Vec::new();
    {
        let conn = store.reader()?;
        for problem in problems {
            match problem {
                Problem::DamagedLine(line) => match reread(&conn, line.row_id)? {
                    Ok((source, bytes, checksum)) => {
                        restorations.push((line.clone(), source, bytes, checksum));
                    }
                    Err(reason) => done.not_repaired.push(NotRepaired {
                        problem: problem.clone(),
                        reason,
                    }),
                },
                Problem::Sqlite { .. } | Problem::ForeignKey { .. } => {
                    done.not_repaired.push(NotRepaired {
                        problem: problem.clone(),
                        reason: "the database file itself is damaged: restore a backup \
                                 (`sessiondb backup`) or import the source files into a new \
                                 database"
                            .into(),
                    });
                }
                Problem::SearchIndex { .. } | Problem::Catalog { .. } => {}
            }
        }
    }
    let rebuild_index = !restorations.is_empty()
        || problems
            .iter()
            .any(|p| matches!(p, Problem::SearchIndex { .. }));
    let mut stale: Vec<i64> = problems
        .iter()
        .filter_map(|p| match p {
            Problem::Catalog { session_key, .. } => Some(*session_key),
            _ => None,
        })
        .collect();
    store.write(|tx| {
        for (line, source, bytes, checksum) in &restorations {
            let changed = tx
                .prepare_cached("UPDATE rows SET raw = ?2, dict = NULL WHERE id = ?1 AND checksum = ?3")?
                .execute(params![line.row_id, bytes, checksum])?;
            if changed == 1 {
                done.restored.push(Restored {
                    line: line.clone(),
                    source: source.clone(),
                });
                stale.extend(session_of_row(tx, line.row_id)?);
            }
        }
        done.summed = sum_unsummed(tx)?;
        if rebuild_index {
            // As `search::reindex`: FTS5's own 'rebuild' cannot read the content view.
            tx.execute("INSERT INTO rows_fts (rows_fts) VALUES ('delete-all')", [])?;
            tx.execute("DELETE FROM search_pending", [])?;
            tx.execute(
                "INSERT INTO rows_fts (rowid, body, tools) SELECT id, body, tools FROM search_source",
                [],
            )?;
            done.search_index_rebuilt = true;
        }
        stale.sort_unstable();
        stale.dedup();
        for key in &stale {
            catalog::rebuild_session(tx, *key)?;
        }
        done.catalog_rebuilt = stale.len() as u64;
        Ok(())
    })?;
    Ok(done)
}

/// The session key of a row's transcript.
fn session_of_row(conn: &Connection, row_id: i64) -> Result<Option<i64>> {
    use rusqlite::OptionalExtension;
    Ok(conn
        .prepare_cached(
            "SELECT t.session_id FROM rows r JOIN transcripts t ON t.id = r.transcript_id
             WHERE r.id = ?1",
        )?
        .query_row([row_id], |r| r.get(0))
        .optional()?)
}

/// Gives every line stored before migration V10 its checksum; returns how many.
fn sum_unsummed(conn: &Connection) -> Result<u64> {
    let ids: Vec<i64> = conn
        .prepare("SELECT id FROM rows WHERE checksum IS NULL")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut read = conn.prepare_cached("SELECT line(raw, dict) AS raw FROM rows WHERE id = ?1")?;
    let mut write = conn.prepare_cached("UPDATE rows SET checksum = ?2 WHERE id = ?1")?;
    for id in &ids {
        let raw: Vec<u8> = read.query_row([id], |r| r.get(0))?;
        write.execute(params![id, integrity::line_checksum(&raw)])?;
    }
    Ok(ids.len() as u64)
}

/// A damaged line read again: the source file, its bytes there, the stored checksum.
type Reread = (PathBuf, Vec<u8>, i64);

/// The damaged row's original bytes, read again from the source file it was imported from:
/// `Ok((file, bytes, checksum))`, or `Err(why not)`.
fn reread(conn: &Connection, row_id: i64) -> Result<std::result::Result<Reread, String>> {
    use rusqlite::OptionalExtension;
    let (transcript, ordinal, len, checksum): (i64, i64, i64, Option<i64>) = conn
        .prepare_cached(
            "SELECT transcript_id, ordinal, length(raw), checksum FROM rows WHERE id = ?1",
        )?
        .query_row([row_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
    let Some(checksum) = checksum else {
        return Ok(Err("the line has no checksum".into()));
    };
    let source: Option<String> = conn
        .prepare_cached(
            "SELECT path FROM source_files WHERE transcript_id = ?1 ORDER BY rowid DESC LIMIT 1",
        )?
        .query_row([transcript], |r| r.get(0))
        .optional()?;
    let Some(source) = source else {
        return Ok(Err(
            "the file was never imported from a source file (written by sessiondb)".into(),
        ));
    };
    let source = PathBuf::from(source);
    let (_, offset) = integrity::position(conn, transcript, ordinal)?;
    let found =
        find_line(&source, offset, len.max(0) as u64, checksum).map_err(|e| Error::io(&source, e));
    Ok(match found {
        Ok(Some(bytes)) => Ok((source, bytes, checksum)),
        Ok(None) => Err(format!(
            "{} no longer holds the line (no line with its checksum)",
            source.display()
        )),
        Err(e) => Err(format!("cannot read the source file: {e}")),
    })
}

/// The bytes of the line with `checksum` in the file at `path`: first at `offset` (where the
/// stored lines before it put it), else the first such line anywhere in the file.
fn find_line(
    path: &std::path::Path,
    offset: u64,
    len: u64,
    checksum: i64,
) -> std::io::Result<Option<Vec<u8>>> {
    let mut file = std::fs::File::open(path)?;
    file.seek(std::io::SeekFrom::Start(offset))?;
    let mut at = Vec::new();
    (&mut file).take(len).read_to_end(&mut at)?;
    if integrity::line_checksum(&at) == checksum {
        return Ok(Some(at));
    }
    file.rewind()?;
    let mut lines = std::io::BufReader::new(file);
    let mut line = Vec::new();
    loop {
        line.clear();
        if lines.read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if integrity::line_checksum(&line) == checksum {
            return Ok(Some(line));
        }
    }
}
