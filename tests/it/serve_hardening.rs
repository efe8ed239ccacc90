//! `sessiondb serve` against hostile clients (issue 13, items 1–5): cross-site writes,
//! DNS rebinding, slow and idle clients, shutdown with a body half sent, and the token.

use crate::serve::*;
use serde_json::{json, Value};
use sessiondb::serve::http::Config;

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
