//! `sessiondb serve`: the SessionStore endpoints (append, load, dedup, entries without uuid,
//! mtimes, delete cascade, bad input, token), a mirrored session read like an imported one,
//! the read endpoints answering what the CLI prints with `--json`, and the binary (loopback
//! rule, graceful shutdown with an append in flight).

use crate::support::*;
use serde_json::{json, Value};
use sessiondb::serve::http::{self, Config};
use sessiondb::Store;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

/// A server on a free loopback port, in this process, stopped on drop.
pub(crate) struct Server {
    pub(crate) addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    pub(crate) fn start(store: Store, config: Config) -> Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                http::run(
                    listener,
                    Arc::new(sessiondb::Db::from(store)),
                    config,
                    async {
                        let _ = stopped.await;
                    },
                )
                .await
                .expect("serve");
            });
        });
        Server {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One HTTP/1.1 request on a new connection, as a well-behaved client sends it (`Host`, and
/// `Content-Type: application/json` on a POST unless `headers` name one): (status, body).
pub(crate) fn request(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    let host = addr.to_string();
    let mut all = vec![("Host", host.as_str())];
    if method == "POST"
        && !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        all.push(("Content-Type", "application/json"));
    }
    all.extend_from_slice(headers);
    raw_request(addr, method, path, &all, body)
}

/// One HTTP/1.1 request on a new connection with exactly `headers` (besides
/// `Connection: close` and `Content-Length`): (status, body).
pub(crate) fn raw_request(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("write head");
    // A server that answers early (body too large) may close before the body is sent.
    let _ = stream.write_all(body);
    read_response(stream)
}

pub(crate) fn read_response(stream: TcpStream) -> (u16, Vec<u8>) {
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).expect("status line");
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let mut length = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse::<usize>().ok();
            }
        }
    }
    let mut body = Vec::new();
    match length {
        Some(n) => {
            body.resize(n, 0);
            reader.read_exact(&mut body).expect("body");
        }
        None => {
            reader.read_to_end(&mut body).expect("body");
        }
    }
    (status, body)
}

pub(crate) fn post(server: &Server, path: &str, body: &Value) -> (u16, Value) {
    let (status, bytes) = request(server.addr, "POST", path, &[], body.to_string().as_bytes());
    (
        status,
        serde_json::from_slice(&bytes).expect("a JSON answer"),
    )
}

pub(crate) fn ok(server: &Server, path: &str, body: Value) -> Value {
    let (status, answer) = post(server, path, &body);
    assert_eq!(status, 200, "{path} {body}: {answer}");
    answer
}

pub(crate) fn key(session: &str, subpath: Option<&str>) -> Value {
    match subpath {
        Some(s) => json!({"project_key": "proj", "session_id": session, "subpath": s}),
        None => json!({"project_key": "proj", "session_id": session}),
    }
}

pub(crate) fn append(server: &Server, key: Value, entries: Value) -> Value {
    ok(
        server,
        "/v1/store/append",
        json!({"key": key, "entries": entries}),
    )
}

pub(crate) fn load(server: &Server, key: Value) -> Value {
    ok(server, "/v1/store/load", json!({ "key": key }))["entries"].clone()
}

pub(crate) fn temp_server(config: Config) -> (tempfile::TempDir, Server) {
    let (dir, store) = temp_store();
    (dir, Server::start(store, config))
}

pub(crate) fn user(uuid: &str, text: &str) -> Value {
    json!({"type": "user", "uuid": uuid, "message": {"role": "user", "content": text}})
}

#[test]
fn append_load_dedup_and_entries_without_uuid() {
    let (_dir, server) = temp_server(Config::default());
    let k = key("s", None);
    assert_eq!(load(&server, k.clone()), Value::Null);
    // An empty batch creates nothing.
    append(&server, k.clone(), json!([]));
    assert_eq!(load(&server, k.clone()), Value::Null);
    let title = json!({"type": "custom-title", "customTitle": "T", "x": [1, 2.5, null]});
    let a = append(
        &server,
        k.clone(),
        json!([user("u1", "hi"), title, user("u1", "again")]),
    );
    assert_eq!(
        (a["appended"].clone(), a["duplicates"].clone()),
        (json!(2), json!(1))
    );
    let b = append(
        &server,
        k.clone(),
        json!([user("u1", "retry"), title, user("u2", "next")]),
    );
    assert_eq!(
        (b["appended"].clone(), b["duplicates"].clone()),
        (json!(2), json!(1))
    );
    assert_eq!(
        load(&server, k.clone()),
        json!([user("u1", "hi"), title, title, user("u2", "next")])
    );
    // The same uuid in another stream (a sub-agent, another session) is not a duplicate.
    append(
        &server,
        key("s", Some("subagents/agent-1")),
        json!([user("u1", "sub")]),
    );
    append(&server, key("t", None), json!([user("u1", "other")]));
    assert_eq!(load(&server, key("t", None)), json!([user("u1", "other")]));
    assert_eq!(
        load(&server, key("s", Some("subagents/agent-1"))),
        json!([user("u1", "sub")])
    );
    assert_eq!(
        load(&server, key("s", Some("subagents/agent-2"))),
        Value::Null
    );
    // Numbers keep their text: a float stays a float, a big integer stays exact.
    let raw = br#"{"key":{"project_key":"proj","session_id":"n"},"entries":[{"type":"x","f":1.0,"big":123456789012345678901234567890,"s":"\u00e9\n"}]}"#;
    let (status, _) = request(server.addr, "POST", "/v1/store/append", &[], raw);
    assert_eq!(status, 200);
    let (_, body) = request(
        server.addr,
        "POST",
        "/v1/store/load",
        &[],
        br#"{"key":{"project_key":"proj","session_id":"n"}}"#,
    );
    assert_eq!(
        std::str::from_utf8(&body).unwrap(),
        r#"{"entries":[{"type":"x","f":1.0,"big":123456789012345678901234567890,"s":"\u00e9\n"}]}"#
    );
}

#[test]
fn mtimes_are_epoch_ms_and_strictly_increasing() {
    let (_dir, server) = temp_server(Config::default());
    let mut last = 0;
    for i in 0..40 {
        let a = append(&server, key("s", None), json!([{"type": "x", "i": i}]));
        let mtime = a["mtime"].as_i64().expect("mtime");
        assert!(mtime > last, "{mtime} after {last}");
        assert!(mtime > 1_000_000_000_000);
        last = mtime;
    }
    let sub = append(
        &server,
        key("s", Some("subagents/agent-1")),
        json!([{"type": "x"}]),
    );
    assert!(sub["mtime"].as_i64().unwrap() > 1_000_000_000_000);
    let listed = ok(
        &server,
        "/v1/store/list_sessions",
        json!({"project_key": "proj"}),
    );
    // A sub-stream append does not bump the main stream's mtime.
    assert_eq!(
        listed["sessions"],
        json!([{"session_id": "s", "mtime": last}])
    );
    let unknown = ok(
        &server,
        "/v1/store/list_sessions",
        json!({"project_key": "nope"}),
    );
    assert_eq!(unknown["sessions"], json!([]));
}

#[test]
fn delete_cascades_from_the_main_key_only() {
    let (_dir, server) = temp_server(Config::default());
    let other_project = json!({"project_key": "other", "session_id": "s"});
    for k in [
        key("s", None),
        key("s", Some("subagents/agent-1")),
        key("s", Some("subagents/workflows/w/agent-2")),
        key("t", None),
        other_project.clone(),
    ] {
        append(&server, k, json!([{"type": "x"}]));
    }
    let subkeys = |s: &str| {
        ok(
            &server,
            "/v1/store/list_subkeys",
            json!({"key": {"project_key": "proj", "session_id": s}}),
        )["subkeys"]
            .clone()
    };
    assert_eq!(
        subkeys("s"),
        json!(["subagents/agent-1", "subagents/workflows/w/agent-2"])
    );
    assert_eq!(subkeys("t"), json!([]));
    ok(
        &server,
        "/v1/store/delete",
        json!({"key": key("s", Some("subagents/agent-1"))}),
    );
    assert_eq!(subkeys("s"), json!(["subagents/workflows/w/agent-2"]));
    assert_eq!(load(&server, key("s", None)), json!([{"type": "x"}]));
    ok(&server, "/v1/store/delete", json!({"key": key("s", None)}));
    assert_eq!(load(&server, key("s", None)), Value::Null);
    assert_eq!(
        load(&server, key("s", Some("subagents/workflows/w/agent-2"))),
        Value::Null
    );
    assert_eq!(subkeys("s"), json!([]));
    assert_eq!(load(&server, key("t", None)), json!([{"type": "x"}]));
    assert_eq!(load(&server, other_project), json!([{"type": "x"}]));
    let listed = ok(
        &server,
        "/v1/store/list_sessions",
        json!({"project_key": "proj"}),
    );
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 1);
    // Deleting what was never written is fine.
    ok(
        &server,
        "/v1/store/delete",
        json!({"key": key("never", None)}),
    );
}

#[test]
fn bad_input_is_a_4xx_naming_the_problem_and_changes_nothing() {
    let (dir, server) = temp_server(Config {
        body_limit: 4096,
        ..Config::default()
    });
    append(&server, key("s", None), json!([user("a", "kept")]));
    let before = load(&server, key("s", None));
    let cases: Vec<(Vec<u8>, u16, &str)> = vec![
        (
            json!({"key": key("s", Some("../x")), "entries": [{"type": "x"}]})
                .to_string()
                .into_bytes(),
            400,
            "..",
        ),
        (
            json!({"key": key("s", Some("/etc/x")), "entries": [{"type": "x"}]})
                .to_string()
                .into_bytes(),
            400,
            "absolute",
        ),
        (
            json!({"key": key("s", Some("a\u{0}b")), "entries": [{"type": "x"}]})
                .to_string()
                .into_bytes(),
            400,
            "NUL",
        ),
        (
            json!({"key": key("s", None), "entries": [{"type": "x"}, {"uuid": "b"}]})
                .to_string()
                .into_bytes(),
            400,
            "type",
        ),
        (
            json!({"key": key("s", None), "entries": [{"type": 3}]})
                .to_string()
                .into_bytes(),
            400,
            "type",
        ),
        (
            json!({"key": key("s", None), "entries": [[1]]})
                .to_string()
                .into_bytes(),
            400,
            "object",
        ),
        (b"{\"key\": {".to_vec(), 400, "invalid JSON"),
        (
            json!({"key": key("s", None), "entries": [{"type": "x", "pad": "y".repeat(5000)}]})
                .to_string()
                .into_bytes(),
            413,
            "limit",
        ),
    ];
    for (body, want, needle) in cases {
        let (status, answer) = request(server.addr, "POST", "/v1/store/append", &[], &body);
        let answer: Value = serde_json::from_slice(&answer).expect("a JSON error");
        assert_eq!(status, want, "{answer}");
        let message = answer["error"].as_str().expect("error message");
        assert!(
            message.contains(needle),
            "{message:?} should name {needle:?}"
        );
    }
    for path in ["/v1/store/load", "/v1/store/delete"] {
        let (status, _) = post(&server, path, &json!({"key": key("s", Some("a/../b"))}));
        assert_eq!(status, 400, "{path}");
    }
    assert_eq!(load(&server, key("s", None)), before);
    let store = Store::open(dir.path().join("sessions.db")).expect("open");
    let rows: i64 = store
        .reader()
        .unwrap()
        .query_row("SELECT count(*) FROM rows", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 1);
}

#[test]
fn every_request_needs_the_token() {
    let (_dir, server) = temp_server(Config {
        token: Some("s3cret-token".into()),
        ..Config::default()
    });
    let body = json!({"key": key("s", None)}).to_string();
    for headers in [
        vec![],
        vec![("Authorization", "Bearer s3cret-toke")],
        vec![("Authorization", "Bearer s3cret-token2")],
        vec![("Authorization", "s3cret-token")],
    ] {
        let (status, answer) = request(
            server.addr,
            "POST",
            "/v1/store/load",
            &headers,
            body.as_bytes(),
        );
        assert_eq!(status, 401, "{headers:?}");
        assert!(serde_json::from_slice::<Value>(&answer).unwrap()["error"].is_string());
    }
    let (status, _) = request(server.addr, "GET", "/v1/sessions", &[], b"");
    assert_eq!(status, 401);
    let auth = [("Authorization", "Bearer s3cret-token")];
    let (status, answer) = request(
        server.addr,
        "POST",
        "/v1/store/load",
        &auth,
        body.as_bytes(),
    );
    assert_eq!((status, answer), (200, br#"{"entries":null}"#.to_vec()));
}

#[test]
fn summaries_are_stored_verbatim_with_a_compare_and_swap() {
    let (_dir, server) = temp_server(Config::default());
    let session = json!({"project_key": "proj", "session_id": "s"});
    append(&server, key("s", None), json!([user("a", "one")]));
    let pending = ok(
        &server,
        "/v1/store/summary/pending",
        json!({ "key": session }),
    )["pending"]
        .clone();
    assert_eq!(pending["summary"], Value::Null);
    assert_eq!(pending["entries"], json!([user("a", "one")]));
    let data = json!({"opaque": {"kept": [1, "as", true]}, "z": 1, "a": 2});
    let put = |expect: &Value, through: &Value| {
        post(
            &server,
            "/v1/store/summary/put",
            &json!({"key": session, "expect": expect, "through": through,
                    "mtime": pending["mtime"], "data": data}),
        )
        .0
    };
    assert_eq!(put(&pending["watermark"], &pending["through"]), 200);
    // A second put from the same starting point is a conflict: someone folded first.
    assert_eq!(put(&pending["watermark"], &pending["through"]), 409);
    let summaries = ok(
        &server,
        "/v1/store/list_session_summaries",
        json!({"project_key": "proj"}),
    );
    assert_eq!(
        summaries["summaries"],
        json!([{"session_id": "s", "mtime": pending["mtime"], "data": data}])
    );
    append(&server, key("s", None), json!([user("b", "two")]));
    let next = ok(
        &server,
        "/v1/store/summary/pending",
        json!({ "key": session }),
    )["pending"]
        .clone();
    assert_eq!(next["summary"]["data"], data);
    assert_eq!(next["entries"], json!([user("b", "two")]));
    assert!(next["mtime"].as_i64() > pending["mtime"].as_i64());
    // `fold: true` makes the append answer the pending fold itself.
    let folded = ok(
        &server,
        "/v1/store/append",
        json!({"key": key("s", None), "entries": [user("c", "three")], "fold": true}),
    );
    let asked = ok(
        &server,
        "/v1/store/summary/pending",
        json!({ "key": session }),
    );
    assert_eq!(folded["pending"], asked["pending"]);
    assert_eq!(
        folded["pending"]["entries"],
        json!([user("b", "two"), user("c", "three")])
    );
    let sub = ok(
        &server,
        "/v1/store/append",
        json!({"key": key("s", Some("subagents/agent-1")), "entries": [user("d", "x")], "fold": true}),
    );
    assert!(sub.get("pending").is_none(), "sub-streams have no summary");
    ok(&server, "/v1/store/delete", json!({"key": key("s", None)}));
    let summaries = ok(
        &server,
        "/v1/store/list_session_summaries",
        json!({"project_key": "proj"}),
    );
    assert_eq!(summaries["summaries"], json!([]));
}

fn fixture_project() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sample-projects/-home-dev-weather-app"
    ))
}

fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

fn get(server: &Server, path: &str) -> Vec<u8> {
    let (status, body) = request(server.addr, "GET", path, &[], b"");
    assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
    body
}

/// The sample session mirrored through the API reads like the same files imported, and the
/// read endpoints answer exactly what the CLI prints with --json.
#[test]
fn a_mirrored_session_reads_like_an_imported_one() {
    let sid = "8e1f3a52-6c7b-4091-8b2c-3d4e5f6a7b82";
    let project = fixture_project();
    let (imported_dir, imported) = temp_store();
    import(&imported, &[project]);
    drop(imported);
    let (mirrored_dir, mirrored) = temp_store();
    let server = Server::start(mirrored, Config::default());
    let pkey = "-home-dev-weather-app";
    let main_entries = json_lines(&project.join(format!("{sid}.jsonl")));
    for batch in main_entries.chunks(3) {
        append(
            &server,
            json!({"project_key": pkey, "session_id": sid}),
            Value::Array(batch.to_vec()),
        );
    }
    let agent = format!("{sid}/subagents/agent-a1b2c3d4e5f60718");
    let mut sub_entries = json_lines(&project.join(format!("{agent}.jsonl")));
    let mut meta: Value = serde_json::from_slice(
        &std::fs::read(project.join(format!("{agent}.meta.json"))).expect("meta"),
    )
    .expect("meta JSON");
    meta["type"] = json!("agent_metadata");
    sub_entries.push(meta);
    append(
        &server,
        json!({"project_key": pkey, "session_id": sid, "subpath": "subagents/agent-a1b2c3d4e5f60718"}),
        Value::Array(sub_entries),
    );
    // Loading the mirrored stream gives back what was appended.
    assert_eq!(
        load(&server, json!({"project_key": pkey, "session_id": sid})),
        Value::Array(main_entries)
    );
    let imported_db = imported_dir.path().join("sessions.db");
    let mirrored_db = mirrored_dir.path().join("sessions.db");
    for args in [
        vec!["messages", sid, "--json"],
        vec!["messages", sid, "--agent", "a1b2c3d4e5f60718", "--json"],
        vec!["resume", sid, "--api"],
        vec!["agents", sid, "--json"],
    ] {
        assert_eq!(
            String::from_utf8(sessiondb_ok(&mirrored_db, &args)).unwrap(),
            String::from_utf8(sessiondb_ok(&imported_db, &args)).unwrap(),
            "{args:?}"
        );
    }
    // The read endpoints answer byte for byte what the CLI prints.
    let q = |s: &str| s.replace('/', "%2F");
    for (path, args) in [
        ("/v1/sessions".to_owned(), vec!["sessions", "--json"]),
        (
            format!("/v1/sessions?project={pkey}&all=true&limit=5"),
            vec![
                "sessions",
                "--project",
                pkey,
                "--all",
                "--limit",
                "5",
                "--json",
            ],
        ),
        (
            format!("/v1/resume?session={sid}"),
            vec!["resume", sid, "--json"],
        ),
        (
            format!("/v1/resume?session={sid}&api=true"),
            vec!["resume", sid, "--api"],
        ),
        (
            format!("/v1/messages?session={}", q(sid)),
            vec!["messages", sid, "--json"],
        ),
        (
            format!("/v1/messages?session={sid}&agent=a1b2c3d4e5f60718&limit=2&offset=1"),
            vec![
                "messages",
                sid,
                "--agent",
                "a1b2c3d4e5f60718",
                "--limit",
                "2",
                "--offset",
                "1",
                "--json",
            ],
        ),
        (
            "/v1/search?q=fetch_forecast".to_owned(),
            vec!["search", "fetch_forecast", "--json"],
        ),
        (
            "/v1/search?q=callers&role=user&tools=true&limit=3".to_owned(),
            vec![
                "search", "callers", "--role", "user", "--tools", "--limit", "3", "--json",
            ],
        ),
    ] {
        let http = get(&server, &path);
        assert_eq!(
            String::from_utf8(http).unwrap(),
            String::from_utf8(sessiondb_ok(&mirrored_db, &args)).unwrap(),
            "{path}"
        );
    }
    let hits: Value = serde_json::from_slice(&get(&server, "/v1/search?q=fetch_forecast")).unwrap();
    assert!(
        !hits.as_array().unwrap().is_empty(),
        "the mirrored session is searchable"
    );
    let (status, body) = request(server.addr, "GET", "/v1/resume?session=nope", &[], b"");
    assert_eq!(status, 404, "{}", String::from_utf8_lossy(&body));
    let (status, _) = request(server.addr, "GET", "/v1/search?q=x&role=robot", &[], b"");
    assert_eq!(status, 400);
    // An imported session can be loaded through the protocol too.
    let imported = Server::start(Store::open(&imported_db).unwrap(), Config::default());
    let loaded = load(&imported, json!({"project_key": pkey, "session_id": sid}));
    assert_eq!(
        loaded,
        Value::Array(json_lines(&project.join(format!("{sid}.jsonl"))))
    );
}

pub(crate) fn spawn_serve(
    db: &Path,
    extra: &[&str],
) -> (std::process::Child, std::net::SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--db")
        .arg(db)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().expect("stdout"))
        .read_line(&mut line)
        .expect("first line");
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .expect("address");
    (child, addr)
}

/// Reads one response head (status line and headers) byte by byte, so that nothing after it
/// is taken from the stream.
fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).expect("response head");
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

pub(crate) fn terminate(child: &std::process::Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

#[test]
fn the_binary_refuses_a_public_address_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--db")
        .arg(dir.path().join("s.db"))
        .args(["serve", "--addr", "0.0.0.0:0"])
        .env_remove("SESSIONDB_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("token"));
}

/// SIGTERM while a large append is in flight: the append finishes and commits whole, then the
/// server exits 0. (3 MB: well within the 10 s shutdown grace even for a debug build on a
/// busy machine.)
#[test]
fn sigterm_lets_an_append_in_flight_finish() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let (mut child, addr) = spawn_serve(&db, &[]);
    let entries: Vec<Value> = (0..5_000)
        .map(|i| user(&format!("u{i}"), &"word ".repeat(100)))
        .collect();
    let body = json!({"key": key("big", None), "entries": entries}).to_string();
    let mut stream = TcpStream::connect(addr).expect("connect");
    // `Expect: 100-continue` makes the server say when the handler starts reading the body:
    // only then is the append surely in flight (a connection still waiting in the accept
    // queue when the signal comes is closed unanswered, as on any server).
    let head = format!(
        "POST /v1/store/append HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let interim = read_head(&mut stream);
    assert!(interim.starts_with("HTTP/1.1 100"), "{interim:?}");
    stream.write_all(body.as_bytes()).unwrap();
    terminate(&child);
    let (status, answer) = read_response(stream);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer["appended"], json!(5_000));
    let exit = child.wait().expect("wait");
    assert!(exit.success(), "{exit:?}");
    let store = Store::open(&db).unwrap();
    let rows: i64 = store
        .reader()
        .unwrap()
        .query_row("SELECT count(*) FROM rows", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 5_000);
}

/// An imported session folds from its first line; a re-imported (rewritten) file is a new
/// transcript and is folded again from the start, whoever wrote the lines.
#[test]
fn summaries_of_imported_sessions_fold_every_stored_line() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects/-p");
    std::fs::create_dir_all(&project).unwrap();
    let file = project.join("s.jsonl");
    let first = format!(
        "{}\n{}\n",
        user("a", "one"),
        json!({"type": "summary", "summary": "x"})
    );
    std::fs::write(&file, &first).unwrap();
    let store = Store::open(dir.path().join("s.db")).unwrap();
    import(&store, &[dir.path().join("projects").as_path()]);
    let server = Server::start(store, Config::default());
    let session = json!({"project_key": "-p", "session_id": "s"});
    let pending = |server: &Server| {
        ok(
            server,
            "/v1/store/summary/pending",
            json!({ "key": session }),
        )["pending"]
            .clone()
    };
    let p = pending(&server);
    assert_eq!(p["summary"], Value::Null);
    assert_eq!(
        p["entries"],
        json!([user("a", "one"), {"type": "summary", "summary": "x"}])
    );
    // The imported session's mtime is its file's; an append moves it on.
    let listed = ok(
        &server,
        "/v1/store/list_sessions",
        json!({"project_key": "-p"}),
    );
    assert_eq!(listed["sessions"][0]["mtime"], p["mtime"]);
    let put = json!({"key": session, "expect": p["watermark"], "through": p["through"],
                     "mtime": p["mtime"], "data": {"n": 1}});
    ok(&server, "/v1/store/summary/put", put);
    let a = append(
        &server,
        json!({"project_key": "-p", "session_id": "s"}),
        json!([user("b", "two")]),
    );
    assert!(a["mtime"].as_i64() > p["mtime"].as_i64());
    let p2 = pending(&server);
    assert_eq!(p2["summary"]["data"], json!({"n": 1}));
    assert_eq!(p2["entries"], json!([user("b", "two")]));
    drop(server);
    // Rewrite the file and import it again: a new transcript, folded from its start.
    std::fs::write(&file, format!("{}\n", user("c", "other"))).unwrap();
    let store = Store::open(dir.path().join("s.db")).unwrap();
    import(&store, &[dir.path().join("projects").as_path()]);
    let server = Server::start(store, Config::default());
    let p3 = pending(&server);
    assert_eq!(p3["summary"], Value::Null);
    // The line appended through the API is carried over to the new version (issue 13 item 9).
    assert_eq!(p3["entries"], json!([user("c", "other"), user("b", "two")]));
    assert_eq!(p3["watermark"], p2["watermark"]);
    assert_ne!(p3["through"]["transcript"], p2["through"]["transcript"]);
}

/// `/v1/resume` takes `model=` (issue 12): one old transcript gives the CLI's view for each
/// model, the bundle reports the model called (B14), and a session without conversation is
/// a 404 with the CLI's message (B9).
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn resume_takes_a_model_and_refuses_like_the_cli() {
    let Some(shared) = shared_dir("the real-transcript pack") else {
        return;
    };
    let pack = shared.join("oracle/real/cases");
    let (_dir, store) = temp_store();
    for case in [
        "entirecli__4c02af2759b6_0_full__own",
        "happy__goal-status-completed__own",
    ] {
        import(&store, &[&pack.join(case).join("projects")]);
    }
    let server = Server::start(store, Config::default());
    let case_json = |case: &str, file: &str| -> Value {
        let text = std::fs::read_to_string(pack.join(case).join(file)).expect("case file");
        serde_json::from_str(&text).expect("json")
    };
    let own = case_json("entirecli__4c02af2759b6_0_full__own", "case.json");
    let sid = own["target_session_id"].as_str().expect("sid");
    for (case, model) in [
        (
            "entirecli__4c02af2759b6_0_full__own",
            "claude-opus-4-5-20251101",
        ),
        ("entirecli__4c02af2759b6_0_full__other", "claude-sonnet-4-5"),
    ] {
        let got: Value = serde_json::from_slice(&get(
            &server,
            &format!("/v1/resume?session={sid}&api=true&model={model}"),
        ))
        .expect("json");
        assert_eq!(got, case_json(case, "expected-api-view.json"), "{case}");
    }
    let bundle: Value = serde_json::from_slice(&get(
        &server,
        &format!("/v1/resume?session={sid}&model=opus"),
    ))
    .expect("json");
    assert_eq!(bundle["model"], "claude-opus-5-5");
    let refused = case_json("happy__goal-status-completed__own", "case.json");
    let (status, body) = request(
        server.addr,
        "GET",
        &format!(
            "/v1/resume?session={}&api=true",
            refused["target_session_id"].as_str().expect("sid")
        ),
        &[],
        b"",
    );
    assert_eq!(status, 404);
    let body: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(body["error"], refused["expected_error"]);
}

/// `/v1/resume` takes `cli_version=` (issue 25): the file of the made case `issue25_later`
/// gives what the real 2.1.336 sent by default and what the real 2.1.332 sent with
/// `cli_version=2.1.332`; a value that is not `X.Y.Z` is a 400 saying so.
#[test]
fn resume_takes_a_cli_version() {
    let made = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oracle-made");
    let view = |case: &str| -> Value {
        let text =
            std::fs::read_to_string(made.join(case).join("expected-api-view.json")).expect("view");
        serde_json::from_str(&text).expect("json")
    };
    let (_dir, store) = temp_store();
    import(
        &store,
        &[&made
            .join("issue25_later__claude-sonnet-4-5")
            .join("projects")],
    );
    let server = Server::start(store, Config::default());
    let sid = "0a1b2c3d-0000-4000-8000-00000000000a";
    let api = |extra: &str| -> Value {
        serde_json::from_slice(&get(
            &server,
            &format!("/v1/resume?session={sid}&api=true&model=claude-sonnet-4-5{extra}"),
        ))
        .expect("json")
    };
    assert_eq!(api(""), view("issue25_later__claude-sonnet-4-5"));
    assert_eq!(
        api("&cli_version=2.1.336"),
        view("issue25_later__claude-sonnet-4-5")
    );
    assert_eq!(
        api("&cli_version=2.1.332"),
        view("issue25_later_332__claude-sonnet-4-5")
    );
    let (status, body) = request(
        server.addr,
        "GET",
        &format!("/v1/resume?session={sid}&api=true&cli_version=2.1"),
        &[],
        b"",
    );
    assert_eq!(status, 400);
    let body: Value = serde_json::from_slice(&body).expect("json");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("is not a Claude Code version")),
        "{body}"
    );
}
