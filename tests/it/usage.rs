//! The usage projection (docs/usage.md): each dedupe case, on every backend (SQLite and,
//! when `SESSIONDB_TEST_PG` names a server, a team store), through `stats --json`, with the
//! same answers on both.

use crate::conformance::{backends, Backend};
use crate::support::*;
use serde_json::{json, Value};
use sessiondb::query::SessionFilter;
use std::path::Path;

const OPUS: &str = "claude-opus-4-5-20251101";
const MAIN: &str = "aaaaaaaa-0000-4000-8000-000000000001";

/// An assistant record of response `id`/`request` with these counts.
pub fn assistant(
    session: &str,
    id: &str,
    request: Option<&str>,
    at: &str,
    input: i64,
    output: i64,
) -> String {
    let mut r = json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/w/app",
        "sessionId": session, "version": "2.0.0", "type": "assistant",
        "uuid": uuid::Uuid::new_v4().to_string(), "timestamp": at,
        "message": {"id": id, "type": "message", "model": OPUS, "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "usage": {"input_tokens": input, "output_tokens": output,
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}},
    });
    if let Some(request) = request {
        r["requestId"] = json!(request);
    }
    serde_json::to_string(&r).expect("JSON")
}

fn write(path: &Path, lines: &[String]) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, lines.join("\n") + "\n").expect("write");
}

fn stats(b: &Backend, args: &[&str]) -> Value {
    let target = b.target();
    let mut all = vec!["stats"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = sessiondb_ok(&target, &all);
    serde_json::from_slice(&out).expect("stats --json is JSON")
}

/// (period, input, output) of each row.
fn counts(v: &Value) -> Vec<(String, i64, i64)> {
    v.as_array()
        .expect("a list of rows")
        .iter()
        .map(|r| {
            (
                r["period"].as_str().expect("period").to_owned(),
                r["input_tokens"].as_i64().expect("input"),
                r["output_tokens"].as_i64().expect("output"),
            )
        })
        .collect()
}

/// Imports `tree` into a fresh store of each backend and returns each one's session report.
fn session_reports(tree: &Path) -> Vec<(&'static str, Value)> {
    backends("the usage dedupe cases")
        .into_iter()
        .map(|b| {
            sessiondb_ok(&b.target(), &["import", &tree.to_string_lossy()]);
            (b.name, stats(&b, &["session"]))
        })
        .collect()
}

fn same_on_every_backend(got: &[(&str, Value)]) -> Value {
    for (name, v) in got {
        assert_eq!(v, &got[0].1, "{name} answers as {}", got[0].0);
    }
    got[0].1.clone()
}

#[test]
fn streamed_parts_count_once_with_their_final_counts() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir
        .path()
        .join("projects/-w-app")
        .join(format!("{MAIN}.jsonl"));
    write(
        &file,
        &[
            assistant(
                MAIN,
                "msg_1",
                Some("req_1"),
                "2026-01-01T10:00:00.000Z",
                7,
                25,
            ),
            assistant(
                MAIN,
                "msg_1",
                Some("req_1"),
                "2026-01-01T10:00:01.000Z",
                7,
                25,
            ),
            assistant(
                MAIN,
                "msg_1",
                Some("req_1"),
                "2026-01-01T10:00:02.000Z",
                7,
                302,
            ),
            // No requestId (old CLIs, proxies): the message id alone names the response.
            assistant(MAIN, "msg_2", None, "2026-01-01T10:01:00.000Z", 100, 0),
            assistant(MAIN, "msg_2", None, "2026-01-01T10:01:01.000Z", 100, 40),
            // No message id: nothing to tell copies by, each is counted.
            assistant(MAIN, "", None, "2026-01-01T10:02:00.000Z", 1, 1),
        ],
    );
    let v = same_on_every_backend(&session_reports(&dir.path().join("projects")));
    assert_eq!(counts(&v), [(MAIN.to_owned(), 108, 343)]);
}

#[test]
fn a_fork_a_resumed_copy_and_a_sidechain_replay_add_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("projects/-w-app");
    let first = assistant(
        MAIN,
        "msg_1",
        Some("req_1"),
        "2026-01-01T10:00:00.000Z",
        10,
        100,
    );
    // A resumed copy: a new session file that starts with the old session's records.
    let resumed = "aaaaaaaa-0000-4000-8000-000000000002";
    write(
        &project.join(format!("{resumed}.jsonl")),
        &[
            first.replace(MAIN, resumed),
            assistant(
                resumed,
                "msg_2",
                Some("req_2"),
                "2026-01-01T11:00:00.000Z",
                20,
                200,
            ),
        ],
    );
    // A sub-agent: its transcript replays the parent's record, and its own response rolls
    // up to the parent session; CLI 2.1.x also wrote that response inside the parent's
    // agent_progress record.
    let own = assistant(
        MAIN,
        "msg_3",
        Some("req_3"),
        "2026-01-01T10:05:00.000Z",
        30,
        300,
    );
    write(
        &project.join(MAIN).join("subagents/agent-a1.jsonl"),
        &[first.clone(), own.clone()],
    );
    let progress = json!({"type": "progress", "sessionId": MAIN, "uuid": "p1",
        "timestamp": "2026-01-01T10:05:00.000Z",
        "data": {"type": "agent_progress", "agentId": "a1",
            "message": serde_json::from_str::<Value>(&own).expect("JSON")}});
    let main_file = project.join(format!("{MAIN}.jsonl"));
    write(&main_file, &[first.clone(), progress.to_string()]);

    for mut b in backends("the usage fork case") {
        sessiondb_ok(
            &b.target(),
            &["import", &dir.path().join("projects").to_string_lossy()],
        );
        let before = counts(&stats(&b, &["session"]));
        assert_eq!(
            before,
            [(MAIN.to_owned(), 40, 400), (resumed.to_owned(), 20, 200)],
            "{}: the parent counts its sub-agent; the resumed copy only its new response",
            b.name
        );
        // A fork copies every line under a new session id: the responses it shares are
        // still counted once, by the session first in (project, session id) order.
        // Kept in the store (no write-back): a fork file written into the tree would be
        // imported by the next backend's pass as a session of its own.
        sessiondb_ok(&b.target(), &["fork", MAIN, "--no-write-back"]);
        let after = counts(&stats(&b, &["session"]));
        let sum = |rows: &[(String, i64, i64)]| {
            rows.iter()
                .map(|r| (r.1, r.2))
                .fold((0, 0), |a, r| (a.0 + r.0, a.1 + r.1))
        };
        assert_eq!(sum(&after), sum(&before), "{}: a fork adds nothing", b.name);
        let fork = after.iter().find(|r| r.0 != MAIN && r.0 != resumed);
        if let Some((id, input, _)) = fork {
            assert!(
                id.as_str() < MAIN,
                "{}: only a fork sorting first takes a response",
                b.name
            );
            assert_eq!(
                *input, 10,
                "{}: the fork keeps only the copy of msg_1",
                b.name
            );
        }
        let daily = counts(&stats(&b, &["daily"]));
        assert_eq!(daily, [("2026-01-01".to_owned(), 60, 600)], "{}", b.name);
        b.reset();
    }
}

#[test]
fn one_session_from_two_machines_counts_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let lines = [
        assistant(
            MAIN,
            "msg_1",
            Some("req_1"),
            "2026-01-01T10:00:00.000Z",
            10,
            100,
        ),
        assistant(
            MAIN,
            "msg_2",
            Some("req_2"),
            "2026-01-01T10:01:00.000Z",
            20,
            200,
        ),
    ];
    // The same session under the folder each machine's home gives it.
    write(
        &dir.path()
            .join("alice/-home-alice-app")
            .join(format!("{MAIN}.jsonl")),
        &lines,
    );
    write(
        &dir.path()
            .join("mac/-Users-alice-app")
            .join(format!("{MAIN}.jsonl")),
        &lines[..1],
    );
    let got: Vec<(&str, Value)> = backends("the usage two-machines case")
        .into_iter()
        .map(|b| {
            for tree in ["alice", "mac"] {
                sessiondb_ok(
                    &b.target(),
                    &["import", &dir.path().join(tree).to_string_lossy()],
                );
            }
            (b.name, stats(&b, &["monthly"]))
        })
        .collect();
    let v = same_on_every_backend(&got);
    assert_eq!(counts(&v), [("2026-01".to_owned(), 30, 300)]);
}

#[test]
fn reindex_rebuilds_the_projection_to_the_same_answers() {
    for b in backends("the usage reindex case") {
        sessiondb_ok(&b.target(), &["import", &samples().to_string_lossy()]);
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir
            .path()
            .join("projects/-w-app")
            .join(format!("{MAIN}.jsonl"));
        write(
            &file,
            &[
                assistant(
                    MAIN,
                    "msg_1",
                    Some("req_1"),
                    "2026-01-01T10:00:00.000Z",
                    7,
                    3,
                ),
                assistant(
                    MAIN,
                    "msg_1",
                    Some("req_1"),
                    "2026-01-01T10:00:02.000Z",
                    7,
                    302,
                ),
            ],
        );
        sessiondb_ok(
            &b.target(),
            &["import", &dir.path().join("projects").to_string_lossy()],
        );
        let before = stats(&b, &["session", "daily", "--breakdown"]);
        sessiondb_ok(&b.target(), &["reindex"]);
        assert_eq!(
            stats(&b, &["session", "daily", "--breakdown"]),
            before,
            "{}",
            b.name
        );
        assert!(before["session"].as_array().is_some_and(|a| !a.is_empty()));
    }
}

#[test]
fn a_deleted_copys_responses_go_to_the_next_copy_at_once_as_reindex_gives() {
    let dir = tempfile::tempdir().expect("tmp");
    let copy = "bbbbbbbb-0000-4000-8000-000000000002";
    let at = |s: u32| format!("2026-01-01T10:0{s}:00.000Z");
    let shared = [
        assistant(MAIN, "msg_1", Some("req_1"), &at(0), 10, 100),
        assistant(MAIN, "msg_2", Some("req_2"), &at(1), 20, 200),
    ];
    write(
        &dir.path().join("-w-app").join(format!("{MAIN}.jsonl")),
        &shared,
    );
    // A resumed copy: the same responses, then one of its own.
    let mut lines = shared.to_vec();
    lines.push(assistant(copy, "msg_3", Some("req_3"), &at(2), 5, 50));
    write(
        &dir.path().join("-w-app").join(format!("{copy}.jsonl")),
        &lines,
    );
    let got: Vec<(&str, Value)> = backends("the usage deleted-copy case")
        .into_iter()
        .map(|b| {
            sessiondb_ok(&b.target(), &["import", &dir.path().to_string_lossy()]);
            // The shared responses are the first session's (first in session id order).
            let mut before = counts(&stats(&b, &["session"]));
            before.sort();
            assert_eq!(
                before,
                [(MAIN.to_owned(), 30, 300), (copy.to_owned(), 5, 50)],
                "{}",
                b.name
            );
            // Deleted, its responses are counted in the copy that stays, at once (a fork
            // deleted from the web viewer must not take its original's responses along)...
            sessiondb_ok(&b.target(), &["delete", &format!("-w-app/{MAIN}"), "-y"]);
            let at_once = stats(&b, &["session"]);
            assert_eq!(counts(&at_once), [(copy.to_owned(), 35, 350)], "{}", b.name);
            // ...as a rebuild from the stored lines gives.
            sessiondb_ok(&b.target(), &["reindex"]);
            assert_eq!(stats(&b, &["session"]), at_once, "{}", b.name);
            (b.name, at_once)
        })
        .collect();
    let v = same_on_every_backend(&got);
    assert_eq!(counts(&v), [(copy.to_owned(), 35, 350)]);
}

/// A fork shares every response of its original, and only one of the two counts them (the
/// first in session id order; the fork's id is random, so either). Deleting the one that
/// counts them leaves them counted in the other, at once and after a rebuild, on every
/// backend.
#[test]
fn deleting_a_session_whose_responses_a_fork_shares_keeps_them_counted() {
    let dir = tempfile::tempdir().expect("tmp");
    let at = |s: u32| format!("2026-01-01T10:0{s}:00.000Z");
    // One chain (a fork copies the chain that ends at the last record).
    let first = assistant(MAIN, "msg_1", Some("req_1"), &at(0), 10, 100);
    let mut second: Value =
        serde_json::from_str(&assistant(MAIN, "msg_2", Some("req_2"), &at(1), 20, 200))
            .expect("JSON");
    second["parentUuid"] = serde_json::from_str::<Value>(&first).expect("JSON")["uuid"].clone();
    write(
        &dir.path().join("-w-app").join(format!("{MAIN}.jsonl")),
        &[first, second.to_string()],
    );
    let got: Vec<(&str, Value)> = backends("the usage deleted-fork case")
        .into_iter()
        .map(|b| {
            let sessions = |b: &Backend| {
                let mut s = counts(&stats(b, &["session"]));
                s.sort();
                s
            };
            sessiondb_ok(&b.target(), &["import", &dir.path().to_string_lossy()]);
            // Kept in the store (no write-back), so that the tree stays the same for the
            // next backend.
            sessiondb_ok(&b.target(), &["fork", MAIN, "--no-write-back"]);
            let before = sessions(&b);
            assert_eq!(before.len(), 1, "{}: one copy counts: {before:?}", b.name);
            let (counting, input, output) = before[0].clone();
            assert_eq!((input, output), (30, 300), "{}", b.name);
            let resolved = |id: &str| {
                b.db.resolve_session(&format!("-w-app/{id}"))
                    .unwrap_or_else(|e| panic!("{}: {id}: {e}", b.name))
            };
            let all =
                b.db.list_sessions(&SessionFilter {
                    include_hidden: true,
                    ..SessionFilter::default()
                })
                .expect("list");
            assert_eq!(all.len(), 2, "{}: the original and its fork", b.name);
            let other = all
                .iter()
                .map(|s| s.session_id.clone())
                .find(|id| *id != counting)
                .expect("the copy that does not count");
            b.db.delete_session(&resolved(&counting))
                .unwrap_or_else(|e| panic!("{}: delete: {e}", b.name));
            let at_once = stats(&b, &["session"]);
            assert_eq!(
                counts(&at_once),
                [(other.clone(), 30, 300)],
                "{}: the copy that stays counts them at once",
                b.name
            );
            sessiondb_ok(&b.target(), &["reindex"]);
            assert_eq!(stats(&b, &["session"]), at_once, "{}: as a rebuild", b.name);
            // The totals, the same on every backend (the fork's id is not).
            (b.name, stats(&b, &["monthly"]))
        })
        .collect();
    let v = same_on_every_backend(&got);
    assert_eq!(counts(&v), [("2026-01".to_owned(), 30, 300)]);
}

/// One session's lines: `n` responses, each streamed as three records whose output grows.
fn streamed_session(session: &str, n: usize) -> Vec<String> {
    (0..n)
        .flat_map(|i| {
            let at = format!("2026-02-01T{:02}:{:02}:00.000Z", i / 60, i % 60);
            let (id, req) = (format!("msg_{session}_{i}"), format!("req_{session}_{i}"));
            [1, 40, 400].map(|out| assistant(session, &id, Some(&req), &at, 3, out))
        })
        .collect()
}

#[test]
fn machines_importing_one_session_at_once_count_it_once() {
    // The same sessions under the folder each machine gives them, imported by three
    // processes at once: each response is upserted by all three in the same moments.
    let dir = tempfile::tempdir().expect("tmp");
    let sessions: Vec<String> = (0..12)
        .map(|i| format!("cccccccc-0000-4000-8000-{i:012}"))
        .collect();
    let machines = ["-home-alice-app", "-Users-alice-app", "-home-ci-app"];
    for machine in machines {
        for s in &sessions {
            write(
                &dir.path()
                    .join(machine)
                    .join(machine)
                    .join(format!("{s}.jsonl")),
                &streamed_session(s, 30),
            );
        }
    }
    for mut b in backends("the usage parallel-import case") {
        for round in 0..3 {
            b.reset();
            let target = b.target();
            let running: Vec<_> = machines
                .iter()
                .map(|m| {
                    sessiondb_command(&target)
                        .args(["import", &dir.path().join(m).to_string_lossy()])
                        .stdout(std::process::Stdio::null())
                        .stderr(std::process::Stdio::piped())
                        .spawn()
                        .expect("spawn import")
                })
                .collect();
            for (child, m) in running.into_iter().zip(machines) {
                let out = child.wait_with_output().expect("import ends");
                assert!(
                    out.status.success(),
                    "{} round {round}: import of {m}: {}",
                    b.name,
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            // Once each, all under the machine first in project order.
            let monthly = counts(&stats(&b, &["monthly"]));
            assert_eq!(
                monthly,
                [("2026-02".to_owned(), 12 * 30 * 3, 12 * 30 * 400)],
                "{} round {round}",
                b.name
            );
            let projects = counts(&stats(&b, &["project"]));
            assert_eq!(
                projects,
                [("-Users-alice-app".to_owned(), 12 * 30 * 3, 12 * 30 * 400)],
                "{} round {round}",
                b.name
            );
        }
    }
}

/// A session with no billed response costs `$0.00`, not `$-0.00` (a float sum of nothing
/// is negative zero).
#[test]
fn statusline_prints_no_cost_as_zero() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("s.db");
    sessiondb_ok(&db, &["import", samples().to_str().expect("path")]);
    let mut child = sessiondb_command(&db)
        .arg("statusline")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run statusline");
    std::io::Write::write_all(
        child.stdin.as_mut().expect("stdin"),
        br#"{"session_id":"ffffffff-0000-4000-8000-000000000000"}"#,
    )
    .expect("write stdin");
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("statusline ends");
    let line = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(out.status.success(), "{line}");
    assert!(line.starts_with("$0.00 session · "), "{line}");
    assert!(!line.contains("$-"), "{line}");
}

/// The usage reader takes an assistant record's fields from its envelope instead of parsing
/// the line again; on every corpus line both readings give the same responses.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn the_envelope_reading_agrees_with_the_full_parse_on_the_corpus() {
    use sessiondb::jsonl::Envelope;
    use sessiondb::usage::record::{responses, Response};
    let shared = crate::support::shared_dir("the corpus sweep").expect("../shared");
    let (mut lines, mut found) = (0, 0);
    for file in crate::support::corpus_files(&shared) {
        let bytes = std::fs::read(&file).unwrap();
        for line in bytes.split(|&b| b == b'\n') {
            let (_, env) = Envelope::parse(line);
            let fast: Vec<Response<'static>> = responses(line, &env)
                .into_iter()
                .map(Response::into_owned)
                .collect();
            let owned = env.clone().into_owned();
            let full: Vec<Response<'static>> = responses(line, &owned)
                .into_iter()
                .map(Response::into_owned)
                .collect();
            assert_eq!(fast, full, "{}", file.display());
            lines += 1;
            found += fast.len();
        }
    }
    assert!(
        lines > 10_000 && found > 1_000,
        "{lines} lines, {found} responses"
    );
}
