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

use crate::catalog;
use crate::error::{Error, Result};
use crate::import::{insert_rows, project_record, Origin};
use crate::jsonl::{self, Envelope, Line, LineStatus};
use crate::model::SessionRef;
use crate::resume::gather;
use crate::store::Store;
use rusqlite::{params, OptionalExtension, Transaction};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashSet;

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

/// The live main transcript of a session, created when the session has none.
pub(crate) fn main_transcript_for_write(tx: &Transaction<'_>, session: i64) -> Result<i64> {
    let live: Option<i64> = tx
        .prepare_cached(
            "SELECT id FROM transcripts WHERE session_id = ?1 AND subpath = '' AND superseded_at IS NULL",
        )?
        .query_row([session], |r| r.get(0))
        .optional()?;
    match live {
        Some(id) => Ok(id),
        None => {
            tx.prepare_cached("INSERT INTO transcripts (session_id, subpath) VALUES (?1, '')")?
                .execute([session])?;
            Ok(tx.last_insert_rowid())
        }
    }
}

/// The ordinal that follows the transcript's last row. A last row without its newline gets
/// one first, so that lines stored after it do not glue onto it.
pub(crate) fn next_ordinal(tx: &Transaction<'_>, transcript: i64) -> Result<i64> {
    let last: Option<(i64, i64, bool)> = tx
        .prepare_cached(
            "SELECT id, ordinal, terminated FROM rows WHERE transcript_id = ?1
             ORDER BY ordinal DESC LIMIT 1",
        )?
        .query_row([transcript], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let Some((id, ordinal, terminated)) = last else {
        return Ok(0);
    };
    if !terminated {
        tx.prepare_cached("UPDATE rows SET terminated = 1 WHERE id = ?1")?
            .execute([id])?;
    }
    Ok(ordinal + 1)
}

/// Stores `lines` after the transcript's last row, each serialized as `JSON.stringify`
/// would, with its projections and side-table rows (as import stores a line).
pub(crate) fn write_lines(tx: &Transaction<'_>, transcript: i64, lines: &[Value]) -> Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let bytes: Vec<Vec<u8>> = lines
        .iter()
        .map(serde_json::to_vec)
        .collect::<serde_json::Result<_>>()?;
    write_line_bytes(tx, transcript, &bytes)
}

/// Stores lines already serialized (each one JSON object) after the transcript's last row,
/// as [`write_lines`] does.
pub(crate) fn write_line_bytes(
    tx: &Transaction<'_>,
    transcript: i64,
    bytes: &[Vec<u8>],
) -> Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    let first = next_ordinal(tx, transcript)?;
    let batch: Vec<(Line<'_>, LineStatus, Envelope<'_>)> = bytes
        .iter()
        .map(|b| {
            let (status, env) = Envelope::parse(b);
            let line = Line {
                bytes: b,
                terminated: true,
            };
            (line, status, env)
        })
        .collect();
    // Multi-row inserts, as import stores lines: one statement journal per 64 lines.
    tx.set_prepared_statement_cache_capacity(64);
    let first_id: i64 = tx
        .prepare_cached("SELECT coalesce(max(id), 0) + 1 FROM rows")?
        .query_row([], |r| r.get(0))?;
    insert_rows(tx, transcript, first, first_id, &batch, Origin::Local)?;
    for (row, (line, status, env)) in (first_id..).zip(&batch) {
        if *status == LineStatus::Record {
            project_record(tx, transcript, row, line.bytes, env)?;
        }
    }
    Ok(())
}

const RECORDED: &str = "SELECT EXISTS (SELECT 1 FROM rows WHERE transcript_id = ?1 AND uuid = ?2
     AND type IN ('user', 'assistant', 'attachment', 'system', 'progress'))";

/// The leaf `resume` would pick ([`gather::pick_leaf`]), with a fast path: the newest chain
/// row, when no row names it as parent, is that leaf (two index lookups instead of a scan).
fn current_leaf(tx: &Transaction<'_>, transcript: i64) -> Result<Option<String>> {
    let newest: Option<String> = tx
        .prepare_cached(
            "SELECT uuid FROM rows INDEXED BY idx_rows_transcript_ordinal
             WHERE transcript_id = ?1 AND type IN ('user', 'assistant', 'attachment', 'system')
               AND uuid IS NOT NULL AND is_sidechain = 0
             ORDER BY ordinal DESC LIMIT 1",
        )?
        .query_row([transcript], |r| r.get(0))
        .optional()?;
    let Some(newest) = newest else {
        return Ok(None);
    };
    // Nothing hangs off the newest chain row: it is pick_leaf's first candidate.
    let has_child: bool = tx
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM rows WHERE transcript_id = ?1 AND parent_uuid = ?2)",
        )?
        .query_row(params![transcript, newest], |r| r.get(0))?;
    if !has_child {
        return Ok(Some(newest));
    }
    gather::pick_leaf(tx, transcript)
}

/// The stamp defaults of a transcript: the session-level fields of its last message.
fn session_defaults(tx: &Transaction<'_>, transcript: i64) -> Result<Map<String, Value>> {
    let raw: Option<Vec<u8>> = tx
        .prepare_cached(
            "SELECT raw FROM rows WHERE transcript_id = ?1 AND status = 0
               AND type IN ('user', 'assistant', 'attachment', 'system') AND is_sidechain = 0
             ORDER BY ordinal DESC LIMIT 1",
        )?
        .query_row([transcript], |r| r.get(0))
        .optional()?;
    let mut out = Map::new();
    if let Some(record) = raw.as_deref().and_then(jsonl::parse_record) {
        for key in STAMP_KEYS.iter().filter(|k| **k != "sessionId") {
            if let Some(v) = record.get(*key).filter(|v| !v.is_null()) {
                out.insert((*key).to_owned(), v.clone());
            }
        }
    }
    Ok(out)
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
        crate::names::check_session(&session.project, &session.session_id)?;
        for (i, entry) in entries.iter().enumerate() {
            check_entry(entry).map_err(|m| Error::Invalid(format!("entry {}: {m}", i + 1)))?;
        }
        self.write(|tx| {
            let transcript = main_transcript_for_write(tx, session.key)?;
            let stamp = Stamp {
                session_id: session.session_id.clone(),
                defaults: session_defaults(tx, transcript)?,
                fork: false,
            };
            let planned = {
                let mut recorded = tx.prepare_cached(RECORDED)?;
                plan(
                    entries,
                    &stamp,
                    |uuid| Ok(recorded.query_row(params![transcript, uuid], |r| r.get(0))?),
                    || match &options.parent {
                        Parent::Leaf => current_leaf(tx, transcript),
                        Parent::Root => Ok(None),
                        Parent::Uuid(u) => {
                            if gather::has_entry(tx, transcript, u)? {
                                Ok(Some(u.clone()))
                            } else {
                                Err(Error::NotFound(format!(
                                    "record {u} is not a message of session {}",
                                    session.session_id
                                )))
                            }
                        }
                    },
                )?
            };
            write_lines(tx, transcript, &planned.lines)?;
            if !planned.lines.is_empty() {
                catalog::touch_session(tx, session.key, crate::time::now_ms())?;
            }
            Ok(AppendReport {
                session_id: session.session_id.clone(),
                project: session.project.clone(),
                written: planned.lines.len() as u64,
                messages: planned.messages,
                duplicates: planned.duplicates,
                dropped_progress: planned.dropped_progress,
                leaf_uuid: planned.leaf_uuid,
            })
        })
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
