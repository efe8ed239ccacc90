//! The team store's search queue: appended lines wait for their search vector, and
//! catch-ups running at once index each line exactly once and lose none.

use crate::support::{pg_db, PgTestDb};
use sessiondb::model::NoProgress;
use sessiondb::pg::search_queue::{catch_up, queued};
use sessiondb::pg::PgStore;
use sessiondb::search::SearchQuery;
use sessiondb::Db;
use std::path::Path;

/// Lines appended, more than one catch-up batch.
const LINES: usize = 4500;

/// Lines of the first append, which a catch-up elsewhere holds in one test.
const HELD: usize = 100;

/// A team store holding the sample sessions, with `LINES` appended lines that each say
/// "wombatcheese" queued for the index.
fn queued_store(what: &str) -> Option<(PgTestDb, Db)> {
    let pg = pg_db(what)?;
    let db = Db::open(&pg.url).expect("open");
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sample-projects");
    db.import_paths(&[samples], &NoProgress).expect("import");
    let first = db
        .list_sessions(&Default::default())
        .expect("list")
        .remove(0);
    let session = db.resolve_session(&first.session_id).expect("session");
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
