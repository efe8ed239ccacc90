//! The catalog and search benchmark of issue 5: `cargo bench --bench catalog`.
//!
//! On a projects tree (`$SESSIONDB_BENCH_CATALOG_TREE`, or the first non-flag argument;
//! build the 10,000-session, 1.1 GB one with
//! `python3 tools/gen_sessions.py target/sdb-cat/projects 10000 1100M 1`), imported into
//! `$SESSIONDB_BENCH_CATALOG_DB` (kept between runs: a second import only stats the files)
//! or a temporary database, it times, warm, median of `$SESSIONDB_BENCH_RUNS` runs
//! (default 7), each including the JSON encoding the CLI does:
//!
//! * `sessions --json --limit 50` and the full listing;
//! * `messages` of the largest session;
//! * `search` for a two-word query;
//!
//! and reports how much the catalog and the FTS index add to the database (`dbstat`). In the
//! same run, when installed, it times the Agent SDK (`python3` with `claude_agent_sdk`:
//! `list_sessions()` and `get_session_messages` of the same session) and `rg` over the tree.
//! Without a tree, a small one (500 sessions, 48 MB) is generated from ../shared/corpus.

use sessiondb::import::import_paths;
use sessiondb::model::NoProgress;
use sessiondb::query::{self, SessionFilter};
use sessiondb::search::{self, SearchQuery};
use sessiondb::{sdk, Store};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const QUERY: &str = "failing tests";

fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn tree() -> (PathBuf, Option<tempfile::TempDir>) {
    let arg = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if let Some(dir) = std::env::var_os("SESSIONDB_BENCH_CATALOG_TREE")
        .map(PathBuf::from)
        .or(arg.map(PathBuf::from))
    {
        return (dir, None);
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let out = tmp.path().join("projects");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new("python3")
        .arg(root.join("tools/gen_sessions.py"))
        .arg(&out)
        .args(["500", "48M", "1"])
        .status()
        .expect("python3 runs tools/gen_sessions.py");
    assert!(status.success(), "tools/gen_sessions.py failed");
    (out, Some(tmp))
}

fn sdk_available() -> bool {
    Command::new("python3")
        .args(["-c", "import claude_agent_sdk"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Median seconds of an SDK call, run by python3 with CLAUDE_CONFIG_DIR = the tree's parent.
fn sdk_time(tree: &Path, call: &str, runs: usize) -> Option<f64> {
    let script = format!(
        "import time, statistics, claude_agent_sdk as s\n\
         ts = []\n\
         for _ in range({runs}):\n    t = time.perf_counter(); r = {call}; ts.append(time.perf_counter() - t)\n\
         print(statistics.median(ts), len(r))"
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .env("CLAUDE_CONFIG_DIR", tree.parent()?)
        .env("TZ", "UTC")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().next()?.parse().ok()
}

fn main() {
    let runs: usize = std::env::var("SESSIONDB_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7)
        .max(1);
    let (tree, _tmp_tree) = tree();
    let scratch = tempfile::tempdir().expect("temp dir");
    let db = std::env::var_os("SESSIONDB_BENCH_CATALOG_DB")
        .map(PathBuf::from)
        .unwrap_or_else(|| scratch.path().join("bench.db"));
    let store = Store::open(&db).expect("open");
    let t = Instant::now();
    let report = import_paths(&store, std::slice::from_ref(&tree), &NoProgress).expect("import");
    println!(
        "tree {}: {} files, {:.1} MB read now; import {:.1} s",
        tree.display(),
        report.files,
        report.bytes_read as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let conn = store.reader().expect("reader");
    if let Ok(mmap) = std::env::var("SESSIONDB_BENCH_MMAP") {
        conn.pragma_update(None, "mmap_size", mmap).expect("mmap");
    }
    let total = query::list_sessions(&conn, &SessionFilter::default())
        .expect("list")
        .len();
    let limit50 = median_ms(runs, || {
        let l = query::list_sessions(
            &conn,
            &SessionFilter {
                limit: Some(50),
                ..SessionFilter::default()
            },
        )
        .expect("list");
        std::hint::black_box(serde_json::to_vec(&l).expect("json"));
    });
    let full = median_ms(runs, || {
        let l = query::list_sessions(&conn, &SessionFilter::default()).expect("list");
        std::hint::black_box(serde_json::to_vec(&l).expect("json"));
    });
    let (largest_id, largest_project, largest_size): (String, String, i64) = conn
        .query_row(
            "SELECT c.session_id, p.key, c.file_size FROM catalog c
             JOIN projects p ON p.id = c.project_id ORDER BY c.file_size DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("largest");
    let session =
        query::resolve_session(&conn, &format!("{largest_project}/{largest_id}")).expect("session");
    let mut count = 0;
    let messages = median_ms(runs, || {
        let m = sdk::get_session_messages(&conn, &session, None, 0).expect("messages");
        count = m.len();
        std::hint::black_box(serde_json::to_vec(&m).expect("json"));
    });
    let mut hits = 0;
    let search_ms = median_ms(runs, || {
        let h = search::search(
            &conn,
            &SearchQuery {
                text: QUERY.into(),
                ..SearchQuery::default()
            },
        )
        .expect("search");
        hits = h.len();
        std::hint::black_box(serde_json::to_vec(&h).expect("json"));
    });
    let sizes: Vec<(String, i64)> = conn
        .prepare("SELECT name, sum(pgsize) FROM dbstat GROUP BY name")
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()
        })
        .unwrap_or_default();
    let added: i64 = sizes
        .iter()
        .filter(|(n, _)| n.starts_with("rows_fts") || n.contains("catalog"))
        .map(|(_, s)| s)
        .sum();
    let all: i64 = sizes.iter().map(|(_, s)| s).sum();

    println!("| measure | sessiondb | goal |");
    println!("|---|---|---|");
    println!("| `sessions --json --limit 50` ({total} listed) | {limit50:.2} ms | ≤ 50 ms |");
    println!("| full listing, JSON | {full:.1} ms | ≤ 200 ms |");
    println!(
        "| `messages` of the largest session ({:.2} MB, {count} messages) | {messages:.2} ms | ≤ 8 ms |",
        largest_size as f64 / 1e6
    );
    println!("| `search \"{QUERY}\"` ({hits} hits) | {search_ms:.2} ms | ≤ 50 ms |");
    if all > 0 {
        println!(
            "| catalog + FTS index | {:.1} MB of {:.1} MB: +{:.1} % | ≤ 35 % |",
            added as f64 / 1e6,
            all as f64 / 1e6,
            100.0 * added as f64 / (all - added) as f64
        );
    }
    if sdk_available() {
        if let Some(s) = sdk_time(&tree, "s.list_sessions()", 3) {
            println!(
                "| SDK `list_sessions()` | {:.0} ms: sessiondb full listing {:.0}× faster | ≥ 100× |",
                s * 1000.0,
                s * 1000.0 / full
            );
        }
        let call = format!("s.get_session_messages('{largest_id}')");
        if let Some(s) = sdk_time(&tree, &call, 5) {
            println!(
                "| SDK `get_session_messages` | {:.1} ms: sessiondb {:.0}× faster | ≥ 10× |",
                s * 1000.0,
                s * 1000.0 / messages
            );
        }
    } else {
        println!("(claude_agent_sdk not installed: no SDK comparison)");
    }
    let rg = Command::new("rg")
        .args(["-l", "-i", "-F", QUERY])
        .arg(&tree)
        .output();
    match rg {
        Ok(_) => {
            let rg_ms = median_ms(3, || {
                let out = Command::new("rg")
                    .args(["-l", "-i", "-F", QUERY])
                    .arg(&tree)
                    .output()
                    .expect("rg");
                std::hint::black_box(out);
            });
            println!(
                "| `rg -l -i -F \"{QUERY}\"` over the tree | {rg_ms:.0} ms: search {:.0}× faster | ≥ 20× |",
                rg_ms / search_ms
            );
        }
        Err(_) => println!("(rg not installed: no ripgrep comparison)"),
    }
}
