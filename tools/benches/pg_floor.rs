//! PostgreSQL's own floor under issue 17's append target: `cargo bench --bench pg_floor`.
//!
//! The target is a 500-entry SessionStore append through `serve` at p50 ≤ 20 ms with 8
//! clients. Each client sends its next append as soon as the last one is answered, so by
//! Little's law the p50 can only be that low when the store takes at least 8 / 20 ms = 400
//! appends a second. This bench asks what PostgreSQL itself takes on this machine, with none
//! of sessiondb in the way: no HTTP, no JSON reading, no uuid check, no catalog, one
//! connection per client in this process, statements prepared once, binary parameters, the
//! same 500 lines each time.
//!
//! * **rows**: the 500 lines as 500 rows (transcript, ordinal, bytes) of a table with no
//!   index at all, in one `INSERT … SELECT FROM unnest($2::bytea[])`: less than the store's
//!   `rows` table, which also has seven indexes and 20 more columns.
//! * **batch**: the 500 lines as one `bytea` value, newline-joined, lz4-compressed: a store
//!   that kept each append as one value and split it into rows later.
//!
//! Each runs with 1 and with 8 clients for `$SESSIONDB_BENCH_SECS` seconds (default 8),
//! printing appends per second and the p50. The database is `$SESSIONDB_BENCH_PG` (a
//! PostgreSQL URL; `tools/pg/cluster.sh start DIR` makes a throwaway one); the two tables
//! are made in a schema of their own, dropped at the end. The lines are 500 lines of 200 to
//! 6,000 bytes spread evenly over the transcripts of `$SESSIONDB_BENCH_CORPUS` (default
//! ../shared/corpus/claude-code), as lines of real sessions compress; with
//! `SESSIONDB_BENCH_LINES=synthetic` they are `tools/bench/serve_append.py`'s (one sentence
//! repeated, which lz4 shrinks about fiftyfold). Not a test: the figures depend on the load.

use postgres::{Client, NoTls};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const SCHEMA: &str = "sessiondb_pg_floor";
const LINES: usize = 500;

fn main() {
    let Ok(url) = std::env::var("SESSIONDB_BENCH_PG") else {
        eprintln!("pg_floor: set SESSIONDB_BENCH_PG to a PostgreSQL URL (tools/pg/cluster.sh start DIR makes one)");
        std::process::exit(2);
    };
    let secs: f64 = std::env::var("SESSIONDB_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8.0);
    let lines = match std::env::var("SESSIONDB_BENCH_LINES").as_deref() {
        Ok("synthetic") => synthetic_lines(),
        _ => corpus_lines(&corpus_dir()),
    };
    let blob = lines.join(&b'\n');
    println!(
        "{} lines, {:.2} MB; target: 8 clients at p50 <= 20 ms needs >= 400 appends/s",
        lines.len(),
        blob.len() as f64 / 1e6
    );
    let mut setup = Client::connect(&url, NoTls).expect("connect");
    setup
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {SCHEMA} CASCADE; CREATE SCHEMA {SCHEMA};
             CREATE TABLE {SCHEMA}.rows (transcript bigint, ordinal bigint, raw bytea);
             CREATE TABLE {SCHEMA}.batches (transcript bigint, body bytea COMPRESSION lz4);"
        ))
        .expect("make the tables");
    for shape in ["rows", "batch"] {
        for clients in [1, 8] {
            let (appends, p50) = run(&url, shape, clients, secs, &lines, &blob);
            println!(
                "{shape:5} {clients} client(s): {:6.0} appends/s, p50 {p50:6.1} ms",
                appends as f64 / secs
            );
        }
    }
    setup
        .batch_execute(&format!("DROP SCHEMA {SCHEMA} CASCADE"))
        .expect("drop the tables");
}

/// Runs `clients` connections storing the lines in `shape` for `secs` seconds; returns how
/// many appends were stored and their median time.
fn run(
    url: &str,
    shape: &str,
    clients: usize,
    secs: f64,
    lines: &[Vec<u8>],
    blob: &[u8],
) -> (usize, f64) {
    let mut times: Vec<f64> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..clients)
            .map(|client| {
                scope.spawn(move || {
                    let mut db = Client::connect(url, NoTls).expect("connect");
                    let raws: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
                    let insert = db
                        .prepare(&if shape == "rows" {
                            format!(
                                "INSERT INTO {SCHEMA}.rows (transcript, ordinal, raw)
                                 SELECT $1, o, r FROM unnest($2::bytea[]) WITH ORDINALITY AS u(r, o)"
                            )
                        } else {
                            format!("INSERT INTO {SCHEMA}.batches (transcript, body) VALUES ($1, $2)")
                        })
                        .expect("prepare");
                    let mut times = Vec::new();
                    let start = Instant::now();
                    let mut transcript = client as i64 * 1_000_000_000;
                    while start.elapsed() < Duration::from_secs_f64(secs) {
                        transcript += 1;
                        let t = Instant::now();
                        if shape == "rows" {
                            db.execute(&insert, &[&transcript, &raws])
                        } else {
                            db.execute(&insert, &[&transcript, &blob])
                        }
                        .expect("insert");
                        times.push(t.elapsed().as_secs_f64() * 1000.0);
                    }
                    times
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("client"))
            .collect()
    });
    times.sort_by(f64::total_cmp);
    (
        times.len(),
        times.get(times.len() / 2).copied().unwrap_or(f64::NAN),
    )
}

fn corpus_dir() -> PathBuf {
    std::env::var_os("SESSIONDB_BENCH_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/claude-code"),
        PathBuf::from,
    )
}

/// 500 lines of 200 to 6,000 bytes spread evenly over the transcripts of the folder (every
/// n-th such line of all of them, in name order): real lines of many sessions.
fn corpus_lines(dir: &Path) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let all: Vec<Vec<u8>> = files
        .iter()
        .flat_map(|f| {
            std::fs::read(f)
                .unwrap_or_default()
                .split(|b| *b == b'\n')
                .filter(|l| (200..6000).contains(&l.len()))
                .map(<[u8]>::to_vec)
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        all.len() >= LINES,
        "{}: fewer than {LINES} lines of 200 to 6,000 bytes",
        dir.display()
    );
    let every = all.len() / LINES;
    all.into_iter().step_by(every).take(LINES).collect()
}

/// The lines `tools/bench/serve_append.py` sends: user and assistant entries of one sentence
/// repeated 24 times, about 1.2 KB each.
fn synthetic_lines() -> Vec<Vec<u8>> {
    let words = ["refactor the parser so that streaming works"; 24].join(" ");
    (0..LINES)
        .map(|i| {
            let (role, content) = if i % 2 == 0 {
                ("user", serde_json::json!(format!("{i} {words}")))
            } else {
                (
                    "assistant",
                    serde_json::json!([{"type": "text", "text": words}]),
                )
            };
            let parent = (i > 0).then(|| format!("client-0-{}", i - 1));
            serde_json::to_vec(&serde_json::json!({
                "type": role, "uuid": format!("client-0-{i}"), "parentUuid": parent,
                "sessionId": "client-0", "timestamp": "2026-12-03T16:00:00.000Z",
                "message": {"role": role, "content": content},
            }))
            .expect("json")
        })
        .collect()
}
