//! The record API: new entries written into a stored session with Claude Code's own write
//! rules (spec §4.3–§4.5), so that a session continued through sessiondb is one Claude Code
//! could have written.
//!
//! * **Messages** (`user`, `assistant`, `attachment`, `system`) go through `recordTranscript`:
//!   a message whose uuid the session already holds is skipped; while no new message has been
//!   seen, such a message is the running parent (the *prefix rule*: pass the resumed
//!   conversation followed by the new turn, and the new turn hangs off its last message).
//!   Each new message is stamped as `insertMessageChain` does: `parentUuid` is the previous
//!   message of the batch, `sourceToolAssistantUUID` overrides it for a tool result, a compact
//!   boundary starts a new root (`parentUuid: null`) and keeps its own `logicalParentUuid`
//!   (else the running parent), and `sessionId` is the session's.
//! * **Everything else** (titles, tags, `file-history-snapshot`, `content-replacement`, ...)
//!   is appended as given, without dedup, as `appendEntry` does.
//! * `progress` records are never persisted (`cleanMessagesForLogging`).
//! * Repair additions of a resumed conversation (`"synthetic": true`) are written without
//!   that marker: passing `Resumed::messages` followed by the new turn writes them with the
//!   turn, as Claude Code does (§7.5).
//!
//! Lines are serialized as `JSON.stringify` writes them: compact, keys in the order §2.3
//! gives (envelope keys, the message's own keys, then the session stamp), non-ASCII as is.
//! A batch is one IMMEDIATE transaction: the dedup check runs inside it, so two writers
//! appending the same uuids at once store each uuid once, and a writer killed mid-batch
//! leaves the session as it was before the batch.

mod sqlite;
pub(crate) mod write;

use crate::error::{Error, Result};
use crate::jsonl;
use crate::model::SessionRef;
use crate::store::Store;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashSet;

pub(crate) use sqlite::SqliteLines;

/// Record types that take part in the conversation chain (`insertMessageChain`).
pub const MESSAGE_TYPES: &[&str] = &["user", "assistant", "attachment", "system"];

/// Envelope keys, in the position `insertMessageChain` gives them (§2.3 items 1–7).
const ENVELOPE_KEYS: [&str; 7] = [
    "parentUuid",
    "logicalParentUuid",
    "isSidechain",
    "teamName",
    "agentName",
    "promptId",
    "agentId",
];

pub(crate) use crate::jsonl::STAMP_KEYS;

/// Where the first new message of a batch hangs when no message of the batch is already
/// recorded (Claude Code's `parentHint`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Parent {
    /// The leaf `resume` would pick: the batch continues the stored conversation.
    #[default]
    Leaf,
    /// No parent: the batch starts a new root (Claude Code without a hint).
    Root,
    /// This record.
    Uuid(String),
}

/// How [`Store::append_with`] places a batch.
#[derive(Debug, Clone, Default)]
pub struct AppendOptions {
    /// The parent of the first new message when the batch has no recorded prefix.
    pub parent: Parent,
}

/// What an append did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AppendReport {
    /// The session written to.
    pub session_id: String,
    /// Its project folder.
    pub project: String,
    /// Lines stored.
    pub written: u64,
    /// Of those, chain messages.
    pub messages: u64,
    /// Messages skipped because the session already holds their uuid.
    pub duplicates: u64,
    /// `progress` records dropped (Claude Code never persists them).
    pub dropped_progress: u64,
    /// The last message of the batch (written or already recorded): the new leaf.
    pub leaf_uuid: Option<String>,
}

/// The session-level values stamped on each new message.
#[derive(Debug, Clone, Default)]
pub struct Stamp {
    /// `sessionId`: always the target session's.
    pub session_id: String,
    /// `userType`, `entrypoint`, `cwd`, `version`, `gitBranch`, `slug` for messages that do
    /// not carry their own (appends take them from the session's last message).
    pub defaults: Map<String, Value>,
    /// Re-recording into another session (fork): `slug` is dropped, as Claude Code loses it,
    /// and an assistant written under another session id records that id as
    /// `requestSessionId` (what Claude Code 2.1.332 writes).
    pub fork: bool,
}

/// Checks one entry of a batch. The message says what is wrong, for an error that names the
/// entry's line.
///
/// # Errors
/// A description of the problem: not an object, no string `type`, a message without a
/// string `uuid`, a user or assistant without a `message` object, or an entry for a
/// sub-agent transcript (`agentId` on a sidechain message or a `content-replacement`), which
/// this API does not write.
pub fn check_entry(entry: &Value) -> std::result::Result<(), String> {
    let Some(obj) = entry.as_object() else {
        return Err("not a JSON object".into());
    };
    let Some(kind) = obj.get("type").and_then(Value::as_str) else {
        return Err("no string \"type\"".into());
    };
    let has_agent = obj.get("agentId").is_some_and(|v| !v.is_null());
    if MESSAGE_TYPES.contains(&kind) || kind == "progress" {
        match obj.get("uuid").and_then(Value::as_str) {
            Some(u) if !u.is_empty() => {}
            _ => return Err(format!("a {kind} record needs a non-empty string \"uuid\"")),
        }
        if matches!(kind, "user" | "assistant") && !obj.get("message").is_some_and(Value::is_object)
        {
            return Err(format!("a {kind} record needs a \"message\" object"));
        }
        if truthy(obj.get("isSidechain")) && has_agent {
            return Err(
                "sub-agent records (isSidechain with agentId) belong in the agent's \
                        transcript, which append does not write"
                    .into(),
            );
        }
    } else if kind == "content-replacement" && has_agent {
        return Err(
            "a content-replacement with agentId belongs in the agent's transcript, which \
             append does not write"
                .into(),
        );
    }
    Ok(())
}

/// Parses a JSONL batch (as `sessiondb append` reads it): blank lines are skipped; every
/// other line must be an entry [`check_entry`] accepts.
///
/// # Errors
/// [`Error::Invalid`] naming the first bad line (1-based).
pub fn parse_batch(bytes: &[u8]) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for (i, line) in jsonl::split_lines(bytes).enumerate() {
        let n = i + 1;
        let Some(text) = jsonl::parse_text(line.bytes) else {
            return Err(Error::Invalid(format!("line {n}: not valid UTF-8")));
        };
        if text.is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::Invalid(format!("line {n}: not valid JSON: {e}")))?;
        check_entry(&value).map_err(|m| Error::Invalid(format!("line {n}: {m}")))?;
        out.push(value);
    }
    Ok(out)
}

fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(_) => true,
    }
}

fn is_message(entry: &Value) -> bool {
    entry
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| MESSAGE_TYPES.contains(&t))
}

fn uuid_of(entry: &Value) -> Option<&str> {
    entry.get("uuid").and_then(Value::as_str)
}

/// One message as `insertMessageChain` writes it (spec §4.4 steps 1–3, key order §2.3):
/// envelope keys first (each in its fixed position, the message's value where it has one),
/// then the message's own keys in their order, then the session stamp (a key the message
/// already has keeps its position and takes the stamp's value).
pub fn stamp_message(message: &Map<String, Value>, parent: Option<&str>, stamp: &Stamp) -> Value {
    let boundary = message.get("type").and_then(Value::as_str) == Some("system")
        && message.get("subtype").and_then(Value::as_str) == Some("compact_boundary");
    let is_user = message.get("type").and_then(Value::as_str) == Some("user");
    let effective = match message.get("sourceToolAssistantUUID") {
        Some(Value::String(s)) if is_user && !s.is_empty() => Some(s.as_str()),
        _ => parent,
    };
    let parent_value = |p: Option<&str>| p.map_or(Value::Null, |s| Value::String(s.to_owned()));
    let mut out = Map::new();
    for key in ENVELOPE_KEYS {
        let value = match key {
            "parentUuid" if boundary => Some(Value::Null),
            "parentUuid" => Some(parent_value(effective)),
            "logicalParentUuid" if boundary => Some(match message.get(key) {
                Some(v @ Value::String(_)) => v.clone(),
                _ => parent_value(parent),
            }),
            "isSidechain" => Some(message.get(key).cloned().unwrap_or(Value::Bool(false))),
            _ => message.get(key).cloned(),
        };
        if let Some(v) = value {
            out.insert(key.to_owned(), v);
        }
    }
    for (key, value) in message {
        // `synthetic` is resume's marker on repair additions, not a transcript field.
        if key == "synthetic" && value == &Value::Bool(true) {
            continue;
        }
        if !ENVELOPE_KEYS.contains(&key.as_str()) {
            out.insert(key.clone(), value.clone());
        }
    }
    for key in STAMP_KEYS {
        let value = match key {
            "sessionId" => Some(Value::String(stamp.session_id.clone())),
            "slug" if stamp.fork => None,
            _ => message
                .get(key)
                .cloned()
                .or_else(|| stamp.defaults.get(key).cloned()),
        };
        match value {
            Some(v) => {
                out.insert(key.to_owned(), v);
            }
            None => {
                out.shift_remove(key);
            }
        }
    }
    if stamp.fork && message.get("type").and_then(Value::as_str) == Some("assistant") {
        let previous = message.get("sessionId").and_then(Value::as_str);
        if let Some(previous) = previous.filter(|p| *p != stamp.session_id) {
            if !out.contains_key("requestSessionId") {
                out.insert(
                    "requestSessionId".to_owned(),
                    Value::String(previous.to_owned()),
                );
            }
        }
    }
    Value::Object(out)
}

/// A batch planned with the write rules: the lines to store, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Planned {
    /// The records to write, in order.
    pub lines: Vec<Value>,
    /// Messages among them.
    pub messages: u64,
    /// Messages skipped as already recorded.
    pub duplicates: u64,
    /// `progress` records dropped.
    pub dropped_progress: u64,
    /// The last message of the batch (written or skipped as recorded).
    pub leaf_uuid: Option<String>,
}

/// `recordTranscript` over a batch (spec §4.3, §4.4, §4.5), as a pure function.
///
/// `recorded(uuid)` says whether the session already holds a message with that uuid (the
/// dedup set); `hint` gives the parent to use when no message of the batch is recorded. It
/// is called at most once. Entries must have passed [`check_entry`].
///
/// # Errors
/// Whatever `recorded` or `hint` return.
pub fn plan(
    entries: &[Value],
    stamp: &Stamp,
    mut recorded: impl FnMut(&str) -> Result<bool>,
    hint: impl FnOnce() -> Result<Option<String>>,
) -> Result<Planned> {
    let mut planned = Planned::default();
    // Pass 1: the recorded prefix gives the starting parent.
    let mut starting_parent: Option<String> = None;
    let mut prefix = HashSet::new();
    for entry in entries.iter().filter(|e| is_message(e)) {
        let uuid = uuid_of(entry).unwrap_or_default();
        if recorded(uuid)? {
            starting_parent = Some(uuid.to_owned());
            prefix.insert(uuid);
        } else {
            break;
        }
    }
    let mut parent = match starting_parent {
        Some(p) => Some(p),
        None => hint()?,
    };
    // Pass 2: write new messages in order; metadata passes through.
    let mut written: HashSet<&str> = HashSet::new();
    let mut in_prefix = true;
    for entry in entries {
        let kind = entry
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if kind == "progress" {
            planned.dropped_progress += 1;
            continue;
        }
        if !is_message(entry) {
            planned.lines.push(entry.clone());
            continue;
        }
        let uuid = uuid_of(entry).unwrap_or_default();
        if in_prefix && prefix.contains(uuid) {
            planned.duplicates += 1;
            planned.leaf_uuid = Some(uuid.to_owned());
            continue;
        }
        in_prefix = false;
        // appendEntry's own dedup: a recorded message after a new one is skipped, but it
        // still becomes the parent of the next (insertMessageChain advances regardless).
        if written.contains(uuid) || recorded(uuid)? {
            planned.duplicates += 1;
        } else {
            let obj = entry.as_object().expect("check_entry accepted an object");
            planned
                .lines
                .push(stamp_message(obj, parent.as_deref(), stamp));
            planned.messages += 1;
            written.insert(uuid);
        }
        parent = Some(uuid.to_owned());
        planned.leaf_uuid = Some(uuid.to_owned());
    }
    Ok(planned)
}

impl Store {
    /// Appends a batch of entries to a session with Claude Code's write rules (see the
    /// [module docs](self)); the first new message continues the conversation `resume`
    /// would pick. One IMMEDIATE transaction: all of the batch or none of it.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the first entry [`check_entry`] rejects (nothing is
    /// stored); [`Error::BadName`] when the session's stored project key or id is not one
    /// path component (from an older database; see [`crate::names`]); database errors.
    pub fn append(&self, session: &SessionRef, entries: &[Value]) -> Result<AppendReport> {
        self.append_with(session, entries, &AppendOptions::default())
    }

    /// [`Store::append`] with options.
    ///
    /// # Errors
    /// As [`Store::append`]; [`Error::NotFound`] when [`Parent::Uuid`] names no message of
    /// the session.
    pub fn append_with(
        &self,
        session: &SessionRef,
        entries: &[Value],
        options: &AppendOptions,
    ) -> Result<AppendReport> {
        write::check_batch(session, entries)?;
        self.write(|tx| write::append(&mut SqliteLines(tx), session, entries, options))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stamp() -> Stamp {
        Stamp {
            session_id: "S".into(),
            ..Stamp::default()
        }
    }

    fn user(uuid: &str) -> Value {
        json!({"type": "user", "message": {"role": "user", "content": uuid}, "uuid": uuid})
    }

    fn assistant(uuid: &str) -> Value {
        json!({"type": "assistant", "message": {"role": "assistant", "content": []}, "uuid": uuid})
    }

    fn run(entries: &[Value], recorded: &[&str], hint: Option<&str>) -> Planned {
        check(entries);
        plan(
            entries,
            &stamp(),
            |u| Ok(recorded.contains(&u)),
            || Ok(hint.map(str::to_owned)),
        )
        .expect("plan")
    }

    fn check(entries: &[Value]) {
        for e in entries {
            check_entry(e).expect("valid entry");
        }
    }

    fn parents(p: &Planned) -> Vec<(String, Value)> {
        p.lines
            .iter()
            .filter(|l| is_message(l))
            .map(|l| {
                (
                    l["uuid"].as_str().unwrap().to_owned(),
                    l["parentUuid"].clone(),
                )
            })
            .collect()
    }

    #[test]
    fn dedup_skips_recorded_uuids_and_repeats_within_the_batch() {
        let p = run(&[user("a"), assistant("b"), assistant("b")], &["a"], None);
        assert_eq!(p.messages, 1);
        assert_eq!(p.duplicates, 2);
        assert_eq!(parents(&p), vec![("b".into(), json!("a"))]);
    }

    #[test]
    fn a_recorded_prefix_gives_the_parent_and_overrides_the_hint() {
        let p = run(
            &[user("a"), assistant("b"), user("c"), assistant("d")],
            &["a", "b"],
            Some("zzz"),
        );
        assert_eq!(
            parents(&p),
            vec![("c".into(), json!("b")), ("d".into(), json!("c"))]
        );
        assert_eq!(p.leaf_uuid.as_deref(), Some("d"));
    }

    #[test]
    fn without_a_prefix_the_hint_is_the_parent() {
        let p = run(&[user("c")], &["a"], Some("a"));
        assert_eq!(parents(&p), vec![("c".into(), json!("a"))]);
        let p = run(&[user("c")], &[], None);
        assert_eq!(parents(&p), vec![("c".into(), Value::Null)]);
    }

    #[test]
    fn a_recorded_message_after_a_new_one_is_skipped_but_becomes_the_parent() {
        let p = run(&[user("n1"), assistant("old"), user("n2")], &["old"], None);
        assert_eq!(
            parents(&p),
            vec![("n1".into(), Value::Null), ("n2".into(), json!("old"))]
        );
        assert_eq!(p.duplicates, 1);
    }

    #[test]
    fn a_compact_boundary_starts_a_new_root_with_a_logical_parent() {
        let boundary = json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "uuid": "B"});
        let p = run(&[user("a"), boundary.clone(), user("s")], &[], None);
        let b = &p.lines[1];
        assert_eq!(b["parentUuid"], Value::Null);
        assert_eq!(b["logicalParentUuid"], json!("a"));
        assert_eq!(p.lines[2]["parentUuid"], json!("B"));
        // Its own logicalParentUuid wins.
        let mut own = boundary;
        own["logicalParentUuid"] = json!("pre");
        let p = run(&[user("a"), own], &[], None);
        assert_eq!(p.lines[1]["logicalParentUuid"], json!("pre"));
        // Other messages get no logicalParentUuid.
        assert!(p.lines[0].get("logicalParentUuid").is_none());
    }

    #[test]
    fn source_tool_assistant_uuid_overrides_the_parent_of_a_tool_result() {
        let mut result = user("r");
        result["sourceToolAssistantUUID"] = json!("a1");
        let p = run(
            &[assistant("a1"), assistant("a2"), result, user("n")],
            &[],
            None,
        );
        assert_eq!(
            parents(&p),
            vec![
                ("a1".into(), Value::Null),
                ("a2".into(), json!("a1")),
                ("r".into(), json!("a1")),
                ("n".into(), json!("r")),
            ]
        );
    }

    #[test]
    fn metadata_entries_pass_through_without_dedup() {
        let title = json!({"type": "custom-title", "customTitle": "T", "sessionId": "S"});
        let p = run(&[title.clone(), user("a"), title.clone()], &["a"], None);
        assert_eq!(p.lines, vec![title.clone(), title]);
        assert_eq!(p.messages, 0);
    }

    #[test]
    fn progress_is_never_written() {
        let progress = json!({"type": "progress", "uuid": "p", "data": {}});
        let p = run(&[user("a"), progress, assistant("b")], &[], None);
        assert_eq!(p.dropped_progress, 1);
        assert_eq!(
            parents(&p),
            vec![("a".into(), Value::Null), ("b".into(), json!("a"))]
        );
    }

    #[test]
    fn key_order_is_envelope_message_stamp() {
        let mut entry = user("u");
        entry["promptId"] = json!("P");
        entry["timestamp"] = json!("2026-01-01T00:00:00.000Z");
        let stamp = Stamp {
            session_id: "S".into(),
            defaults: json!({"userType": "external", "cwd": "/w", "version": "2.1.332"})
                .as_object()
                .cloned()
                .unwrap(),
            fork: false,
        };
        let line = stamp_message(entry.as_object().unwrap(), Some("p"), &stamp);
        assert_eq!(
            serde_json::to_string(&line).unwrap(),
            r#"{"parentUuid":"p","isSidechain":false,"promptId":"P","type":"user","message":{"role":"user","content":"u"},"uuid":"u","timestamp":"2026-01-01T00:00:00.000Z","userType":"external","cwd":"/w","sessionId":"S","version":"2.1.332"}"#
        );
    }

    #[test]
    fn stamp_keys_the_message_has_keep_their_position() {
        // The ≤ 2.1.7x order: session fields before `type`.
        let old: Value = serde_json::from_str(
            r#"{"parentUuid":"x","isSidechain":false,"userType":"external","cwd":"/w","sessionId":"OLD","version":"1.0.44","type":"user","message":{"role":"user","content":"hi"},"uuid":"u","slug":"s"}"#,
        )
        .unwrap();
        let fork = Stamp {
            session_id: "NEW".into(),
            fork: true,
            ..Stamp::default()
        };
        let line = stamp_message(old.as_object().unwrap(), None, &fork);
        assert_eq!(
            serde_json::to_string(&line).unwrap(),
            r#"{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"NEW","version":"1.0.44","type":"user","message":{"role":"user","content":"hi"},"uuid":"u"}"#
        );
    }

    #[test]
    fn a_fork_records_the_request_session_of_assistants() {
        let mut a = assistant("a");
        a["sessionId"] = json!("OLD");
        let fork = Stamp {
            session_id: "NEW".into(),
            fork: true,
            ..Stamp::default()
        };
        let line = stamp_message(a.as_object().unwrap(), None, &fork);
        let keys: Vec<_> = line.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys.last().map(String::as_str), Some("requestSessionId"));
        assert_eq!(line["requestSessionId"], json!("OLD"));
        assert_eq!(line["sessionId"], json!("NEW"));
        // An earlier origin is kept.
        let mut b = a.clone();
        b["requestSessionId"] = json!("FIRST");
        let line = stamp_message(b.as_object().unwrap(), None, &fork);
        assert_eq!(line["requestSessionId"], json!("FIRST"));
    }

    #[test]
    fn bad_entries_are_named() {
        assert!(check_entry(&json!([1])).is_err());
        assert!(check_entry(&json!({"uuid": "x"})).is_err());
        assert!(check_entry(&json!({"type": "user", "message": {}})).is_err());
        assert!(check_entry(&json!({"type": "user", "uuid": "u"})).is_err());
        assert!(check_entry(
            &json!({"type": "assistant", "uuid": "u", "message": {}, "isSidechain": true, "agentId": "a"})
        )
        .is_err());
        assert!(check_entry(&json!({"type": "tag", "tag": "x"})).is_ok());
        let err = parse_batch(b"{\"type\":\"tag\"}\n\n{oops\n").unwrap_err();
        assert!(
            err.to_string().starts_with("line 3: not valid JSON"),
            "{err}"
        );
        let err = parse_batch(b"{\"type\":\"user\",\"uuid\":\"u\"}\n").unwrap_err();
        assert!(
            err.to_string().starts_with("line 1: a user record"),
            "{err}"
        );
    }
}
