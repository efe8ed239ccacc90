//! The login of a server with a token (issue 28, items 1, 2 and 6): `next` stays on this
//! origin as a browser parses it (server and page script), the cookie holds a session id of
//! this process (never the token) under a name with the port, wrong tokens are rate
//! limited, short tokens and readable token files are refused or warned about, and a 500
//! tells the client an id, not its cause.

use crate::serve::Server;
use crate::support::*;
use crate::web::{fetch, fixture_store, get, post_json, session_path, Answer, READABLE};
use sessiondb::serve::http::Config;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};

const TOKEN: &str = "s3cret-token-0123456789";

fn token_server() -> (tempfile::TempDir, Server) {
    let (dir, store) = fixture_store();
    let server = Server::start(
        store,
        Config {
            token: Some(TOKEN.to_owned()),
            ..Config::default()
        },
    );
    (dir, server)
}

/// The `data-next` the login form hands its script.
fn form_next(addr: SocketAddr, next: &str) -> String {
    let page = get(addr, &format!("/login?next={next}"));
    assert_eq!(page.status, 200, "{next}: {}", page.body);
    let start = page.body.find("data-next=\"").expect("data-next") + "data-next=\"".len();
    let end = start + page.body[start..].find('"').expect("end");
    page.body[start..end].to_owned()
}

fn login(addr: SocketAddr, token: &str) -> Answer {
    post_json(addr, "/login", &format!(r#"{{"token":"{token}"}}"#))
}

#[test]
fn login_next_stays_on_this_origin() {
    let (_dir, server) = token_server();
    let a = server.addr;
    // Percent-encoded as the browser sends them: a tab, a newline, a CR, a backslash, a
    // leading C0 control or space, a second slash; each would leave this origin.
    for hostile in [
        "/%09/evil.example/x",
        "/%0A/evil.example",
        "/%0D/evil.example",
        "/%5Cevil.example",
        "%5C/evil.example",
        "%01//evil.example",
        "%20//evil.example",
        "//evil.example",
        "https%3A%2F%2Fevil.example%2F",
        "javascript%3Aalert(1)",
    ] {
        assert_eq!(form_next(a, hostile), "/", "{hostile}");
    }
    assert_eq!(
        form_next(a, "%2Fsession%2Fp%2Fs%3Fview%3Dresume"),
        "/session/p/s?view=resume"
    );
}

/// The page script's own check, run under node on the same inputs (decoded, as the
/// script reads them from the form).
#[test]
fn the_login_script_follows_next_only_to_this_origin() {
    if Command::new("node").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "node is missing, so the login script's check cannot run (CI is set)"
        );
        eprintln!("skipping the_login_script_follows_next_only_to_this_origin: node is missing");
        return;
    }
    let script = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src/serve/web/assets/app.js"),
    )
    .expect("app.js");
    let start = script
        .find("function sameOriginNext(")
        .expect("sameOriginNext in app.js");
    let end = start + script[start..].find("\n}\n").expect("its end") + 3;
    let cases = serde_json::json!([
        ["/\t/evil.example/x", "/"],
        ["/\n/evil.example", "/"],
        ["/\r/evil.example", "/"],
        ["/\\evil.example", "/"],
        ["\\/evil.example", "/"],
        ["\u{1}//evil.example", "/"],
        [" //evil.example", "/"],
        ["//evil.example", "/"],
        ["https://evil.example/", "/"],
        ["javascript:alert(1)", "/"],
        [
            "/session/p/s?view=resume#m-2",
            "/session/p/s?view=resume#m-2"
        ],
        ["/search?q=a%20b", "/search?q=a%20b"],
    ]);
    let program = format!(
        "{}\nconst cases = {cases};\nconst origin = 'http://127.0.0.1:7878';\n\
         const bad = cases.filter(([n, want]) => sameOriginNext(n, origin) !== want);\n\
         if (bad.length) {{ console.log(JSON.stringify(bad)); process.exit(1); }}\n",
        &script[start..end]
    );
    let out = Command::new("node")
        .args(["-e", &program])
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_login_cookie_is_a_session_of_this_process_named_by_port() {
    let (_dir, one) = token_server();
    let (_dir2, two) = token_server();
    let a = one.addr;
    let first = login(a, TOKEN);
    assert_eq!(first.status, 200, "{}", first.body);
    let cookie = first.header("set-cookie").to_owned();
    let pair = cookie.split(';').next().expect("pair").to_owned();
    let (name, id) = pair.split_once('=').expect("name=value");
    assert_eq!(name, format!("sessiondb_{}", a.port()));
    assert!(
        !cookie.contains(TOKEN),
        "the token is never in the cookie: {cookie}"
    );
    assert_eq!(id.len(), 64, "{id}");
    assert!(cookie.contains("Max-Age="), "it expires: {cookie}");
    let second = login(a, TOKEN);
    let other_id = second.header("set-cookie").split(';').next().expect("pair");
    assert_ne!(other_id, pair, "a new id per login");
    // The id opens the pages of this server only; the token as a cookie opens nothing.
    let page = |addr: SocketAddr, cookie: &str| {
        fetch(
            addr,
            "GET",
            &session_path(READABLE),
            &[("Cookie", cookie)],
            "",
        )
        .status
    };
    assert_eq!(page(a, &pair), 200);
    let b = two.addr;
    assert_eq!(page(b, &format!("sessiondb_{}={id}", b.port())), 303);
    assert_eq!(page(b, &pair), 303);
    assert_eq!(page(a, &format!("{name}={TOKEN}")), 303);
    assert_eq!(page(a, &format!("sessiondb_token={TOKEN}")), 303);
}

#[test]
fn wrong_tokens_are_rate_limited() {
    let (_dir, server) = token_server();
    let a = server.addr;
    let mut statuses = Vec::new();
    for _ in 0..12 {
        statuses.push(login(a, "wrong-token-0123456789").status);
    }
    assert_eq!(&statuses[..10], &[401; 10], "{statuses:?}");
    assert_eq!(statuses[11], 429, "{statuses:?}");
    let limited = login(a, TOKEN);
    assert_eq!(limited.status, 429, "limited even with the right token");
    assert!(!limited.header("retry-after").is_empty());
    let bearer = format!("Bearer {TOKEN}");
    let api = fetch(a, "GET", "/v1/sessions", &[("Authorization", &bearer)], "");
    assert_eq!(api.status, 429, "the bearer shares the budget");
    // The budget refills.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    assert_eq!(login(a, TOKEN).status, 200);
}

fn serve_binary(db: &Path, args: &[&str], token_env: Option<&str>) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sessiondb"));
    command
        .arg("--db")
        .arg(db)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(args)
        .env_remove("SESSIONDB_TOKEN")
        .stdin(Stdio::null());
    if let Some(t) = token_env {
        command.env("SESSIONDB_TOKEN", t);
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // A server that started is stopped after a moment; one that refused has exited.
    std::thread::sleep(std::time::Duration::from_millis(700));
    if child.try_wait().expect("wait").is_none() {
        let _ = Command::new("kill").arg(child.id().to_string()).status();
    }
    child.wait_with_output().expect("output")
}

#[test]
fn short_tokens_are_refused_and_readable_token_files_warned() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    for (args, env) in [(vec!["--token", "a"], None), (vec![], Some("short-token"))] {
        let out = serve_binary(&db, &args, env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?} {env:?}: {stderr}");
        assert!(stderr.contains("at least 16"), "{stderr}");
        assert!(
            !stderr.contains("short-token"),
            "the token is not echoed: {stderr}"
        );
    }
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let out = serve_binary(&db, &["--token-file", file.to_str().expect("utf-8")], None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("may be read by other users (mode 0644)"),
            "{stderr}"
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let out = serve_binary(&db, &["--token-file", file.to_str().expect("utf-8")], None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("other users"), "{stderr}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("listening on"),
            "{stderr}"
        );
    }
}

/// A store error is a 500 whose body holds an id, never the SQL message or a path.
#[test]
fn a_server_error_tells_the_client_an_id_only() {
    let (dir, store) = temp_store();
    import(&store, &[&samples()]);
    let db = store.path().to_owned();
    let server = Server::start(store, Config::default());
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute_batch("DROP TABLE catalog")
        .expect("drop a table under the server");
    for path in ["/v1/sessions", "/"] {
        let answer = get(server.addr, path);
        assert_eq!(answer.status, 500, "{path}: {}", answer.body);
        assert!(
            answer.body.contains("internal error "),
            "{path}: {}",
            answer.body
        );
        for leak in [
            "catalog",
            "no such table",
            "SELECT",
            dir.path().to_str().expect("utf-8"),
        ] {
            assert!(
                !answer.body.contains(leak),
                "{path} leaks {leak:?}: {}",
                answer.body
            );
        }
    }
}

/// Offsets, limits and page numbers at i64's bounds saturate (they overflowed: a panic in a
/// debug build, a wrapped slice in a release one).
#[test]
fn client_offsets_and_limits_saturate() {
    let (_dir, store) = fixture_store();
    let server = Server::start(store, Config::default());
    let a = server.addr;
    let max = i64::MAX;
    let min = i64::MIN;
    for path in [
        format!("/v1/messages?session={READABLE}&offset={max}&limit={max}"),
        format!("/v1/messages?session={READABLE}&offset={min}&limit={max}"),
        format!("/v1/messages?session={READABLE}&offset={min}"),
        format!("/v1/sessions?offset={max}&limit={max}"),
        format!("/?page={max}"),
        format!("/?page={max}&limit=1000"),
    ] {
        let answer = get(a, &path);
        assert_eq!(answer.status, 200, "{path}: {}", answer.body);
    }
    // Python's slice [MIN : MIN + MAX] is [MIN : -1]: all but the last message.
    let count = |path: String| {
        let v: serde_json::Value = serde_json::from_str(&get(a, &path).body).expect("json");
        v.as_array().expect("list").len()
    };
    let whole = count(format!("/v1/messages?session={READABLE}"));
    assert_eq!(
        count(format!(
            "/v1/messages?session={READABLE}&offset={min}&limit={max}"
        )),
        whole - 1
    );
    assert_eq!(
        count(format!(
            "/v1/messages?session={READABLE}&offset=-2&limit={max}"
        )),
        2
    );
}
