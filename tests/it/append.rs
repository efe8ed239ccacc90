//! The record API: the real CLI's next turn appended through `Store::append` gives the lines
//! and the request the CLI wrote and sent; resume/fork decide where appends go; a property
//! test (append then resume returns what was appended); concurrent writers; a killed writer.

use crate::resume_cli::{cases, lay_out, Case};
use crate::support::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use sessiondb::fork::ForkOptions;
use sessiondb::model::SessionRef;
use sessiondb::record::{AppendOptions, Parent};
use sessiondb::resume::{normalize, ResumeOptions};
use sessiondb::{export, query, Store};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

fn jsonl(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .map(|l| serde_json::from_slice(l).expect("a JSON line"))
        .collect()
}

fn export_bytes(store: &Store, session: &SessionRef) -> Vec<u8> {
    let mut out = Vec::new();
    export::export_session(store, session, &mut out).expect("export");
    out
}

fn resolve(store: &Store, arg: &str) -> SessionRef {
    query::resolve_session(&store.reader().expect("reader"), arg).expect("session")
}

fn options(case: &Case) -> ResumeOptions {
    ResumeOptions {
        at: case.str("resume_session_at").map(str::to_owned),
        interactive: case.json["interactive"].as_bool() == Some(true),
        continue_interrupted: case.json["env"]["CLAUDE_CODE_RESUME_INTERRUPTED_TURN"].as_str()
            == Some("1"),
        ..ResumeOptions::default()
    }
}

/// The records of the case's new turn, as the CLI wrote them into the target's file (found
/// in a later step of the scenario), in file order.
fn new_turn_lines(shared: &Path, case: &Case) -> Option<Vec<String>> {
    let uuids: HashSet<&str> = case.json["derived"]["new_turn_records"]
        .as_array()?
        .iter()
        .filter_map(|r| r["uuid"].as_str())
        .collect();
    let project = case.str("project_dir_name")?;
    let target = case.str("target_session_id")?;
    let step = case.json["step"].as_i64()?;
    for later in cases(shared) {
        if later.str("scenario") != case.str("scenario") || later.json["step"].as_i64()? <= step {
            continue;
        }
        let path = later
            .dir
            .join("projects")
            .join(project)
            .join(format!("{target}.jsonl"));
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let lines: Vec<String> = text
            .lines()
            .filter(|l| {
                serde_json::from_str::<Value>(l)
                    .ok()
                    .and_then(|v| v["uuid"].as_str().map(|u| uuids.contains(u)))
                    == Some(true)
            })
            .map(str::to_owned)
            .collect();
        if lines.len() == uuids.len() {
            return Some(lines);
        }
    }
    None
}

/// For every resume/continue case whose next turn the CLI wrote to the same file: append the
/// resumed conversation followed by that turn (as the CLI's QueryEngine records the whole
/// array). The recorded prefix is skipped, the turn hangs off the resumed conversation, the
/// lines stored are byte for byte the lines the CLI wrote (when repair added nothing to write
/// back), and resuming then gives the request the CLI sent.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn the_cli_next_turn_appended_gives_its_lines_and_its_request() {
    let Some(shared) = shared_dir("the oracle cases") else {
        return;
    };
    let mut checked = 0;
    let mut byte_equal = 0;
    let mut failures = Vec::new();
    for case in cases(&shared) {
        if case.str("mode") == Some("fork")
            || case.json["checks"]["subtraction_exact"].as_bool() != Some(true)
        {
            continue;
        }
        let Some(turn) = new_turn_lines(&shared, &case) else {
            continue;
        };
        let dir = tempfile::tempdir().expect("tmp");
        let projects = lay_out(&case, dir.path());
        let store = Store::open(dir.path().join("s.db")).expect("open");
        import(&store, &[&projects]);
        let session = resolve(&store, case.str("target_session_id").expect("target"));
        let opts = options(&case);
        let resumed = store.resume(&session, &opts).expect("resume");
        let synthetic = resumed
            .messages
            .iter()
            .filter(|m| m["synthetic"] == true)
            .count() as u64;
        let mut entries = resumed.messages.clone();
        entries.extend(
            turn.iter()
                .map(|l| serde_json::from_str::<Value>(l).expect("json")),
        );
        let report = store.append(&session, &entries).expect("append");
        assert_eq!(
            report.messages,
            synthetic + turn.len() as u64,
            "{}: only the repair additions and the new turn are written",
            case.name()
        );
        checked += 1;
        let exported = String::from_utf8(export_bytes(&store, &session)).expect("utf-8");
        let stored: Vec<&str> = exported.lines().collect();
        if synthetic == 0 {
            let tail = &stored[stored.len() - turn.len()..];
            if tail != turn.iter().map(String::as_str).collect::<Vec<_>>() {
                failures.push(format!(
                    "{}: stored lines differ from the CLI's",
                    case.name()
                ));
                continue;
            }
            byte_equal += 1;
        }
        if opts.at.is_some() {
            // After a rewind the next plain resume is not the rewound request: it pulls the
            // rest of a split assistant message back in (the rewind scenario's note).
            continue;
        }
        let after = store
            .resume(
                &session,
                &ResumeOptions {
                    at: None,
                    ..opts.clone()
                },
            )
            .expect("resume after append");
        // The request is the conversation plus the new prompt; a resume of a session that
        // ends in a prompt adds the R12 sentinel after it, which the request does not have.
        let mut messages = after.messages.clone();
        while messages.last().is_some_and(|m| m["synthetic"] == true) {
            messages.pop();
        }
        let want: Value = serde_json::from_str(
            &std::fs::read_to_string(case.dir.join("expected-request-messages.json"))
                .expect("expected request"),
        )
        .expect("json");
        if Value::Array(normalize(&messages)) != want {
            failures.push(format!("{}: request differs", case.name()));
        }
    }
    assert!(checked >= 40, "only {checked} cases");
    assert!(byte_equal >= 30, "only {byte_equal} byte-compared");
    assert!(failures.is_empty(), "{failures:#?}");
}

fn msg(kind: &str, uuid: &str, text: &str) -> Value {
    match kind {
        "user" => {
            json!({"type": "user", "message": {"role": "user", "content": text}, "uuid": uuid, "timestamp": "2026-01-01T00:00:00.000Z"})
        }
        _ => {
            json!({"type": "assistant", "message": {"id": format!("msg_{uuid}"), "role": "assistant", "content": [{"type": "text", "text": text}]}, "uuid": uuid, "timestamp": "2026-01-01T00:00:00.000Z"})
        }
    }
}

/// A one-session project with a two-message conversation, imported.
fn small(dir: &Path) -> (Store, SessionRef) {
    let project = dir.join("projects/-w");
    std::fs::create_dir_all(&project).expect("mkdir");
    std::fs::write(
        project.join("s0000000-0000-4000-8000-000000000001.jsonl"),
        concat!(
            r#"{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"hello"},"uuid":"u1","timestamp":"2026-01-01T00:00:01.000Z","userType":"external","cwd":"/w","sessionId":"s0000000-0000-4000-8000-000000000001","version":"2.1.88","gitBranch":"main"}"#,
            "\n",
            r#"{"parentUuid":"u1","isSidechain":false,"message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hi"}]},"type":"assistant","uuid":"a1","timestamp":"2026-01-01T00:00:02.000Z","userType":"external","cwd":"/w","sessionId":"s0000000-0000-4000-8000-000000000001","version":"2.1.88","gitBranch":"main"}"#
        ),
    )
    .expect("write");
    let store = Store::open(dir.join("s.db")).expect("open");
    import(&store, &[&dir.join("projects")]);
    let session = resolve(&store, "s0000000-0000-4000-8000-000000000001");
    (store, session)
}

fn chain_uuids(store: &Store, session: &SessionRef) -> Vec<String> {
    store
        .resume(session, &ResumeOptions::default())
        .expect("resume")
        .messages
        .iter()
        .filter(|m| m["synthetic"] != true)
        .map(|m| m["uuid"].as_str().expect("uuid").to_owned())
        .collect()
}

#[test]
fn after_resume_appends_go_to_the_session_and_after_fork_to_the_fork() {
    let dir = tempfile::tempdir().expect("tmp");
    let (store, session) = small(dir.path());
    let resumed = store
        .resume(&session, &ResumeOptions::default())
        .expect("resume");
    assert!(!resumed.write_target.fork);
    let target = resolve(&store, &resumed.write_target.session_id);
    store
        .append(
            &target,
            &[msg("user", "u2", "more"), msg("assistant", "a2", "ok")],
        )
        .expect("append");
    assert_eq!(chain_uuids(&store, &session), ["u1", "a1", "u2", "a2"]);
    let lines = jsonl(&export_bytes(&store, &session));
    assert_eq!(lines[2]["parentUuid"], "a1");
    assert_eq!(lines[2]["sessionId"], session.session_id);
    // Session fields come from the session's last message when the entry has none.
    assert_eq!(lines[2]["cwd"], "/w");
    assert_eq!(lines[2]["version"], "2.1.88");

    let forked = store.fork(&session, &ForkOptions::default()).expect("fork");
    let before = export_bytes(&store, &session);
    store
        .append(&forked.session, &[msg("user", "u3", "forked turn")])
        .expect("append to fork");
    assert_eq!(
        export_bytes(&store, &session),
        before,
        "the source is untouched"
    );
    assert_eq!(
        chain_uuids(&store, &forked.session),
        ["u1", "a1", "u2", "a2", "u3"]
    );
    let last = jsonl(&export_bytes(&store, &forked.session))
        .pop()
        .expect("line");
    assert_eq!(last["sessionId"], forked.session_id);
    // A listing sees the write.
    let info =
        query::get_session_info(&store.reader().expect("r"), &forked.session, None).expect("info");
    assert_eq!(info.message_count, 5);
}

#[test]
fn parent_options_and_idempotence() {
    let dir = tempfile::tempdir().expect("tmp");
    let (store, session) = small(dir.path());
    let root = AppendOptions {
        parent: Parent::Root,
    };
    store
        .append_with(&session, &[msg("user", "r1", "new root")], &root)
        .expect("root");
    let lines = jsonl(&export_bytes(&store, &session));
    assert_eq!(lines[2]["parentUuid"], Value::Null);
    let at = AppendOptions {
        parent: Parent::Uuid("u1".into()),
    };
    store
        .append_with(&session, &[msg("assistant", "b1", "branch")], &at)
        .expect("branch");
    assert_eq!(
        jsonl(&export_bytes(&store, &session))[3]["parentUuid"],
        "u1"
    );
    let missing = AppendOptions {
        parent: Parent::Uuid("nope".into()),
    };
    assert!(store
        .append_with(&session, &[msg("user", "x", "x")], &missing)
        .is_err());
    // The same batch again writes nothing.
    let batch = [msg("user", "u9", "again"), msg("assistant", "a9", "again")];
    assert_eq!(store.append(&session, &batch).expect("first").written, 2);
    let again = store.append(&session, &batch).expect("second");
    assert_eq!((again.written, again.duplicates), (0, 2));
    assert_eq!(again.leaf_uuid.as_deref(), Some("a9"));
}

#[test]
fn a_file_without_final_newline_gets_one_before_appended_lines() {
    let dir = tempfile::tempdir().expect("tmp");
    let (store, session) = small(dir.path());
    store
        .append(
            &session,
            &[json!({"type": "tag", "tag": "t", "sessionId": session.session_id})],
        )
        .expect("append");
    let bytes = export_bytes(&store, &session);
    assert!(bytes.ends_with(b"}\n"));
    assert_eq!(jsonl(&bytes).len(), 3, "no glued line");
    let info = query::get_session_info(&store.reader().expect("r"), &session, None).expect("i");
    assert_eq!(info.tag.as_deref(), Some("t"));
}

#[test]
fn the_cli_names_a_bad_line_and_stores_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let (store, session) = small(dir.path());
    drop(store);
    let db = dir.path().join("s.db");
    let before = std::fs::read(&db).expect("db");
    let run = |input: &str, extra: &[&str]| {
        let mut command = sessiondb_command(&db);
        command.arg("append").arg(&session.session_id).args(extra);
        output_with_stdin(command, input.as_bytes())
    };
    let bad = format!(
        "{}\n\n{{\"type\":\"user\",\"uuid\":\"z\"}}\n",
        msg("user", "ok", "fine")
    );
    let out = run(&bad, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 3"), "{err}");
    assert!(err.contains("\"message\" object"), "{err}");
    let out = run("{not json\n", &[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1: not valid JSON"));
    assert_eq!(std::fs::read(&db).expect("db"), before, "nothing stored");
    let good = format!(
        "{}\n{}\n",
        msg("user", "u2", "a"),
        msg("assistant", "a2", "b")
    );
    let out = run(&good, &["--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["written"], 2);
    assert_eq!(report["leaf_uuid"], "a2");
}

/// Appends through the CLI, reading `batch` on stdin.
fn cli_append(db: &Path, session: &str, batch: &Path) -> std::process::Output {
    sessiondb_command(db)
        .arg("append")
        .arg(session)
        .stdin(std::fs::File::open(batch).expect("batch"))
        .output()
        .expect("run")
}

fn write_batch(path: &Path, entries: &[Value]) -> PathBuf {
    let mut text = String::new();
    for e in entries {
        text.push_str(&e.to_string());
        text.push('\n');
    }
    std::fs::write(path, text).expect("write batch");
    path.to_path_buf()
}

fn uuid_counts(store: &Store, session: &SessionRef) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for line in jsonl(&export_bytes(store, session)) {
        if let Some(u) = line["uuid"].as_str() {
            *counts.entry(u.to_owned()).or_default() += 1;
        }
    }
    counts
}

/// Two processes append overlapping batches to one session at the same time: every uuid is
/// stored exactly once.
#[test]
fn two_processes_appending_at_once_lose_nothing_and_duplicate_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let (store, session) = small(dir.path());
    drop(store);
    let db = dir.path().join("s.db");
    let rounds = 8;
    let per = 40;
    let mut batches: Vec<Vec<PathBuf>> = vec![Vec::new(), Vec::new()];
    let mut expected = HashSet::new();
    for (w, list) in batches.iter_mut().enumerate() {
        for r in 0..rounds {
            let mut entries = Vec::new();
            for i in 0..per {
                // Half of each batch is shared with the other writer's batch of that round.
                let uuid = if i % 2 == 0 {
                    format!("shared-{r}-{i}")
                } else {
                    format!("w{w}-{r}-{i}")
                };
                expected.insert(uuid.clone());
                let kind = if i % 2 == 0 { "user" } else { "assistant" };
                entries.push(msg(kind, &uuid, &format!("round {r} entry {i}")));
            }
            list.push(write_batch(
                &dir.path().join(format!("b{w}-{r}.jsonl")),
                &entries,
            ));
        }
    }
    let handles: Vec<_> = batches
        .into_iter()
        .map(|list| {
            let db = db.clone();
            let sid = session.session_id.clone();
            std::thread::spawn(move || {
                for batch in list {
                    let out = cli_append(&db, &sid, &batch);
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("writer");
    }
    let store = Store::open(&db).expect("open");
    let counts = uuid_counts(&store, &session);
    for uuid in &expected {
        assert_eq!(counts.get(uuid), Some(&1), "{uuid}");
    }
    assert_eq!(counts.len(), expected.len() + 2);
}

/// kill -9 during `sessiondb append` leaves the session with all of the batch or none of it.
#[test]
fn a_killed_append_leaves_the_session_as_before_the_batch() {
    let dir = tempfile::tempdir().expect("tmp");
    let (store, session) = small(dir.path());
    drop(store);
    let db = dir.path().join("s.db");
    let n = 60_000;
    let entries: Vec<Value> = (0..n)
        .map(|i| {
            let kind = if i % 2 == 0 { "user" } else { "assistant" };
            msg(
                kind,
                &format!("k-{i}"),
                &format!("entry {i} with some padding text"),
            )
        })
        .collect();
    let batch = write_batch(&dir.path().join("big.jsonl"), &entries);
    let mut saw_none = false;
    for delay_ms in [30u64, 150, 400, 800, 1500] {
        let mut append = sessiondb_command(&db);
        append
            .arg("append")
            .arg(&session.session_id)
            .stdin(std::fs::File::open(&batch).expect("batch"));
        let status = kill_after(append, std::time::Duration::from_millis(delay_ms));
        let store = Store::open(&db).expect("opens after a kill");
        let ok: String = store
            .reader()
            .expect("r")
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("check");
        assert_eq!(ok, "ok");
        let rows = jsonl(&export_bytes(&store, &session)).len();
        assert!(
            rows == 2 || rows == 2 + n,
            "after a kill at {delay_ms} ms: {rows} lines"
        );
        if rows == 2 + n {
            assert!(status.success() || status.code().is_none());
            return; // the batch committed before the kill: nothing more to try
        }
        saw_none = true;
    }
    assert!(saw_none);
}

/// Generated conversations: a stored prefix, then a batch (optionally starting with part of
/// the stored conversation, with metadata records mixed in) appended; resume returns the
/// stored conversation followed by exactly the appended messages, in order, with their
/// content, and a second append of the same batch writes nothing.
#[derive(Debug, Clone)]
struct Scenario {
    stored: usize,
    replay: usize,
    new: Vec<(bool, String)>,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        0usize..6,
        0usize..6,
        prop::collection::vec((any::<bool>(), "[a-z ]{1,12}"), 1..12),
    )
        .prop_map(|(stored, replay, new)| Scenario {
            stored,
            replay: replay.min(stored),
            new,
        })
}

fn conversation(prefix: &str, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let kind = if i % 2 == 0 { "user" } else { "assistant" };
            msg(kind, &format!("{prefix}{i}"), &format!("{prefix} text {i}"))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn append_then_resume_returns_what_was_appended(s in scenario()) {
        let dir = tempfile::tempdir().expect("tmp");
        let store = Store::open(dir.path().join("s.db")).expect("open");
        // A session to write to: one stored title line, then `stored` messages appended.
        let project = dir.path().join("projects/-p");
        std::fs::create_dir_all(&project).expect("mkdir");
        std::fs::write(project.join("p-session.jsonl"), "{\"type\":\"custom-title\",\"customTitle\":\"t\",\"sessionId\":\"p-session\"}\n").expect("write");
        import(&store, &[&dir.path().join("projects")]);
        let session = resolve(&store, "p-session");
        let stored = conversation("s", s.stored);
        store.append(&session, &stored).expect("store prefix");
        let mut batch: Vec<Value> = stored[..s.replay].to_vec();
        let mut appended = Vec::new();
        for (i, (is_user, text)) in s.new.iter().enumerate() {
            let uuid = format!("n{i}");
            batch.push(msg(if *is_user { "user" } else { "assistant" }, &uuid, text));
            if i % 3 == 1 {
                batch.push(json!({"type": "tag", "tag": text, "sessionId": "p-session"}));
            }
            appended.push(uuid);
        }
        let report = store.append(&session, &batch).expect("append");
        prop_assert_eq!(report.messages as usize, appended.len());
        prop_assert_eq!(report.duplicates as usize, s.replay);
        let resumed = store.resume(&session, &ResumeOptions::default()).expect("resume");
        let got: Vec<&Value> = resumed.messages.iter().filter(|m| m["synthetic"] != true).collect();
        // A replayed prefix makes its last message the parent (a branch off it); without one
        // the batch continues the stored leaf.
        let kept = if s.replay > 0 { s.replay } else { s.stored };
        let want: Vec<String> = stored[..kept].iter().map(|m| m["uuid"].as_str().unwrap().to_owned())
            .chain(appended.iter().cloned()).collect();
        let got_uuids: Vec<String> = got.iter().map(|m| m["uuid"].as_str().unwrap().to_owned()).collect();
        prop_assert_eq!(&got_uuids, &want);
        for m in &got {
            let original = stored.iter().chain(batch.iter()).find(|b| b["uuid"] == m["uuid"]).unwrap();
            prop_assert_eq!(&m["message"], &original["message"]);
            prop_assert_eq!(&m["sessionId"], &json!("p-session"));
        }
        let again = store.append(&session, &batch).expect("again");
        prop_assert_eq!(again.messages, 0);
        prop_assert_eq!(again.duplicates as usize, s.replay + appended.len());
    }
}

/// A compact boundary appended starts a new root that keeps its logical parent; resume
/// continues from the boundary.
#[test]
fn an_appended_compact_boundary_is_a_new_root() {
    let dir = tempfile::tempdir().expect("tmp");
    let (store, session) = small(dir.path());
    let boundary = json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": false, "timestamp": "2026-01-01T00:00:03.000Z", "uuid": "cb", "level": "info", "compactMetadata": {"trigger": "manual", "preTokens": 100}});
    let summary = json!({"type": "user", "message": {"role": "user", "content": "summary of before"}, "isCompactSummary": true, "uuid": "sum", "timestamp": "2026-01-01T00:00:03.000Z"});
    store
        .append(
            &session,
            &[boundary, summary, msg("assistant", "after", "continuing")],
        )
        .expect("append");
    let lines = jsonl(&export_bytes(&store, &session));
    assert_eq!(lines[2]["parentUuid"], Value::Null);
    assert_eq!(lines[2]["logicalParentUuid"], "a1");
    assert_eq!(lines[3]["parentUuid"], "cb");
    assert_eq!(chain_uuids(&store, &session), ["cb", "sum", "after"]);
}

/// The session's lines that sessiondb wrote, through `sessiondb resume --json`: the
/// write target of a resume is the session itself.
#[test]
fn resume_json_names_the_write_target() {
    let dir = tempfile::tempdir().expect("tmp");
    let (store, session) = small(dir.path());
    drop(store);
    let out = sessiondb(
        &dir.path().join("s.db"),
        &["resume".into(), session.session_id.clone(), "--json".into()],
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["write_target"]["session_id"], session.session_id);
    assert_eq!(v["write_target"]["fork"], false);
}
