//! The Rust library's own time for what the Python package calls (issue 29's yardstick).
//! Built as an example of the Python package's crate, so that it links the library exactly
//! as the wheel does (same dependencies, features and profile):
//!
//! ```sh
//! cargo run --release --manifest-path packages/python/Cargo.toml --example library_speed -- DB [--session ID] [--runs N]
//! ```
//!
//! On a store (a SQLite file or a PostgreSQL URL), for one session (default: the largest
//! transcript, as `../shared/bench/perf.sh` picks it), it times, warm, what
//! `sessiondb.Store.messages()` and `sessiondb.SessionStore.load()` run under the hood:
//!
//! * `messages`: [`SessionDb::session`] then [`SessionDb::messages`];
//! * `load`: [`sessiondb::streams::load`] of the session's main stream (the stored
//!   bytes, which is all the library hands back);
//! * `load_values`: the same, then the bytes parsed into `serde_json::Value`s: what Rust
//!   itself pays to turn them into objects, for comparison with Python's;
//!
//! and prints one JSON object (`session`, `project`, `messages_ms`, `load_ms`,
//! `load_values_ms`: wall-clock medians of `--runs`, default 50; the same names with `_cpu`
//! before `_ms`: medians of the CPU time the process used, all its threads, as Python's
//! `time.process_time` counts it (the library reads a long session on several threads),
//! `null` where the system has no such clock) for `tools/bench/python_package.py`,
//! which sets it beside the Python calls in the same run. On a loaded machine the wall
//! clock counts the time other processes hold the cores; the CPU time does not. Not a test:
//! the figures depend on the machine's load.

use sessiondb::query::SessionFilter;
use sessiondb::streams::{self, StreamKey};
use sessiondb::SessionDb;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut db, mut session, mut runs) = (None, None, 50usize);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--session" => session = args.next(),
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N"),
            _ => db = Some(a),
        }
    }
    let Some(db) = db else {
        eprintln!("usage: library_speed DB [--session ID] [--runs N]");
        std::process::exit(2);
    };
    let store = SessionDb::open_read(&db).expect("the store opens");
    let id = session.unwrap_or_else(|| {
        store
            .sessions(&SessionFilter::default())
            .expect("sessions list")
            .into_iter()
            .max_by_key(|s| s.file_size)
            .expect("a store with sessions")
            .session_id
    });
    let found = store.session(&id).expect("the session resolves");
    let key = StreamKey {
        project_key: found.project.clone(),
        session_id: found.session_id.clone(),
        subpath: None,
    };
    let (messages_ms, messages_cpu_ms) = median(runs, || {
        let s = store.session(&id).expect("resolves");
        assert!(!store.messages(&s).expect("messages").is_empty());
    });
    let (load_ms, load_cpu_ms) = median(runs, || {
        assert!(streams::load(store.db(), &key).expect("load").is_some());
    });
    let (load_values_ms, load_values_cpu_ms) = median(runs, || {
        let bytes = streams::load(store.db(), &key)
            .expect("load")
            .expect("a stream");
        let values: Vec<serde_json::Value> = serde_json::from_slice(&bytes).expect("JSON");
        assert!(!values.is_empty());
    });
    println!(
        "{}",
        serde_json::json!({
            "session": found.session_id,
            "project": found.project,
            "messages_ms": messages_ms,
            "load_ms": load_ms,
            "load_values_ms": load_values_ms,
            "messages_cpu_ms": messages_cpu_ms,
            "load_cpu_ms": load_cpu_ms,
            "load_values_cpu_ms": load_values_cpu_ms,
        })
    );
}

/// The medians of `runs` timed calls of `f` (after one untimed), in ms: wall clock, and
/// the process's CPU time when the system tells it.
fn median(runs: usize, mut f: impl FnMut()) -> (f64, Option<f64>) {
    f();
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    for _ in 0..runs.max(1) {
        let (t, c) = (Instant::now(), process_cpu_ns());
        f();
        wall.push(t.elapsed().as_secs_f64() * 1000.0);
        if let (Some(before), Some(after)) = (c, process_cpu_ns()) {
            cpu.push(after.saturating_sub(before) as f64 / 1e6);
        }
    }
    let mid = |mut ms: Vec<f64>| {
        ms.sort_by(f64::total_cmp);
        ms.get(ms.len() / 2).copied()
    };
    (mid(wall).expect("a run"), mid(cpu))
}

/// Nanoseconds the process's threads have run on a CPU (`clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`).
#[cfg(unix)]
fn process_cpu_ns() -> Option<u64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill in.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    (rc == 0).then(|| {
        u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
    })
}

#[cfg(not(unix))]
fn process_cpu_ns() -> Option<u64> {
    None
}
