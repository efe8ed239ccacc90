//! The `sessiondb serve` benchmark of issue 6: `cargo bench --bench serve`.
//!
//! The server runs in this process on a free loopback port against a temporary database; the
//! clients speak HTTP/1.1 with kept-alive connections over `std::net`.
//!
//! * **append**: 40 batches of 500 entries (alternating user prompts and assistant replies of
//!   about 1 KB each with uuids, one metadata record every 50: ~0.6 MB of JSON a batch) to one
//!   session that grows by each batch. Server-side time is the `Server-Timing` the server
//!   reports (body parse, checks, the IMMEDIATE transaction with dedup, catalog and queued
//!   search lines, commit); the round trip is also shown. Target: ≤ 10 ms server-side.
//! * **load**: `load` of a 4 MB session (the protocol's `load`: every entry as JSON), 30
//!   times. Target: ≤ 30 ms.
//! * **concurrent**: 8 clients, each appending 100-entry batches to its own session for
//!   `$SESSIONDB_BENCH_SECS` seconds (default 30); then every session is loaded and must
//!   hold exactly what its client appended, in order. Target: no error, no lost entry.

use serde_json::{json, Value};
use sessiondb::serve::http::{self, Config};
use sessiondb::Store;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TARGET_APPEND_MS: f64 = 10.0;
const TARGET_LOAD_MS: f64 = 30.0;

/// An HTTP/1.1 client on one kept-alive connection.
struct Client {
    reader: BufReader<TcpStream>,
    /// The `Host` the server answers to (its address).
    host: String,
}

struct Answer {
    status: u16,
    server_ms: Option<f64>,
    body: Vec<u8>,
}

impl Client {
    fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Client {
            reader: BufReader::new(stream),
            host: addr.to_string(),
        }
    }

    fn post(&mut self, path: &str, body: &[u8]) -> Answer {
        let stream = self.reader.get_mut();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            self.host,
            body.len()
        );
        stream.write_all(head.as_bytes()).expect("write");
        stream.write_all(body).expect("write");
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("status line");
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("status");
        let (mut length, mut server_ms) = (0usize, None);
        loop {
            line.clear();
            self.reader.read_line(&mut line).expect("header");
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let Some((k, v)) = l.split_once(':') else {
                continue;
            };
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().expect("length");
            } else if k.eq_ignore_ascii_case("server-timing") {
                server_ms = v
                    .trim()
                    .strip_prefix("store;dur=")
                    .and_then(|d| d.parse().ok());
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).expect("body");
        Answer {
            status,
            server_ms,
            body,
        }
    }
}

fn text(i: usize, words: usize) -> String {
    let vocabulary = [
        "refactor",
        "the",
        "parser",
        "so",
        "that",
        "streaming",
        "works",
        "with",
        "tokens",
        "and",
        "tests",
        "pass",
        "again",
        "fix",
        "cache",
        "invalidation",
        "in",
        "module",
    ];
    (0..words)
        .map(|w| vocabulary[(i * 7 + w * 13) % vocabulary.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// `n` entries shaped like transcript lines: a user prompt, an assistant reply, repeated,
/// with a metadata record every 50.
fn batch(session: &str, start: usize, n: usize) -> Vec<Value> {
    (start..start + n)
        .map(|i| {
            let uuid = format!("{session}-{i:08}");
            let parent = (i > 0).then(|| format!("{session}-{:08}", i - 1));
            if i % 50 == 49 {
                json!({"type": "last-prompt", "lastPrompt": text(i, 8), "sessionId": session})
            } else if i % 2 == 0 {
                json!({"parentUuid": parent, "isSidechain": false, "type": "user",
                       "message": {"role": "user", "content": text(i, 150)},
                       "uuid": uuid, "timestamp": "2026-12-01T14:00:00.000Z",
                       "cwd": "/home/dev/app", "sessionId": session, "version": "2.1.88",
                       "gitBranch": "main"})
            } else {
                json!({"parentUuid": parent, "isSidechain": false, "type": "assistant",
                       "message": {"id": format!("msg_{i}"), "type": "message",
                                   "role": "assistant", "model": "claude-sonnet-4-5",
                                   "content": [{"type": "text", "text": text(i, 150)}],
                                   "usage": {"input_tokens": 90, "output_tokens": 30}},
                       "uuid": uuid, "timestamp": "2026-12-01T14:00:01.000Z",
                       "cwd": "/home/dev/app", "sessionId": session, "version": "2.1.88",
                       "gitBranch": "main"})
            }
        })
        .collect()
}

fn append_body(session: &str, entries: &[Value]) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "key": {"project_key": "-bench", "session_id": session},
        "entries": entries,
    }))
    .expect("JSON")
}

fn stats(times: &mut [f64]) -> (f64, f64, f64) {
    times.sort_by(f64::total_cmp);
    let p = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    (p(0.0), p(0.5), p(0.95))
}

fn main() {
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let store = Store::open(scratch.path().join("bench.db")).expect("open");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            http::run(
                listener,
                Arc::new(sessiondb::Db::from(store)),
                Config::default(),
                async {
                    let _ = stopped.await;
                },
            )
            .await
            .expect("serve");
        });
    });

    // Append: 40 batches of 500 to one growing session.
    let mut client = Client::connect(addr);
    let (mut server_times, mut round_trips) = (Vec::new(), Vec::new());
    let mut bytes = 0;
    for b in 0..40 {
        let body = append_body("append", &batch("append", b * 500, 500));
        bytes = body.len();
        let t = Instant::now();
        let answer = client.post("/v1/store/append", &body);
        round_trips.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(
            answer.status,
            200,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        server_times.push(answer.server_ms.expect("server timing"));
    }
    let (best, median, p95) = stats(&mut server_times);
    let (rt_best, rt_median, _) = stats(&mut round_trips);
    println!(
        "append 500 entries ({:.2} MB body), 40 batches to a session growing to 20,000 rows: \
         server-side best {best:.2} ms, median {median:.2} ms, p95 {p95:.2} ms; round trip \
         best {rt_best:.2} ms, median {rt_median:.2} ms (target <= {TARGET_APPEND_MS} ms: {})",
        bytes as f64 / 1e6,
        if median <= TARGET_APPEND_MS {
            "met"
        } else {
            "MISSED"
        }
    );

    // Load: a 4 MB session.
    let mut n = 0;
    let mut size = 0;
    while size < 4_000_000 {
        let body = append_body("load", &batch("load", n, 500));
        size += body.len();
        n += 500;
        assert_eq!(client.post("/v1/store/append", &body).status, 200);
    }
    let key = br#"{"key":{"project_key":"-bench","session_id":"load"}}"#;
    let (mut server_times, mut round_trips) = (Vec::new(), Vec::new());
    let mut loaded = 0;
    for _ in 0..30 {
        let t = Instant::now();
        let answer = client.post("/v1/store/load", key);
        round_trips.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(answer.status, 200);
        server_times.push(answer.server_ms.expect("server timing"));
        loaded = answer.body.len();
    }
    let (best, median, p95) = stats(&mut server_times);
    let (rt_best, rt_median, _) = stats(&mut round_trips);
    println!(
        "load of a {:.1} MB session ({n} entries), 30 times: server-side best {best:.2} ms, \
         median {median:.2} ms, p95 {p95:.2} ms; round trip with the body read best \
         {rt_best:.2} ms, median {rt_median:.2} ms (target <= {TARGET_LOAD_MS} ms: {})",
        loaded as f64 / 1e6,
        if median <= TARGET_LOAD_MS {
            "met"
        } else {
            "MISSED"
        }
    );

    // Concurrent: 8 clients, each to its own session.
    let secs: u64 = std::env::var("SESSIONDB_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let workers: Vec<_> = (0..8)
        .map(|w| {
            std::thread::spawn(move || {
                let session = format!("client-{w}");
                let mut client = Client::connect(addr);
                let (mut sent, mut errors, mut batches) = (0usize, 0usize, 0usize);
                let mut times = Vec::new();
                while Instant::now() < deadline {
                    let body = append_body(&session, &batch(&session, sent, 100));
                    let t = Instant::now();
                    let answer = client.post("/v1/store/append", &body);
                    times.push(t.elapsed().as_secs_f64() * 1000.0);
                    if answer.status == 200 {
                        sent += 100;
                    } else {
                        errors += 1;
                    }
                    batches += 1;
                }
                (session, sent, errors, batches, times)
            })
        })
        .collect();
    let mut total = 0;
    let mut all_errors = 0;
    let mut lost = 0;
    let mut all_times = Vec::new();
    for worker in workers {
        let (session, sent, errors, batches, times) = worker.join().expect("worker");
        all_errors += errors;
        total += sent;
        all_times.extend(times);
        let key = format!(r#"{{"key":{{"project_key":"-bench","session_id":"{session}"}}}}"#);
        let answer = client.post("/v1/store/load", key.as_bytes());
        let entries: Value = serde_json::from_slice(&answer.body).expect("JSON");
        let got = entries["entries"].as_array().map_or(0, Vec::len);
        let expected = batch(&session, 0, sent);
        if entries["entries"] != Value::Array(expected) {
            lost += sent.abs_diff(got).max(1);
        }
        let _ = batches;
    }
    let (_, median, p95) = stats(&mut all_times);
    println!(
        "8 concurrent clients x {secs} s, 100-entry batches to their own sessions: {total} \
         entries in {} batches ({:.0} entries/s), round trip median {median:.1} ms, p95 \
         {p95:.1} ms; errors {all_errors}, lost or out-of-order entries {lost} (target: none: {})",
        all_times.len(),
        total as f64 / secs as f64,
        if all_errors == 0 && lost == 0 {
            "met"
        } else {
            "MISSED"
        }
    );
    let _ = stop.send(());
    server.join().expect("server thread");
}
