//! `check [--repair]` on a team store: what can go stale there, compared with a full
//! recomputation, by the shared rules.
//!
//! Checked: each line's search vector against one computed afresh from its stored bytes
//! (the reader and the expression import uses), and each catalog row against
//! [`crate::catalog`]'s rules run over all its session's lines. Not checked here, and why:
//! foreign keys (PostgreSQL enforces them on every write, and V8's triggers a row's
//! transcript), page structure and damaged bytes (the server's own business: data
//! checksums, `amcheck`; a team store keeps no per-line checksums). The report has the
//! shape of SQLite's ([`CheckReport`]).
//!
//! `--repair` rebuilds what is stale, one session per transaction under its row lock (see
//! [`super::reindex`]), then checks again. The stored lines are never written.

use super::decode::RowExt;
use super::reindex::{lock_session, rebuild_search, session_keys, stale_search};
use super::PgStore;
use crate::check::{CheckReport, Problem, Repair};
use crate::error::Result;

/// Checks the team store and, with `repair`, rebuilds what is stale.
///
/// # Errors
/// A database error that stops the check itself; problems found are in the report.
pub fn check(store: &PgStore, repair: bool) -> Result<CheckReport> {
    crate::check::check_with(
        || scan(store),
        repair.then_some(|problems: &[Problem]| repair_problems(store, problems)),
    )
}

/// Every check, on one read snapshot.
fn scan(store: &PgStore) -> Result<CheckReport> {
    store.read(|tx| {
        let mut report = CheckReport {
            vectors_checked: Some(0),
            ..CheckReport::default()
        };
        let keys: Vec<(i64, String, String)> = tx
            .query(
                "SELECT s.id, p.key, s.session_id FROM sessions s
                 JOIN projects p ON p.id = s.project_id ORDER BY p.key, s.session_id",
                &[],
            )?
            .iter()
            .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?)))
            .collect::<Result<_>>()?;
        let mut stale_lines = 0u64;
        let mut stale_sessions = 0u64;
        for (key, project, session_id) in keys {
            let (stale, compared) = stale_search(tx, key)?;
            report.vectors_checked = Some(report.vectors_checked.unwrap_or(0) + compared);
            if !stale.is_empty() {
                stale_lines += stale.len() as u64;
                stale_sessions += 1;
            }
            report.sessions_checked += 1;
            let columns = super::catalog::stale_columns(tx, key)?;
            if !columns.is_empty() {
                report.problems.push(Problem::Catalog {
                    project,
                    session_id,
                    columns: columns.into_iter().map(str::to_owned).collect(),
                    session_key: key,
                });
            }
        }
        if stale_lines > 0 {
            report.problems.insert(
                0,
                Problem::SearchIndex {
                    detail: format!(
                        "the search vectors of {stale_lines} lines (in {stale_sessions} \
                         sessions) do not match their text"
                    ),
                },
            );
        }
        Ok(report)
    })
}

/// Rebuilds the search vectors (of every session, as SQLite rebuilds its whole index) when
/// they are stale, and the stale catalog rows; one session per transaction.
fn repair_problems(store: &PgStore, problems: &[Problem]) -> Result<Repair> {
    let mut done = Repair::default();
    let mut stale: Vec<i64> = problems
        .iter()
        .filter_map(|p| match p {
            Problem::Catalog { session_key, .. } => Some(*session_key),
            _ => None,
        })
        .collect();
    if problems
        .iter()
        .any(|p| matches!(p, Problem::SearchIndex { .. }))
    {
        for key in session_keys(store)? {
            let written = store.write(|tx| {
                Ok(if lock_session(tx, key)? {
                    rebuild_search(tx, key)?
                } else {
                    0
                })
            })?;
            if written > 0 {
                // The catalog does not read the vectors, but a session whose lines were
                // read again is recomputed too, as SQLite's repair does.
                stale.push(key);
            }
        }
        done.search_index_rebuilt = true;
    }
    stale.sort_unstable();
    stale.dedup();
    for key in &stale {
        store.write(|tx| {
            if lock_session(tx, *key)? {
                super::catalog::rebuild_session(tx, *key)?;
            }
            Ok(())
        })?;
    }
    done.catalog_rebuilt = stale.len() as u64;
    Ok(done)
}
