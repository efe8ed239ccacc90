//! Issue 13 item 6: every write entry point refuses a project key, session id or subpath
//! that is not a path component (or a relative path of them), names it, and stores nothing.

use crate::support::*;
use serde_json::value::RawValue;
use sessiondb::model::SessionRef;
use sessiondb::streams::{self, StreamKey};
use sessiondb::Error;

pub const USER: &str = r#"{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}"#;

#[test]
fn serve_appends_with_bad_names_are_400s_that_store_nothing() {
    let (_dir, store) = temp_store();
    let entry = RawValue::from_string(USER.to_owned()).expect("raw");
    let bad = [
        ("../..", "s", None),
        ("", "s", None),
        (".", "s", None),
        ("a/b", "s", None),
        ("p", "..", None),
        ("p", "", None),
        ("p", "x\\y", None),
        ("p", "a\u{0}b", None),
        ("p", "a\nb", None),
        ("p", "/etc", None),
        ("C:", "s", None),
        ("p", "s", Some("../../x")),
        ("p", "s", Some("subagents/./agent-1")),
        ("p", "s", Some("/abs")),
    ];
    for (project, session, subpath) in bad {
        let key = StreamKey {
            project_key: project.to_owned(),
            session_id: session.to_owned(),
            subpath: subpath.map(str::to_owned),
        };
        // The server answers every Error::Invalid with a 400 (serve/http.rs).
        match streams::append(&store, &key, &[&*entry]) {
            Err(Error::Invalid(message)) => {
                let named = [project, session, subpath.unwrap_or("\u{1}")]
                    .iter()
                    .any(|n| message.contains(&format!("{n:?}")));
                assert!(named, "{key:?}: {message}");
            }
            other => panic!("{key:?}: {other:?}"),
        }
    }
    assert_eq!(count(&store, "sessions"), 0);
    assert_eq!(count(&store, "projects"), 0);
    assert_eq!(count(&store, "rows"), 0);
    // A good key still works.
    let key = StreamKey {
        project_key: "-p".into(),
        session_id: "s".into(),
        subpath: Some("subagents/agent-1".into()),
    };
    streams::append(&store, &key, &[&*entry]).expect("good key");
    assert_eq!(count(&store, "rows"), 1);
}

#[test]
fn fork_session_id_must_be_a_uuid() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    import_samples(&db);
    let source = "7c9d2e41-5b6a-4f80-9a1b-2c3d4e5f6a71";
    for bad in ["../../x", "", ".", "a/b", "not-a-uuid"] {
        let out = sessiondb(&db, &["fork", source, "--session-id", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("{bad:?}")), "{bad:?}: {err}");
    }
    let store = sessiondb::Store::open(&db).expect("open");
    assert_eq!(count(&store, "sessions"), 2, "no fork was stored");
    let good = "0b0e0000-0000-4000-8000-0000000000aa";
    let out = sessiondb(&db, &["fork", source, "--session-id", good]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn append_refuses_a_stored_bad_name() {
    let (_dir, store) = temp_store();
    let session = SessionRef {
        key: 1,
        project: "../..".into(),
        session_id: "s".into(),
    };
    let entry: serde_json::Value = serde_json::from_str(USER).expect("json");
    match store.append(&session, &[entry]) {
        Err(Error::BadName(m)) => assert!(m.contains("\"../..\""), "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(count(&store, "rows"), 0);
}

#[test]
fn import_refuses_bad_names_names_them_and_imports_the_rest() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects");
    let good = root.join("-good");
    let bad_project = root.join("back\\slash");
    std::fs::create_dir_all(&good).expect("mkdir");
    std::fs::create_dir_all(&bad_project).expect("mkdir");
    let line = format!("{USER}\n");
    std::fs::write(good.join("ok.jsonl"), &line).expect("write");
    std::fs::write(good.join("new\nline.jsonl"), &line).expect("write");
    std::fs::write(bad_project.join("s.jsonl"), &line).expect("write");
    let db = dir.path().join("s.db");
    let out = sessiondb(&db, &["import", &root.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"back\\\\slash\""), "{err}");
    assert!(err.contains("\"new\\nline\""), "{err}");
    let store = sessiondb::Store::open(&db).expect("open");
    let sessions: Vec<String> = store
        .reader()
        .expect("reader")
        .prepare("SELECT session_id FROM sessions")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(sessions, ["ok"]);
}
