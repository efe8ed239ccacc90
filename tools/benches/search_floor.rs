//! The floor of a full-text search (issue 26's `find` ≤ 20 ms): what FTS5 itself takes to
//! rank every line a query matches, beside the whole search.
//!
//!     SESSIONDB_BENCH_DB=STORE cargo bench --bench search_floor [-- WORD…]
//!
//! For each query (default: `migration`, `fix`, `test` in the body, `test` with tool text:
//! from a few hundred to 26,000 matching lines on `../shared/bench/perf.sh`'s store), with
//! the bundled SQLite and a reader configured as the store's own (`schema::configure_reader`):
//!
//! * **match**: `count(*)` of the matching lines, no score (the index walk alone);
//! * **bm25**: every match scored (`bm25(…)` stepped through, no sort);
//! * **ranked**: every match scored and sorted, the statement a search starts with
//!   (`ORDER BY bm25, rowid`), all rows stepped through;
//! * **top 64**: the same with `LIMIT 64`, which SQLite sorts keeping only the best 64;
//! * **search**: `search::search` with limit 21 (as MCP `find` asks for a page of 20): the
//!   ranking, then the lookups, titles and snippets of the hits shown.
//!
//! Each is run once to warm up and then `$SESSIONDB_BENCH_RUNS` times (default 30): p50
//! and p95 in ms. Not a test: the figures depend on the machine's load.

use rusqlite::{Connection, OpenFlags};
use sessiondb::search::{self, SearchQuery};
use std::time::Instant;

fn main() {
    let Ok(db) = std::env::var("SESSIONDB_BENCH_DB") else {
        eprintln!("search_floor: set SESSIONDB_BENCH_DB to a store (perf.sh leaves one at $PERF_DIR/s.db)");
        std::process::exit(2);
    };
    let runs: usize = std::env::var("SESSIONDB_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let queries: Vec<(String, bool)> = if words.is_empty() {
        vec![
            ("migration".into(), false),
            ("fix".into(), false),
            ("test".into(), false),
            ("test".into(), true),
        ]
    } else {
        words.into_iter().map(|w| (w, true)).collect()
    };
    let conn =
        Connection::open_with_flags(&db, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open the store");
    sessiondb::schema::configure_reader(&conn).expect("configure");
    println!("SQLite {}, {runs} runs each", rusqlite::version());
    println!(
        "| query | tool text | matching lines | match p50 / p95 | bm25 | ranked | top 64 | search (21 hits) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (text, tools) in queries {
        let fts = search::fts_query(&text, tools).expect("a word");
        let count = |sql: &str| -> f64 {
            conn.prepare_cached(sql)
                .expect("prepare")
                .query_row([&fts], |r| r.get::<_, f64>(0))
                .expect("run")
        };
        let matches = count("SELECT count(*) FROM rows_fts WHERE rows_fts MATCH ?1");
        let walk = timed(runs, || {
            count("SELECT count(*) FROM rows_fts WHERE rows_fts MATCH ?1");
        });
        let step = |sql: &str| {
            let mut stmt = conn.prepare_cached(sql).expect("prepare");
            let mut rows = stmt.query([&fts]).expect("run");
            while let Some(r) = rows.next().expect("step") {
                let _: f64 = r.get(0).expect("a score");
            }
        };
        let bm25 = timed(runs, || {
            step("SELECT bm25(rows_fts, 1.0, 0.5) FROM rows_fts WHERE rows_fts MATCH ?1");
        });
        let ranked = timed(runs, || {
            step(
                "SELECT bm25(rows_fts, 1.0, 0.5), rowid FROM rows_fts
                 WHERE rows_fts MATCH ?1 ORDER BY 1, 2",
            );
        });
        let top = timed(runs, || {
            step(
                "SELECT bm25(rows_fts, 1.0, 0.5), rowid FROM rows_fts
                 WHERE rows_fts MATCH ?1 ORDER BY 1, 2 LIMIT 64",
            );
        });
        let whole = timed(runs, || {
            let q = SearchQuery {
                text: text.clone(),
                tools,
                limit: Some(21),
                ..SearchQuery::default()
            };
            search::search(&conn, &q).expect("search");
        });
        let f = |(a, b): (f64, f64)| format!("{a:.2} / {b:.2} ms");
        println!(
            "| `{text}` | {tools} | {matches} | {} | {} | {} | {} | {} |",
            f(walk),
            f(bm25),
            f(ranked),
            f(top),
            f(whole)
        );
    }
}

/// p50 and p95 of `runs` runs of `f` in ms, after one run to warm up.
fn timed(runs: usize, mut f: impl FnMut()) -> (f64, f64) {
    f();
    let mut ms: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() as f64 * q).ceil() as usize).clamp(1, ms.len()) - 1];
    (at(0.5), at(0.95))
}
