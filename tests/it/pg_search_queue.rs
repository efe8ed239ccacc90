//! The team store's search queue: appended lines wait for their search vector, and
//! catch-ups running at once index each line exactly once and lose none.

use crate::support::{pg_db, PgTestDb};
use sessiondb::model::{NoProgress, SessionRef};
use sessiondb::pg::search_queue::{catch_up, queued};
use sessiondb::pg::PgStore;
use sessiondb::search::SearchQuery;
use sessiondb::Db;
use std::path::Path;

/// Lines appended, more than one catch-up batch.
const LINES: usize = 4500;

/// Lines of the first append, which a catch-up elsewhere holds in one test.
const HELD: usize = 100;

/// The team store `pg` opened, with the sample sessions imported, and the first session it
/// lists.
fn sample_store(pg: &PgTestDb) -> (Db, SessionRef) {
    let db = Db::open(&pg.url).expect("open");
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sample-projects");
    db.import_paths(&[samples], &NoProgress).expect("import");
    let first = db
        .list_sessions(&Default::default())
        .expect("list")
        .remove(0);
    let session = db.resolve_session(&first.session_id).expect("session");
    (db, session)
}

/// A team store holding the sample sessions, with `LINES` appended lines that each say
/// "wombatcheese" queued for the index.
fn queued_store(what: &str) -> Option<(PgTestDb, Db)> {
    let pg = pg_db(what)?;
    let (db, session) = sample_store(&pg);
    let entries: Vec<_> = (0..LINES)
        .map(|i| {
            serde_json::json!({"type": "user", "uuid": uuid::Uuid::new_v4().to_string(),
                "message": {"role": "user", "content": format!("line {i} wombatcheese")}})
        })
        .collect();
    // Two appends, so two queued runs: the first (`HELD` lines) for a catch-up elsewhere to
    // hold.
    for part in [&entries[..HELD], &entries[HELD..]] {
        db.append_with(&session, part, &Default::default())
            .expect("append");
    }
    Some((pg, db))
}

fn wombats(db: &Db) -> usize {
    let (hits, stale) = db
        .search(&SearchQuery {
            text: "wombatcheese".into(),
            limit: Some(100_000),
            ..Default::default()
        })
        .expect("search");
    assert!(stale.is_none(), "{stale:?}");
    hits.len()
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn two_catch_ups_at_once_index_every_line_once() {
    let Some((pg, db)) = queued_store("two_catch_ups_at_once_index_every_line_once") else {
        return;
    };
    let store = PgStore::connect(&pg.url).expect("connect");
    assert_eq!(queued(&store).expect("queued"), LINES as i64);
    let counts: Vec<u64> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mine = PgStore::connect(&pg.url).expect("connect");
                    catch_up(&mine).expect("catch up")
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().expect("join")).collect()
    });
    // Each line left the queue once, in the transaction that wrote its vector.
    assert_eq!(counts.iter().sum::<u64>(), LINES as u64, "{counts:?}");
    assert_eq!(queued(&store).expect("queued"), 0);
    let empty: i64 = store
        .read(|tx| {
            Ok(tx
                .query_one(
                    "SELECT count(*) FROM rows WHERE search = ''::tsvector AND local",
                    &[],
                )?
                .get(0))
        })
        .expect("count");
    assert_eq!(empty, 0, "appended lines left with the empty vector");
    assert_eq!(wombats(&db), LINES);
}

/// Lines another catch-up holds are waited for: when it fails (rolls back), the search's own
/// catch-up indexes them, and the search finds every line.
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn a_failed_catch_up_loses_no_line_and_a_search_waits_for_it() {
    let Some((pg, db)) = queued_store("a_failed_catch_up_loses_no_line_and_a_search_waits_for_it")
    else {
        return;
    };
    // A catch-up in flight elsewhere: it holds the first run, the first append's lines.
    let mut other = postgres::Client::connect(&pg.url, postgres::NoTls).expect("connect");
    let mut held = other.transaction().expect("begin");
    let taken = held
        .query(
            "SELECT first_ordinal, last_ordinal FROM search_queue_runs
             ORDER BY transcript_id, first_ordinal LIMIT 1 FOR UPDATE",
            &[],
        )
        .expect("lock");
    let run: (i64, i64) = (taken[0].get(0), taken[0].get(1));
    assert_eq!(run.1 - run.0 + 1, HELD as i64);
    std::thread::scope(|s| {
        let search = s.spawn(|| wombats(&db));
        // The search indexes the rest and then waits for the held lines.
        let store = PgStore::connect(&pg.url).expect("connect");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while queued(&store).expect("queued") > HELD as i64 {
            assert!(std::time::Instant::now() < deadline, "catch-up stalled");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(!search.is_finished(), "the search did not wait");
        held.rollback().expect("roll back");
        assert_eq!(search.join().expect("join"), LINES);
    });
    let store = PgStore::connect(&pg.url).expect("connect");
    assert_eq!(queued(&store).expect("queued"), 0);
}

/// Lines still queued are not stale vectors to `check` (the next search indexes them), and
/// `reindex`, which writes every vector, leaves nothing queued.
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn check_accepts_queued_lines_and_reindex_empties_the_queue() {
    let Some((pg, db)) = queued_store("check_accepts_queued_lines_and_reindex_empties_the_queue")
    else {
        return;
    };
    let store = PgStore::connect(&pg.url).expect("connect");
    assert_eq!(queued(&store).expect("queued"), LINES as i64);
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb"))
            .arg("--db")
            .arg(&pg.url)
            .args(args)
            .output()
            .expect("run sessiondb")
    };
    let out = run(&["check", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["ok"], true, "{report}");
    assert!(out.status.success());
    let out = run(&["reindex"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(queued(&store).expect("queued"), 0);
    assert_eq!(wombats(&db), LINES);
}

/// Deletes, appends, reindexes and searches at once on one team store: every lock a search's
/// catch-up takes comes in the same order as the writers' (a line's row before its queue
/// entry), so none of them is ever aborted as a deadlock victim. Runs for
/// `SESSIONDB_STRESS_SECS` seconds (default 5).
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn deletes_appends_and_searches_at_once_never_deadlock() {
    let Some(pg) = pg_db("deletes_appends_and_searches_at_once_never_deadlock") else {
        return;
    };
    let (db, base) = sample_store(&pg);
    db.append_with(&base, &wombat_entries(0, 300), &Default::default())
        .expect("append");
    let secs = std::env::var("SESSIONDB_STRESS_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let failures = std::sync::Mutex::new(Vec::<String>::new());
    let counts = std::sync::Mutex::new([0u64; 6]);
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        failures.lock().unwrap().push(format!("{what}: {e}"));
    };
    let tally = |i: usize| counts.lock().unwrap()[i] += 1;
    let growing = tempfile::tempdir().expect("tempdir");
    std::thread::scope(|s| {
        // Forks (their lines queued), appends to the fork, deletes it.
        for worker in 0..3 {
            let (url, base, fail) = (&pg.url, &base, &fail);
            s.spawn(move || {
                let db = Db::open(url).expect("open");
                let mut round = 0;
                while std::time::Instant::now() < until {
                    round += 1;
                    let forked = match db.fork(base, &Default::default()) {
                        Ok(f) => f,
                        Err(e) => return fail("fork", &e),
                    };
                    let fork = db
                        .find_exact_session(&forked.project, &forked.session_id)
                        .expect("the fork");
                    let more = wombat_entries(worker * 1_000_000 + round * 1000, 50);
                    if let Err(e) = db.append_with(&fork, &more, &Default::default()) {
                        return fail("append", &e);
                    }
                    if let Err(e) = db.delete_session(&fork) {
                        return fail("delete", &e);
                    }
                    tally(0);
                }
            });
        }
        // Appends to the shared session.
        {
            let (url, base, fail) = (&pg.url, &base, &fail);
            s.spawn(move || {
                let db = Db::open(url).expect("open");
                let mut round = 0;
                while std::time::Instant::now() < until {
                    round += 1;
                    let more = wombat_entries(9_000_000 + round * 100, 20);
                    if let Err(e) = db.append_with(base, &more, &Default::default()) {
                        return fail("append to the shared session", &e);
                    }
                    tally(1);
                }
            });
        }
        // Imports of a growing file (each writes its ledger entry after the session's row)
        // while another loop deletes that session.
        {
            let (url, fail, dir) = (&pg.url, &fail, growing.path());
            s.spawn(move || {
                let db = Db::open(url).expect("open");
                let project = dir.join("-stress-project");
                std::fs::create_dir_all(&project).expect("mkdir");
                let file = project.join(format!("{GROWING}.jsonl"));
                let mut round = 0;
                while std::time::Instant::now() < until {
                    round += 1;
                    let line = serde_json::json!({"type": "user", "sessionId": GROWING,
                        "uuid": uuid::Uuid::new_v4().to_string(),
                        "message": {"role": "user", "content": format!("import {round}")}});
                    let mut f = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&file)
                        .expect("open the file");
                    std::io::Write::write_all(&mut f, format!("{line}\n").as_bytes())
                        .expect("write");
                    match db.import_paths(&[dir.to_path_buf()], &NoProgress) {
                        Ok(r) if r.files_failed == 0 => tally(4),
                        Ok(r) => return fail("import", &format!("{:?}", r.errors)),
                        Err(e) => return fail("import", &e),
                    }
                }
            });
            s.spawn(move || {
                let db = Db::open(url).expect("open");
                while std::time::Instant::now() < until {
                    let Ok(session) = db.resolve_session(GROWING) else {
                        std::thread::yield_now();
                        continue;
                    };
                    if let Err(e) = db.delete_session(&session) {
                        return fail("delete the imported session", &e);
                    }
                    tally(5);
                }
            });
        }
        // Searches: each catches up on the queue first.
        for _ in 0..2 {
            let (url, fail) = (&pg.url, &fail);
            s.spawn(move || {
                let db = Db::open(url).expect("open");
                while std::time::Instant::now() < until {
                    let query = SearchQuery {
                        text: "wombatcheese".into(),
                        limit: Some(10),
                        ..Default::default()
                    };
                    match db.search(&query) {
                        Ok((_, Some(e))) => return fail("catch-up", &e),
                        Err(e) => return fail("search", &e),
                        Ok(_) => tally(2),
                    }
                }
            });
        }
        // Reindex, which writes vectors and drops queue entries too.
        {
            let (url, fail) = (&pg.url, &fail);
            s.spawn(move || {
                let db = Db::open(url).expect("open");
                while std::time::Instant::now() < until {
                    if let Err(e) = db.reindex() {
                        return fail("reindex", &e);
                    }
                    tally(3);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let counts = counts.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{failures:#?} (rounds done: {counts:?})"
    );
    // Every loop got somewhere, and what is left is consistent: nothing queued after a last
    // search, every line of the shared session found.
    assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
    let appended = 300 + 20 * counts[1] as usize;
    assert_eq!(wombats(&db), appended);
    let store = PgStore::connect(&pg.url).expect("connect");
    assert_eq!(queued(&store).expect("queued"), 0);
}

/// The session the stress test imports and deletes again and again.
const GROWING: &str = "5f1e0c2a-9b7d-4e3f-8a61-2c4d6e8f0a1b";

/// `n` user entries saying "wombatcheese", numbered from `from`.
fn wombat_entries(from: usize, n: usize) -> Vec<serde_json::Value> {
    (from..from + n)
        .map(|i| {
            serde_json::json!({"type": "user", "uuid": uuid::Uuid::new_v4().to_string(),
                "message": {"role": "user", "content": format!("line {i} wombatcheese")}})
        })
        .collect()
}
