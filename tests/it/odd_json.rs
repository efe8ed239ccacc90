//! Issue 13 item 10: records with a lone surrogate escape or nesting deeper than 128 levels
//! (both valid to `JSON.parse`) resume, fork and list like any other record.

use crate::support::sessiondb_ok;
use serde_json::Value;

const SESSION: &str = "0dd50000-0000-4000-8000-000000000001";

/// user u1 → assistant a1 (text cut inside an emoji) → user u2 (a tool result nested 300
/// deep) → assistant a2 (lone surrogate again, last record).
fn transcript() -> String {
    let deep = format!("{}\"x\"{}", "[".repeat(300), "]".repeat(300));
    [
        r#"{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"first question"},"uuid":"u1","timestamp":"2026-12-01T10:00:00.000Z","sessionId":"SID","cwd":"/w"}"#.to_owned(),
        r#"{"parentUuid":"u1","isSidechain":false,"type":"assistant","message":{"id":"m1","role":"assistant","model":"x","content":[{"type":"text","text":"cut here \ud83d"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"a1","timestamp":"2026-12-01T10:00:01.000Z","sessionId":"SID","cwd":"/w"}"#.to_owned(),
        format!(r#"{{"parentUuid":"a1","isSidechain":false,"type":"user","message":{{"role":"user","content":"second question"}},"toolUseResult":{deep},"uuid":"u2","timestamp":"2026-12-01T10:00:02.000Z","sessionId":"SID","cwd":"/w"}}"#),
        r#"{"parentUuid":"u2","isSidechain":false,"type":"assistant","message":{"id":"m2","role":"assistant","model":"x","content":[{"type":"text","text":"\ude00 tail"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"a2","timestamp":"2026-12-01T10:00:03.000Z","sessionId":"SID","cwd":"/w"}"#.to_owned(),
    ]
    .map(|l| l.replace("SID", SESSION) + "\n")
    .concat()
}

fn uuids_in(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(u)) = m.get("uuid") {
                    out.push(u.clone());
                }
                m.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(v, &mut out);
    out
}

#[test]
fn lone_surrogates_and_deep_nesting_resume_fork_and_list() {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("-w");
    std::fs::create_dir_all(&project).expect("mkdir");
    let text = transcript();
    assert!(serde_json::from_str::<Value>(text.lines().nth(1).expect("a1")).is_err());
    std::fs::write(project.join(format!("{SESSION}.jsonl")), &text).expect("write");
    let db = dir.path().join("s.db");
    sessiondb_ok(&db, &["import", &project.to_string_lossy()]);

    // Export: the bytes as written.
    assert_eq!(sessiondb_ok(&db, &["export", SESSION]), text.as_bytes());

    // Resume: the whole conversation, as valid JSON; U+FFFD stands for the lone surrogates.
    let api: Value = serde_json::from_slice(&sessiondb_ok(&db, &["resume", SESSION, "--api"]))
        .expect("--api output is valid JSON");
    let api_text = api.to_string();
    for needle in [
        "first question",
        "cut here \u{fffd}",
        "second question",
        "\u{fffd} tail",
    ] {
        assert!(api_text.contains(needle), "{needle} missing: {api_text}");
    }
    let resumed: Value = serde_json::from_slice(&sessiondb_ok(&db, &["resume", SESSION, "--json"]))
        .expect("valid JSON");
    let uuids = uuids_in(&resumed["messages"]);
    for u in ["u1", "a1", "u2", "a2"] {
        assert!(uuids.contains(&u.to_owned()), "{u} missing: {uuids:?}");
    }

    // messages: all four.
    let listed: Value =
        serde_json::from_slice(&sessiondb_ok(&db, &["messages", SESSION, "--json"]))
            .expect("valid JSON");
    let listed: Vec<&str> = listed
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|m| m["uuid"].as_str())
        .collect();
    assert_eq!(listed, ["u1", "a1", "u2", "a2"]);

    // Fork: all four messages re-recorded.
    let forked: Value = serde_json::from_slice(&sessiondb_ok(&db, &["fork", SESSION, "--json"]))
        .expect("valid JSON");
    assert_eq!(forked["messages"], 4, "{forked}");
    let fork_id = forked["session_id"].as_str().expect("id").to_owned();
    let fork_text = String::from_utf8(sessiondb_ok(&db, &["export", &fork_id])).expect("utf-8");
    for u in ["\"u1\"", "\"a1\"", "\"u2\"", "\"a2\""] {
        assert!(fork_text.contains(u), "{u} missing from the fork");
    }
}

/// A fork writes such records on their stored bytes: only the fields fork changes differ
/// (`sessionId`, and `requestSessionId` added to assistants), so the lone surrogates and the 300-deep value reach
/// the fork as written, not as the view's U+FFFD and JSON text.
#[test]
fn a_fork_keeps_the_bytes_of_fields_it_does_not_change() {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("-w");
    std::fs::create_dir_all(&project).expect("mkdir");
    let text = transcript();
    std::fs::write(project.join(format!("{SESSION}.jsonl")), &text).expect("write");
    let db = dir.path().join("s.db");
    sessiondb_ok(&db, &["import", &project.to_string_lossy()]);
    let forked: Value = serde_json::from_slice(&sessiondb_ok(&db, &["fork", SESSION, "--json"]))
        .expect("valid JSON");
    let fork_id = forked["session_id"].as_str().expect("id").to_owned();
    let got = String::from_utf8(sessiondb_ok(&db, &["export", &fork_id])).expect("utf-8");
    let want: String = text
        .lines()
        .map(|line| {
            let mut line = line.replace(
                &format!(r#""sessionId":"{SESSION}""#),
                &format!(r#""sessionId":"{fork_id}""#),
            );
            if line.contains(r#""type":"assistant""#) {
                line.pop();
                line.push_str(&format!(r#","requestSessionId":"{SESSION}"}}"#));
            }
            line + "\n"
        })
        .collect();
    assert_eq!(got, want);
    assert!(got.contains(r"cut here \ud83d") && got.contains(&"[".repeat(300)));
}
