//! A walk that meets a missing parent goes on by timestamp, as CLI 2.1.332 does (see
//! `resume::chain`), on both engines: the SQL path then gathers every conversation row, and
//! its answer equals the pure functions' over the whole file.

use crate::conformance::{backends, Backend};
use serde_json::{json, Value};
use sessiondb::model::NoProgress;
use sessiondb::resume::{self, ApiOptions, ResumeOptions};

const SESSION: &str = "5a1c7e0d-0000-4000-8000-000000000001";

fn record(kind: &str, uuid: &str, parent: Option<&str>, second: u32, text: &str) -> Value {
    let message = if kind == "user" {
        json!({"role": "user", "content": text})
    } else {
        json!({"id": format!("msg-{uuid}"), "role": "assistant", "model": "claude-sonnet-4-5",
               "type": "message", "content": [{"type": "text", "text": text}],
               "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}})
    };
    json!({"parentUuid": parent, "isSidechain": false, "type": kind, "message": message,
           "uuid": uuid, "timestamp": format!("2026-01-01T00:00:{second:02}.000Z"),
           "sessionId": SESSION, "cwd": "/w"})
}

/// A conversation whose second reply's record was lost: the next prompt names it as parent.
fn transcript() -> Vec<Value> {
    vec![
        record("user", "u1", None, 0, "the first prompt"),
        record("assistant", "a1", Some("u1"), 1, "the first answer"),
        // "a2" (the second answer, at second 3) is missing from the file.
        record("user", "u2", Some("a1"), 2, "the second prompt"),
        record("user", "u3", Some("a2"), 4, "the third prompt"),
        record("assistant", "a3", Some("u3"), 5, "the third answer"),
    ]
}

fn check(b: &Backend, records: &[Value]) -> Result<(), String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("projects").join("-w");
    std::fs::create_dir_all(&project).expect("project folder");
    let body: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(project.join(format!("{SESSION}.jsonl")), body).expect("transcript");
    b.db.import_paths(&[dir.path().join("projects")], &NoProgress)
        .map_err(|e| format!("import: {e}"))?;
    let session =
        b.db.resolve_session(&format!("-w/{SESSION}"))
            .map_err(|e| format!("resolve: {e}"))?;
    let resumed =
        b.db.resume(&session, &ResumeOptions::default())
            .map_err(|e| format!("resume: {e}"))?;
    let reference = resume::load_conversation(records, &ApiOptions::default())
        .map_err(|e| format!("reference: {e}"))?;
    if resumed.messages != reference.messages {
        return Err("the store's conversation differs from the whole file's".into());
    }
    let texts: String = serde_json::to_string(&resumed.api_view()).expect("json");
    for want in ["the first prompt", "the second prompt", "the third answer"] {
        if !texts.contains(want) {
            return Err(format!("{want:?} is not in the resumed conversation"));
        }
    }
    Ok(())
}

#[test]
pub fn a_missing_parent_is_walked_past_on_every_backend() {
    let mut failures = Vec::new();
    for b in &backends("a_missing_parent_is_walked_past_on_every_backend") {
        if let Err(e) = check(b, &transcript()) {
            failures.push(format!("{}: {e}", b.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
pub fn a_parent_cycle_is_walked_past_on_every_backend() {
    // "u2" names "u3", which names "u2": the walk from "a3" comes back to "u3" and goes on
    // by time to "a1".
    let mut records = transcript();
    records[2]["parentUuid"] = json!("u3");
    records[3]["parentUuid"] = json!("u2");
    let mut failures = Vec::new();
    for b in &backends("a_parent_cycle_is_walked_past_on_every_backend") {
        if let Err(e) = check(b, &records) {
            failures.push(format!("{}: {e}", b.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
