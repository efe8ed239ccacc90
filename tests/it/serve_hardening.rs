//! `sessiondb serve` against hostile clients (issue 13, items 1–5): cross-site writes,
//! DNS rebinding, slow and idle clients, shutdown with a body half sent, and the token.

use crate::serve::*;
use serde_json::{json, Value};
use sessiondb::serve::connections::Limits;
use sessiondb::serve::http::Config;
use sessiondb::Store;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Request headers, by name.
type Headers<'a> = Vec<(&'static str, &'a str)>;

/// A page on another site can make a browser send `text/plain` or form POSTs anywhere and
/// put its own `Origin` on them: none of that reaches the store, token or no token.
#[test]
fn cross_site_writes_are_refused_with_and_without_a_token() {
    for token in [None, Some("s3cret")] {
        let (_dir, server) = temp_server(Config {
            token: token.map(str::to_owned),
            ..Config::default()
        });
        let host = server.addr.to_string();
        let bearer = token.map(|t| format!("Bearer {t}"));
        let with_auth = |headers: &[(&'static str, &str)]| {
            let mut all: Vec<(&str, String)> =
                headers.iter().map(|(k, v)| (*k, v.to_string())).collect();
            if let Some(b) = &bearer {
                all.push(("Authorization", b.clone()));
            }
            all
        };
        let send = |method: &str, path: &str, headers: &[(&'static str, &str)], body: &Value| {
            let all = with_auth(headers);
            let all: Vec<(&str, &str)> = all.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let (status, answer) =
                raw_request(server.addr, method, path, &all, body.to_string().as_bytes());
            let answer: Value = serde_json::from_slice(&answer).expect("a JSON answer");
            (status, answer)
        };
        let victim = key("victim", None);
        let injected = json!({"key": key("injected", None), "entries": [user("x", "evil")]});
        let (status, _) = send(
            "POST",
            "/v1/store/append",
            &[("Host", &host), ("Content-Type", "application/json")],
            &json!({"key": victim, "entries": [user("v", "kept")]}),
        );
        assert_eq!(status, 200, "token {token:?}");
        let own_origin = format!("http://{host}");
        let refused: Vec<(&str, Headers<'_>, u16)> = vec![
            ("no content type", vec![("Host", &host)], 415),
            (
                "text/plain",
                vec![
                    ("Host", &host),
                    ("Content-Type", "text/plain;charset=UTF-8"),
                ],
                415,
            ),
            (
                "a form",
                vec![
                    ("Host", &host),
                    ("Content-Type", "application/x-www-form-urlencoded"),
                ],
                415,
            ),
            (
                "a multipart form",
                vec![
                    ("Host", &host),
                    ("Content-Type", "multipart/form-data; boundary=b"),
                ],
                415,
            ),
            (
                "text/plain from another origin",
                vec![
                    ("Host", &host),
                    ("Content-Type", "text/plain"),
                    ("Origin", "http://evil.example"),
                ],
                403,
            ),
            (
                "JSON from another origin",
                vec![
                    ("Host", &host),
                    ("Content-Type", "application/json"),
                    ("Origin", "http://evil.example"),
                ],
                403,
            ),
            (
                "JSON from an opaque origin",
                vec![
                    ("Host", &host),
                    ("Content-Type", "application/json"),
                    ("Origin", "null"),
                ],
                403,
            ),
            (
                "a cross-site fetch",
                vec![
                    ("Host", &host),
                    ("Content-Type", "application/json"),
                    ("Sec-Fetch-Site", "cross-site"),
                ],
                403,
            ),
        ];
        for (what, headers, want) in &refused {
            for (path, body) in [
                ("/v1/store/append", injected.clone()),
                ("/v1/store/delete", json!({"key": victim})),
            ] {
                let (status, answer) = send("POST", path, headers, &body);
                assert_eq!(status, *want, "{what} to {path}, token {token:?}: {answer}");
                assert!(answer["error"].is_string(), "{answer}");
            }
        }
        // Reads from another site are refused too (a no-cors GET carries Sec-Fetch-Site).
        let (status, _) = send(
            "GET",
            "/v1/sessions",
            &[("Host", &host), ("Sec-Fetch-Site", "cross-site")],
            &Value::Null,
        );
        assert_eq!(status, 403);
        // The server's own origin, and what browsers send for typed URLs, are fine.
        for headers in [
            vec![
                ("Host", host.as_str()),
                ("Content-Type", "application/json; charset=utf-8"),
                ("Origin", &own_origin),
                ("Sec-Fetch-Site", "same-origin"),
            ],
            vec![
                ("Host", host.as_str()),
                ("Content-Type", "application/json"),
                ("Sec-Fetch-Site", "none"),
            ],
        ] {
            let (status, answer) = send(
                "POST",
                "/v1/store/load",
                &headers,
                &json!({ "key": victim }),
            );
            assert_eq!(status, 200, "{headers:?}: {answer}");
            assert_eq!(answer["entries"], json!([user("v", "kept")]));
        }
        let (status, answer) = send(
            "POST",
            "/v1/store/load",
            &[("Host", &host), ("Content-Type", "application/json")],
            &json!({"key": key("injected", None)}),
        );
        assert_eq!((status, answer["entries"].clone()), (200, Value::Null));
    }
}

/// DNS rebinding: a page whose name now resolves to 127.0.0.1 reaches the server with its own
/// name as Host. Only the address connected to (and loopback names) are answered, plus
/// `--allow-host` names.
#[test]
fn foreign_hosts_are_misdirected() {
    let (_dir, server) = temp_server(Config {
        allowed_hosts: vec!["box.example".parse().unwrap()],
        ..Config::default()
    });
    let port = server.addr.port();
    let load = json!({"key": key("s", None)}).to_string();
    for (host, want) in [
        ("evil.example".to_owned(), 421),
        (format!("evil.example:{port}"), 421),
        (format!("localhost.evil.example:{port}"), 421),
        (format!("127.0.0.2:{port}"), 421),
        (format!("localhost:{}", port.wrapping_add(1)), 421),
        ("localhost".to_owned(), 421),
        (format!("127.0.0.1:{port}"), 200),
        (format!("localhost:{port}"), 200),
        (format!("LOCALHOST:{port}"), 200),
        (format!("[::1]:{port}"), 200),
        ("box.example".to_owned(), 200),
        (format!("box.example:{port}"), 200),
        (format!("box.example:{}", port.wrapping_add(1)), 421),
    ] {
        let (status, body) =
            raw_request(server.addr, "GET", "/v1/sessions", &[("Host", &host)], b"");
        assert_eq!(
            status,
            want,
            "GET with Host {host}: {}",
            String::from_utf8_lossy(&body)
        );
        let (status, _) = raw_request(
            server.addr,
            "POST",
            "/v1/store/load",
            &[("Host", &host), ("Content-Type", "application/json")],
            load.as_bytes(),
        );
        assert_eq!(status, want, "POST with Host {host}");
    }
    let (status, _) = raw_request(server.addr, "GET", "/v1/sessions", &[], b"");
    assert_eq!(status, 421, "no Host");
    // An unknown path is refused the same way: the rule is in front of every route.
    let (status, _) = raw_request(
        server.addr,
        "GET",
        "/nowhere",
        &[("Host", "evil.example")],
        b"",
    );
    assert_eq!(status, 421);
}

/// `--allow-host` on the command line, repeatable.
#[test]
fn the_binary_answers_allowed_hosts_only() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr) = spawn_serve(
        &dir.path().join("s.db"),
        &[
            "--allow-host",
            "box.example",
            "--allow-host",
            "proxy.example:8443",
        ],
    );
    for (host, want) in [
        ("box.example", 200),
        ("proxy.example:8443", 200),
        ("proxy.example", 421),
        ("evil.example", 421),
    ] {
        let (status, _) = raw_request(addr, "GET", "/v1/health", &[("Host", host)], b"");
        assert_eq!(status, want, "{host}");
    }
    let (status, _) = request(addr, "GET", "/v1/health", &[], b"");
    assert_eq!(status, 200);
    terminate(&child);
    assert!(child.wait().unwrap().success());
}

fn rows(db: &Path) -> i64 {
    Store::open(db)
        .expect("open")
        .reader()
        .expect("reader")
        .query_row("SELECT count(*) FROM rows", [], |r| r.get(0))
        .expect("count")
}

/// Whether the server closed `stream` within `within` (reads its answer, if any, first).
fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let until = Instant::now() + within;
    let mut buf = [0u8; 4096];
    while Instant::now() < until {
        stream
            .set_read_timeout(Some(Duration::from_millis(50)))
            .expect("timeout");
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return true,
        }
    }
    false
}

/// A `GET /v1/health` on a new connection, timed: (status, how long it took).
fn health(addr: SocketAddr, limit: Duration) -> (u16, Duration) {
    let started = Instant::now();
    let mut stream = TcpStream::connect_timeout(&addr, limit).expect("connect");
    stream.set_read_timeout(Some(limit)).expect("timeout");
    stream.set_write_timeout(Some(limit)).expect("timeout");
    let head = format!("GET /v1/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).expect("write");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let status = std::str::from_utf8(&answer)
        .ok()
        .and_then(|a| a.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, started.elapsed())
}

fn short_limits() -> Limits {
    Limits {
        max_connections: 20,
        idle_timeout: Duration::from_millis(400),
        header_read_timeout: Duration::from_millis(400),
        body_read_timeout: Duration::from_millis(400),
        shutdown_grace: Duration::from_secs(2),
    }
}

/// Idle connections, kept-alive ones, header tricklers and slow bodies are each cut off after
/// their timeout; a healthy client is answered meanwhile.
#[test]
fn slow_and_idle_clients_time_out() {
    let (_dir, server) = temp_server(Config {
        limits: short_limits(),
        ..Config::default()
    });
    let addr = server.addr;
    // A connection that never sends a byte.
    let mut idle = TcpStream::connect(addr).unwrap();
    // A kept-alive connection after one answer.
    let mut kept = TcpStream::connect(addr).unwrap();
    kept.write_all(format!("GET /v1/health HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .unwrap();
    // A body that stops half-way.
    let mut body = TcpStream::connect(addr).unwrap();
    let half = json!({"key": key("slow", None), "entries": [user("a", "x")]}).to_string();
    body.write_all(
        format!(
            "POST /v1/store/append HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{}",
            half.len() * 2,
            half
        )
        .as_bytes(),
    )
    .unwrap();
    // A head sent a byte at a time, never finished.
    let mut trickler = TcpStream::connect(addr).unwrap();
    trickler
        .write_all(format!("GET /v1/health HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
        .unwrap();
    let started = Instant::now();
    let mut trickle_closed = None;
    while started.elapsed() < Duration::from_secs(5) {
        if trickler.write_all(b"X").is_err()
            || closed_within(&mut trickler, Duration::from_millis(100))
        {
            trickle_closed = Some(started.elapsed());
            break;
        }
    }
    let trickle_closed = trickle_closed.expect("the header trickler was never cut off");
    assert!(
        trickle_closed < Duration::from_secs(3),
        "{trickle_closed:?}"
    );
    assert!(closed_within(&mut idle, Duration::from_secs(3)), "idle");
    assert!(
        closed_within(&mut kept, Duration::from_secs(3)),
        "kept alive"
    );
    body.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let (status, answer) = read_response(body);
    assert_eq!(status, 408, "{}", String::from_utf8_lossy(&answer));
    assert_eq!(load(&server, key("slow", None)), Value::Null);
    assert_eq!(health(addr, Duration::from_secs(1)).0, 200);
}

/// More connections than the limit: the ones idle the longest make room, so a healthy client
/// is answered at once, while a request in progress is never cut for room.
#[test]
fn a_full_server_makes_room_for_a_healthy_client() {
    let (_dir, server) = temp_server(Config {
        limits: Limits {
            idle_timeout: Duration::from_secs(60),
            header_read_timeout: Duration::from_secs(60),
            body_read_timeout: Duration::from_secs(60),
            ..short_limits()
        },
        ..Config::default()
    });
    let addr = server.addr;
    // A request in progress (its body half sent) on the oldest connection.
    let mut slow = TcpStream::connect(addr).unwrap();
    let entries = json!({"key": key("slow", None), "entries": [user("a", "x")]}).to_string();
    let (first, second) = entries.split_at(entries.len() / 2);
    slow.write_all(
        format!(
            "POST /v1/store/append HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Connection: close\r\nContent-Length: {}\r\n\r\n{first}",
            entries.len()
        )
        .as_bytes(),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let idle: Vec<TcpStream> = (0..100)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    let tricklers: Vec<TcpStream> = (0..60)
        .map(|_| {
            let mut t = TcpStream::connect(addr).unwrap();
            let _ = t.write_all(b"GET /v1/health HTTP/1.1\r\nHo");
            t
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..3 {
        let (status, took) = health(addr, Duration::from_secs(1));
        assert_eq!(status, 200, "after {took:?}");
        assert!(took < Duration::from_secs(1), "{took:?}");
    }
    slow.write_all(second.as_bytes()).unwrap();
    let (status, answer) = read_response(slow);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    assert_eq!(load(&server, key("slow", None)), json!([user("a", "x")]));
    drop((idle, tricklers));
}

/// The binary under a small open-file limit (128: room for 64 connections) faces ~1,000 idle
/// connections, then 300 clients trickling headers: a healthy client is answered within a second each time. (Before
/// the accept loop had a limit, the server ran out of file descriptors and answered nobody.)
#[test]
fn the_binary_answers_while_flooded_under_a_small_file_limit() {
    let own_limit = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|l| {
            l.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3)?.parse::<usize>().ok())
        })
        .unwrap_or(1024);
    // The flood must outnumber what the server can hold (64) by far; this process needs a
    // file per connection too.
    let idle_count = 1000.min(own_limit.saturating_sub(200) / 2);
    let trickle_count = 300.min(own_limit.saturating_sub(200) / 2);
    if idle_count < 256 {
        eprintln!("skipped: this process may open only {own_limit} files");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new("sh")
        .args(["-c", "ulimit -n 128 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--db")
        .arg(dir.path().join("s.db"))
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr: SocketAddr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("{line:?}"))
        .parse()
        .unwrap();
    // A server that stopped accepting leaves connects hanging in the backlog.
    let connect = || {
        TcpStream::connect_timeout(&addr, Duration::from_secs(2))
            .expect("the server stopped accepting connections")
    };
    let idle: Vec<TcpStream> = (0..idle_count).map(|_| connect()).collect();
    std::thread::sleep(Duration::from_millis(300));
    let (status, took) = health(addr, Duration::from_secs(1));
    assert_eq!(status, 200, "{idle_count} idle connections, after {took:?}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    drop(idle);
    let mut tricklers: Vec<TcpStream> = (0..trickle_count).map(|_| connect()).collect();
    let head = format!("GET /v1/health HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ");
    for round in 0..5 {
        for t in &mut tricklers {
            let byte = head.as_bytes().get(round).copied().unwrap_or(b'x');
            let _ = t.write_all(&[byte]);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, took) = health(addr, Duration::from_secs(1));
    assert_eq!(status, 200, "{trickle_count} tricklers, after {took:?}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    drop(tricklers);
    terminate(&child);
    assert!(child.wait().unwrap().success());
}

/// SIGTERM while a client has sent half a body: the listener closes, the server waits for the
/// request at most the grace period (10 s), then exits 0; what was committed stays, the half
/// body is never applied.
#[test]
fn sigterm_with_a_body_half_sent_exits_after_the_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let (mut child, addr) = spawn_serve(&db, &[]);
    let (status, _) = request(
        addr,
        "POST",
        "/v1/store/append",
        &[],
        json!({"key": key("kept", None), "entries": [user("a", "one"), user("b", "two")]})
            .to_string()
            .as_bytes(),
    );
    assert_eq!(status, 200);
    let entries: Vec<Value> = (0..500).map(|i| user(&format!("u{i}"), "half")).collect();
    let body = json!({"key": key("half", None), "entries": entries}).to_string();
    let mut half = TcpStream::connect(addr).unwrap();
    half.write_all(
        format!(
            "POST /v1/store/append HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )
    .unwrap();
    half.write_all(&body.as_bytes()[..body.len() / 2]).unwrap();
    let _idle = TcpStream::connect(addr).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let signalled = Instant::now();
    terminate(&child);
    std::thread::sleep(Duration::from_secs(1));
    assert!(TcpStream::connect(addr).is_err(), "the listener is closed");
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        if signalled.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("still running 20 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let took = signalled.elapsed();
    assert!(exit.success(), "{exit:?}");
    assert!(
        took >= Duration::from_secs(9) && took < Duration::from_secs(15),
        "exited {took:?} after SIGTERM"
    );
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.contains("1 request(s)"), "{stderr}");
    assert!(closed_within(&mut half, Duration::from_secs(1)));
    assert_eq!(
        rows(&db),
        2,
        "the committed append stays, the half body is not applied"
    );
}

/// `sessiondb serve` with `args` and, when given, `$SESSIONDB_TOKEN`: the child and its address.
fn spawn_with_token(
    db: &Path,
    args: &[&str],
    env_token: Option<&str>,
) -> (std::process::Child, SocketAddr) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sessiondb"));
    command
        .arg("--db")
        .arg(db)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(args)
        .env_remove("SESSIONDB_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(token) = env_token {
        command.env("SESSIONDB_TOKEN", token);
    }
    let mut child = command.spawn().expect("spawn serve");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("{line:?}"))
        .parse()
        .unwrap();
    (child, addr)
}

/// The token from `--token-file` (never on the command line), `$SESSIONDB_TOKEN`, or
/// `--token`; the auth scheme in any case.
#[test]
fn the_token_comes_from_a_file_or_the_environment_in_any_scheme_case() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let file = dir.path().join("token");
    std::fs::write(&file, "t0ken-from-the-file\n").unwrap();
    let file_arg = file.to_str().unwrap();
    for (args, env_token, token) in [
        (vec!["--token-file", file_arg], None, "t0ken-from-the-file"),
        (vec![], Some("t0ken-from-the-env"), "t0ken-from-the-env"),
        (
            vec!["--token", "t0ken-from-the-arg"],
            None,
            "t0ken-from-the-arg",
        ),
    ] {
        let (mut child, addr) = spawn_with_token(&db, &args, env_token);
        let body = json!({"key": key("s", None)}).to_string();
        let wrong = format!("Bearer {token}x");
        let bare = token.to_owned();
        for auth in [None, Some(wrong.as_str()), Some(bare.as_str())] {
            let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", *a)).collect();
            let (status, _) = request(addr, "POST", "/v1/store/load", &headers, body.as_bytes());
            assert_eq!(status, 401, "{args:?} with {auth:?}");
        }
        for scheme in ["Bearer", "bearer", "BEARER", "bEARER "] {
            let auth = format!("{scheme} {token}");
            let (status, answer) = request(
                addr,
                "POST",
                "/v1/store/load",
                &[("Authorization", &auth)],
                body.as_bytes(),
            );
            assert_eq!(status, 200, "{args:?} with {auth:?}: {answer:?}");
        }
        if let Ok(cmdline) = std::fs::read(format!("/proc/{}/cmdline", child.id())) {
            let shown = String::from_utf8_lossy(&cmdline).contains(token);
            assert_eq!(shown, args.contains(&"--token"), "{args:?}: {cmdline:?}");
        }
        terminate(&child);
        assert!(child.wait().unwrap().success());
    }
    let serve = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_sessiondb"))
            .arg("--db")
            .arg(&db)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(args)
            .env_remove("SESSIONDB_TOKEN")
            .stdin(Stdio::null())
            .output()
            .expect("run")
    };
    let missing = dir.path().join("no-such-token");
    let out = serve(&["--token-file", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-token"));
    let empty = dir.path().join("empty-token");
    std::fs::write(&empty, "\n").unwrap();
    let out = serve(&["--token-file", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("empty-token") && stderr.contains("empty"),
        "{stderr}"
    );
    let out = serve(&["--token", "a", "--token-file", file_arg]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "--token and --token-file together"
    );
}
