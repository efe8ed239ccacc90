//! Fork: every public oracle fork case through `sessiondb fork` then `resume --api`, the
//! fork's lines against the file the real CLI wrote, `--up-to` and `--title` against the
//! SDK's fork_session, and what a fork inherits and drops.

use crate::resume_cli::{cases, lay_out, Case};
use crate::support::*;
use serde_json::{json, Value};
use sessiondb::fork::{fork_origin, ForkOptions};
use sessiondb::resume::ResumeOptions;
use sessiondb::{export, query, sdk, Store};
use std::path::{Path, PathBuf};

fn import_case(case: &Case, dir: &Path) -> PathBuf {
    let projects = lay_out(case, dir);
    let db = dir.join("s.db");
    let out = sessiondb(
        &db,
        &["import".into(), projects.to_string_lossy().into_owned()],
    );
    assert!(out.status.success(), "{}: import failed", case.name());
    db
}

fn stdout_json(out: &std::process::Output, what: &str) -> Value {
    assert!(
        out.status.success(),
        "{what}: exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what}: {e}"))
}

pub fn jsonl(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("a JSON line"))
        .collect()
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn every_fork_case_forks_then_resumes_to_the_cli_api_view() {
    let Some(shared) = shared_dir("the oracle fork cases") else {
        return;
    };
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in cases(&shared) {
        if case.str("mode") != Some("fork") {
            continue;
        }
        let dir = tempfile::tempdir().expect("tmp");
        let db = import_case(&case, dir.path());
        let target = case.str("target_session_id").expect("target");
        let out = sessiondb(&db, &["fork", target]);
        assert!(out.status.success(), "{}: fork failed", case.name());
        let new_id = String::from_utf8(out.stdout).expect("utf-8");
        let new_id = new_id.trim_end_matches('\n');
        assert!(uuid::Uuid::parse_str(new_id).is_ok(), "{new_id:?}");
        assert_ne!(new_id, target);
        let got = stdout_json(&sessiondb(&db, &["resume", new_id, "--api"]), &case.name());
        checked += 1;
        if got != case.expected_view() {
            failures.push(case.name());
        }
    }
    assert!(checked >= 9, "only {checked} fork cases");
    assert!(failures.is_empty(), "API view differs: {failures:?}");
}

/// The later step of a case's scenario that holds the file the CLI wrote for the fork.
pub fn cli_fork_file(shared: &Path, case: &Case) -> Option<PathBuf> {
    let new_id = case.str("new_session_id")?;
    let project = case.str("project_dir_name")?;
    let scenario = case.str("scenario")?;
    cases(shared)
        .into_iter()
        .filter(|c| c.str("scenario") == Some(scenario))
        .map(|c| {
            c.dir
                .join("projects")
                .join(project)
                .join(format!("{new_id}.jsonl"))
        })
        .find(|p| p.is_file())
}

pub fn without(v: &Value, key: &str) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove(key);
    }
    v
}

/// The re-recorded chain matches the CLI's new file record by record: same uuids in the same
/// order, same top-level key order, same values, except `promptId` (the CLI stamps the
/// prompt that triggered its write; a sessiondb fork has none and keeps the recorded one).
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn fork_lines_are_the_lines_the_cli_wrote() {
    let Some(shared) = shared_dir("the oracle fork cases") else {
        return;
    };
    let mut compared = 0;
    for case in cases(&shared) {
        if case.str("mode") != Some("fork") {
            continue;
        }
        let Some(cli_file) = cli_fork_file(&shared, &case) else {
            continue;
        };
        let dir = tempfile::tempdir().expect("tmp");
        let db = import_case(&case, dir.path());
        let new_id = case.str("new_session_id").expect("new id");
        let out = sessiondb(
            &db,
            &[
                "fork",
                case.str("target_session_id").expect("target"),
                "--session-id",
                new_id,
            ],
        );
        assert!(out.status.success(), "{}", case.name());
        let ours = jsonl(&sessiondb(&db, &["export", new_id]).stdout);
        let source = lay_out(&case, &dir.path().join("src"))
            .join(case.str("project_dir_name").expect("project"))
            .join(format!(
                "{}.jsonl",
                case.str("target_session_id").expect("t")
            ));
        let source_uuids: std::collections::HashSet<String> =
            jsonl(&std::fs::read(source).expect("source"))
                .iter()
                .filter_map(|r| r["uuid"].as_str().map(str::to_owned))
                .collect();
        let theirs: Vec<Value> = jsonl(&std::fs::read(&cli_file).expect("cli file"))
            .into_iter()
            .filter(|r| r["uuid"].as_str().is_some_and(|u| source_uuids.contains(u)))
            .collect();
        let ours: Vec<Value> = ours.into_iter().filter(|r| r["uuid"].is_string()).collect();
        assert_eq!(ours.len(), theirs.len(), "{}: message count", case.name());
        for (o, t) in ours.iter().zip(&theirs) {
            let keys = |v: &Value| {
                v.as_object()
                    .expect("object")
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                keys(o),
                keys(t),
                "{}: key order of {}",
                case.name(),
                t["uuid"]
            );
            assert_eq!(
                without(o, "promptId"),
                without(t, "promptId"),
                "{}: {}",
                case.name(),
                t["uuid"]
            );
        }
        // What the CLI re-appended before the messages, of the kinds sessiondb re-appends.
        assert_eq!(
            jsonl(&sessiondb(&db, &["export", new_id]).stdout)[0],
            json!({"type": "mode", "mode": "normal", "sessionId": new_id}),
        );
        compared += 1;
    }
    assert!(compared >= 5, "only {compared} CLI fork files compared");
}

pub fn flags(case: &Case) -> ResumeOptions {
    ResumeOptions {
        at: None,
        interactive: case.json["interactive"].as_bool() == Some(true),
        continue_interrupted: case.json["env"]["CLAUDE_CODE_RESUME_INTERRUPTED_TURN"].as_str()
            == Some("1"),
        ..ResumeOptions::default()
    }
}

/// A fork of any case's target (ended at the case's `--resume-session-at`) resumes to what
/// the CLI sent for the source: the fork holds the conversation, nothing more or less.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn a_fork_of_every_case_resumes_like_its_source() {
    let Some(shared) = shared_dir("the oracle cases") else {
        return;
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in cases(&shared) {
        let dir = tempfile::tempdir().expect("tmp");
        let projects = lay_out(&case, dir.path());
        let store = Store::open(dir.path().join("s.db")).expect("open");
        import(&store, &[&projects]);
        let source = query::resolve_session(
            &store.reader().expect("reader"),
            case.str("target_session_id").expect("target"),
        )
        .expect("target");
        let forked = match store.fork(
            &source,
            &ForkOptions {
                up_to: case.str("resume_session_at").map(str::to_owned),
                ..ForkOptions::default()
            },
        ) {
            Ok(f) => f,
            Err(e) => {
                failures.push(format!("{}: {e}", case.name()));
                continue;
            }
        };
        let view = store
            .resume(&forked.session, &flags(&case))
            .expect("resume fork")
            .api_view();
        checked += 1;
        if Value::Array(view) != case.expected_view() {
            failures.push(format!("{}: API view differs", case.name()));
        }
    }
    assert!(checked >= 60, "only {checked}");
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Writes one corpus session of the SDK mutations into a projects tree.
pub fn mutation_session(shared: &Path, sid: &str, root: &Path) -> Option<PathBuf> {
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(shared.join("oracle/sdk/manifest.json")).ok()?,
    )
    .ok()?;
    for project in manifest["projects"].as_array()? {
        for s in project["sessions"].as_array()? {
            if s["session_id"] != sid || s["source"]["corpus"] != "public" {
                continue;
            }
            let src = shared
                .join("corpus/claude-code")
                .join(s["source"]["file"].as_str()?);
            let dir = root.join("projects").join(project["project_dir"].as_str()?);
            std::fs::create_dir_all(&dir).ok()?;
            std::fs::copy(src, dir.join(format!("{sid}.jsonl"))).ok()?;
            return Some(root.join("projects"));
        }
    }
    None
}

/// `--up-to` ends the fork where the SDK's `fork_session(up_to_message_id=…)` does: the
/// fork's visible messages are the source messages the SDK's fork copied (its `forkedFrom`
/// list; sessiondb keeps their uuids). `--title` is trimmed like the SDK's title.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn up_to_and_title_follow_the_sdk_fork() {
    let Some(shared) = shared_dir("the SDK mutations") else {
        return;
    };
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(shared.join("oracle/sdk/mutations/index.json")).expect("index"),
    )
    .expect("json");
    let mut checked = 0;
    let mut failures = Vec::new();
    for s in index["sessions"].as_array().expect("sessions") {
        let sid = s["session_id"].as_str().expect("sid");
        let mutations: Value = serde_json::from_str(
            &std::fs::read_to_string(
                shared.join(format!("oracle/sdk/mutations/{sid}/mutations.json")),
            )
            .expect("mutations"),
        )
        .expect("json");
        let dir = tempfile::tempdir().expect("tmp");
        let Some(projects) = mutation_session(&shared, sid, dir.path()) else {
            continue;
        };
        let store = Store::open(dir.path().join("s.db")).expect("open");
        import(&store, &[&projects]);
        let source = query::resolve_session(&store.reader().expect("r"), sid).expect("session");
        for fork in mutations["forks"].as_array().expect("forks") {
            let kwargs = &fork["kwargs"];
            let options = ForkOptions {
                up_to: kwargs["up_to_message_id"].as_str().map(str::to_owned),
                title: kwargs["title"].as_str().map(str::to_owned),
                session_id: None,
            };
            let forked = store.fork(&source, &options).expect("fork");
            let conn = store.reader().expect("reader");
            let visible: Vec<String> = sdk::get_session_messages(&conn, &forked.session, None, 0)
                .expect("messages")
                .into_iter()
                .map(|m| m.uuid)
                .collect();
            let want: Vec<String> = fork["fork_messages_forkedFrom"]
                .as_array()
                .expect("forkedFrom")
                .iter()
                .map(|v| v.as_str().expect("uuid").to_owned())
                .collect();
            checked += 1;
            if visible != want {
                failures.push(format!(
                    "{sid} {}: {} visible messages, the SDK's fork has {}",
                    fork["call"],
                    visible.len(),
                    want.len()
                ));
            }
            let info = query::get_session_info(&conn, &forked.session, None).expect("info");
            if let Some(title) = &options.title {
                assert_eq!(info.custom_title.as_deref(), Some(title.trim()));
            }
            let origin = fork_origin(&conn, &forked.session)
                .expect("origin")
                .expect("a fork has an origin");
            assert_eq!(origin.session_id, sid);
            assert_eq!(origin.up_to, options.up_to);
        }
    }
    assert!(checked >= 15, "only {checked} SDK forks compared");
    assert!(failures.is_empty(), "{failures:#?}");
}

pub const SMALL: &str = r#"{"type":"custom-title","customTitle":"Old title","sessionId":"s0000000-0000-4000-8000-000000000001"}
{"type":"tag","tag":"keep","sessionId":"s0000000-0000-4000-8000-000000000001"}
{"type":"worktree-state","worktreeSession":{"worktreePath":"/w/tree","originalCwd":"/w"},"sessionId":"s0000000-0000-4000-8000-000000000001"}
{"type":"pr-link","sessionId":"s0000000-0000-4000-8000-000000000001","prNumber":7,"prUrl":"https://example.invalid/pr/7","prRepository":"o/r","timestamp":"2026-01-01T00:00:00.000Z"}
{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"hello"},"uuid":"u1","timestamp":"2026-01-01T00:00:01.000Z","userType":"external","cwd":"/w","sessionId":"s0000000-0000-4000-8000-000000000001","version":"2.1.88","gitBranch":"main","slug":"plan-slug"}
{"parentUuid":"u1","isSidechain":false,"message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hi"}]},"type":"assistant","uuid":"a1","timestamp":"2026-01-01T00:00:02.000Z","userType":"external","cwd":"/w","sessionId":"s0000000-0000-4000-8000-000000000001","version":"2.1.88","gitBranch":"main","slug":"plan-slug"}
{"type":"content-replacement","sessionId":"s0000000-0000-4000-8000-000000000001","replacements":[{"kind":"tool-result","toolUseId":"toolu_1","replacement":"<persisted-output>x</persisted-output>"}]}
{"type":"tag","tag":"","sessionId":"s0000000-0000-4000-8000-000000000001"}
{"type":"tag","tag":"final","sessionId":"s0000000-0000-4000-8000-000000000001"}
"#;

fn small_store() -> (tempfile::TempDir, Store, sessiondb::model::SessionRef) {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("projects/-w");
    std::fs::create_dir_all(&project).expect("mkdir");
    std::fs::write(
        project.join("s0000000-0000-4000-8000-000000000001.jsonl"),
        SMALL,
    )
    .expect("write");
    let store = Store::open(dir.path().join("s.db")).expect("open");
    import(&store, &[&dir.path().join("projects")]);
    let source = query::resolve_session(
        &store.reader().expect("r"),
        "s0000000-0000-4000-8000-000000000001",
    )
    .expect("session");
    (dir, store, source)
}

fn export_lines(store: &Store, session: &sessiondb::model::SessionRef) -> Vec<Value> {
    let mut out = Vec::new();
    export::export_session(store, session, &mut out).expect("export");
    jsonl(&out)
}

#[test]
fn a_fork_inherits_the_title_drops_tag_and_worktree_state_and_rekeys_replacements() {
    let (_dir, store, source) = small_store();
    let forked = store.fork(&source, &ForkOptions::default()).expect("fork");
    let new_id = forked.session_id.as_str();
    let lines = export_lines(&store, &forked.session);
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "custom-title",
            "pr-link",
            "content-replacement",
            "user",
            "assistant"
        ]
    );
    assert_eq!(
        lines[0],
        json!({"type": "custom-title", "customTitle": "Old title", "sessionId": new_id})
    );
    assert_ne!(
        lines[1]["timestamp"], "2026-01-01T00:00:00.000Z",
        "pr-link gets a fresh timestamp"
    );
    assert_eq!(lines[2]["sessionId"], new_id);
    assert_eq!(lines[2]["replacements"][0]["toolUseId"], "toolu_1");
    for message in &lines[3..] {
        assert_eq!(message["sessionId"], new_id);
        assert!(message.get("slug").is_none(), "the fork has no plan slug");
        assert_eq!(message["cwd"], "/w");
    }
    assert_eq!(lines[4]["requestSessionId"], source.session_id);
    // The restored state: same conversation, replacements keyed to the fork, no worktree.
    let resumed = store
        .resume(&forked.session, &ResumeOptions::default())
        .expect("resume");
    assert_eq!(
        resumed.metadata.get("custom_title"),
        Some(&json!("Old title"))
    );
    // The tag stays with the source (the CLI's --fork-session copies it; issue 31).
    assert!(resumed.metadata.get("tag").is_none());
    assert!(resumed.metadata.get("worktree_state").is_none());
    assert_eq!(resumed.content_replacements.len(), 1);
    assert_eq!(resumed.write_target.session_id, new_id);
    // The source is untouched.
    let before = store
        .resume(&source, &ResumeOptions::default())
        .expect("resume");
    assert_eq!(before.api_view(), resumed.api_view());
    assert!(before.metadata.get("worktree_state").is_some());
}

#[test]
fn up_to_title_json_and_errors_through_the_cli() {
    let (dir, store, source) = small_store();
    drop(store);
    let db = dir.path().join("s.db");
    let out = sessiondb(
        &db,
        &[
            "fork".into(),
            source.session_id.clone(),
            "--up-to".into(),
            "u1".into(),
            "--title".into(),
            "  Branch one  ".into(),
            "--json".into(),
        ],
    );
    let report = stdout_json(&out, "fork --json");
    let new_id = report["session_id"]
        .as_str()
        .expect("session_id")
        .to_owned();
    assert_eq!(report["source_session_id"], source.session_id);
    assert_eq!(report["messages"], 1);
    let store = Store::open(&db).expect("open");
    let forked = query::resolve_session(&store.reader().expect("r"), &new_id).expect("fork");
    let lines = export_lines(&store, &forked);
    assert_eq!(
        lines[0],
        json!({"type": "custom-title", "customTitle": "Branch one", "sessionId": new_id})
    );
    assert_eq!(lines.last().expect("last")["uuid"], "u1");
    // The title resolves the fork.
    let by_title =
        query::resolve_session(&store.reader().expect("r"), "Branch one").expect("title");
    assert_eq!(by_title.session_id, new_id);
    drop(store);
    let out = sessiondb(
        &db,
        &[
            "fork".into(),
            source.session_id.clone(),
            "--up-to".into(),
            "nope".into(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
    let out = sessiondb(
        &db,
        &[
            "fork".into(),
            source.session_id.clone(),
            "--session-id".into(),
            new_id.clone(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "a used id is refused");
}
