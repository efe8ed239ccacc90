//! Load-time repairs of a built chain ("conversation recovery"): R11
//! (synthetic tool_result), R12 (`No response requested.` sentinel), R17
//! (content-replacement records), R19 (`CLAUDE_CODE_RESUME_INTERRUPTED_TURN`),
//! plus the interruption state of spec §6.6.
//!
//! Port of `rewind_interrupted_turn`, `recover_conversation` and
//! `apply_content_replacements` of the oracle's `tool/apiview.py`. Where the
//! spec (`claude-code-transcripts.md` §6, written against CLI 2.1.88) and the
//! oracle (CLI 2.1.332) disagree, the oracle wins:
//!
//! * §6.3 `filterUnresolvedToolUses` (drop assistant records whose tool_uses
//!   are all unanswered) applies only where the conversation goes on past
//!   such a record ([`super::unanswered`], run before this pass); at the
//!   conversation's end 2.1.332 keeps it and synthesises an error tool_result
//!   instead (R11, `interrupt__step-05`).
//! * §6.4 thinking-only and §6.5 whitespace-only assistant filters are **not**
//!   applied by default: the oracle passes every case without them (R20:
//!   thinking replayed verbatim). They exist as opt-in functions
//!   ([`filter_orphaned_thinking_only`], [`filter_whitespace_only_assistants`]).
//! * §6.8 places the sentinel after the last non-system message whenever it
//!   is a user message. The oracle's R12 looks at the last *user/assistant*
//!   record (an API-error assistant counts, a local-command record blocks
//!   it) and inserts after the last non-system record (so after trailing
//!   attachments).
//! * §6.6/§6.9 (2.1.88) re-enqueue the interrupted prompt under
//!   `CLAUDE_CODE_RESUME_INTERRUPTED_TURN`; 2.1.332 (R19) instead drops the
//!   unfinished turn after its prompt, keeps attachments, adds no R11/R12.
//! * §6.1 (legacy attachment `displayPath` migration) needs the resume-time
//!   cwd and never affects what is sent; it is not modelled.
//! * §6.2 (strip invalid `permissionMode`) is applied
//!   ([`strip_invalid_permission_modes`]); the field is never sent, so it
//!   cannot change the API view.
//!
//! Synthetic records are full transcript records (envelope copied from the
//! record they follow) with a `"synthetic": true` marker. Their uuids are
//! **derived deterministically** (a v4-formatted UUID hashed from the
//! repair kind and the uuid of the record they follow), and their timestamp
//! is that of the record they follow, so the functions stay pure and
//! repeatable; written back (R16) they are ordinary records and a later
//! resume adds nothing.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::util::{
    block_type, blocks, content, is_tool_result_msg, msg_id, rec_type, str_field, truthy,
};

/// R12: text of the synthetic assistant sentinel.
pub const SENTINEL: &str = "No response requested.";

/// R11: content of the synthetic tool_result for an unanswered tool_use.
pub const SYNTHETIC_TOOL_RESULT: &str = "[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is unknown. Check whether it took effect before relying on it or running it again.]";

/// Content prefixes that mark a user record as local-command output.
pub const LOCAL_COMMAND_PREFIXES: [&str; 7] = [
    "<local-command-caveat>",
    "<command-name>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
];

/// Valid `permissionMode` values (spec §6.2; `auto` is written by 2.1.x
/// external builds too).
pub const PERMISSION_MODES: [&str; 6] = [
    "acceptEdits",
    "bypassPermissions",
    "default",
    "dontAsk",
    "plan",
    "auto",
];

/// What kind of change a repair made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepairKind {
    /// R11: a synthetic error tool_result record was added.
    SyntheticToolResult,
    /// R12: the synthetic `No response requested.` assistant was added.
    Sentinel,
    /// R19: a record of the unfinished last turn was dropped.
    InterruptedTurnRewound,
    /// R17: a tool_result's content was replaced by its recorded preview.
    ContentReplacement,
    /// Spec §6.2: an invalid `permissionMode` was removed (never sent).
    PermissionModeStripped,
    /// Spec §6.4 (opt-in, not applied by default): an orphaned thinking-only
    /// assistant record was dropped.
    ThinkingOnlyDropped,
    /// Spec §6.5 (opt-in, not applied by default): a whitespace-only
    /// assistant record was dropped.
    WhitespaceOnlyDropped,
    /// Spec §6.3, except at the conversation's end: a reply whose tool calls were
    /// never answered was dropped ([`super::unanswered`]).
    UnansweredToolUseDropped,
}

impl RepairKind {
    /// True for repairs that add a record to the conversation (the ones the
    /// CLI writes back to the transcript, R16).
    pub fn adds_record(self) -> bool {
        matches!(self, RepairKind::SyntheticToolResult | RepairKind::Sentinel)
    }
}

/// One change made by the load-time repairs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repair {
    /// What was done.
    pub kind: RepairKind,
    /// The affected record: the new record for additions, the dropped or
    /// modified record otherwise.
    pub uuid: Option<String>,
    /// Short human-readable detail (tool_use ids, record type, ...).
    pub detail: String,
}

/// Turn-interruption state of a loaded chain (spec §6.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interruption {
    /// The last turn completed (or nothing to say).
    #[default]
    None,
    /// The session ended on a user prompt that got no reply.
    InterruptedPrompt,
    /// The session ended in the middle of a turn (tool result, attachment).
    InterruptedTurn,
}

/// Spec §6.6 `detectTurnInterruption`, computed on the chain before repairs.
///
/// The last record that is not `system`/`progress` and not an API-error
/// assistant decides: assistant → none; user with `isMeta` or
/// `isCompactSummary` → none; a tool result (first block `tool_result`, or a
/// truthy `toolUseResult`) → interrupted turn; another user record →
/// interrupted prompt; attachment → interrupted turn. (The KAIROS brief-tool
/// exception is ant-only and not modelled.)
pub fn detect_interruption(chain: &[Value]) -> Interruption {
    let last = chain.iter().rev().find(|r| {
        let t = rec_type(r);
        t != Some("system")
            && t != Some("progress")
            && !(t == Some("assistant") && truthy(r.get("isApiErrorMessage")))
    });
    let Some(last) = last else {
        return Interruption::None;
    };
    match rec_type(last) {
        Some("assistant") => Interruption::None,
        Some("user") => {
            if truthy(last.get("isMeta")) || truthy(last.get("isCompactSummary")) {
                Interruption::None
            } else if blocks(last).first().and_then(block_type) == Some("tool_result")
                || truthy(last.get("toolUseResult"))
            {
                Interruption::InterruptedTurn
            } else {
                Interruption::InterruptedPrompt
            }
        }
        Some("attachment") => Interruption::InterruptedTurn,
        _ => Interruption::None,
    }
}

/// A local-command record: `system/local_command`, or a user record whose
/// text starts (after leading whitespace) with one of
/// [`LOCAL_COMMAND_PREFIXES`].
pub fn is_local_command(r: &Value) -> bool {
    match rec_type(r) {
        Some("system") => str_field(r, "subtype") == Some("local_command"),
        Some("user") => {
            let text = match content(r) {
                Some(Value::String(s)) => s.as_str(),
                Some(Value::Array(a)) => a
                    .first()
                    .and_then(|b| b.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or(""),
                _ => "",
            };
            let t = text.trim_start();
            LOCAL_COMMAND_PREFIXES.iter().any(|p| t.starts_with(p))
        }
        _ => false,
    }
}

fn is_real_prompt(r: &Value) -> bool {
    rec_type(r) == Some("user")
        && !truthy(r.get("isMeta"))
        && !is_tool_result_msg(r)
        && !is_local_command(r)
        && !truthy(r.get("synthetic"))
}

fn answered_ids(chain: &[Value]) -> HashSet<String> {
    chain
        .iter()
        .filter(|r| rec_type(r) == Some("user"))
        .flat_map(|r| blocks(r).iter())
        .filter(|b| block_type(b) == Some("tool_result"))
        .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

fn tool_use_ids(r: &Value) -> impl Iterator<Item = &str> {
    blocks(r)
        .iter()
        .filter(|b| block_type(b) == Some("tool_use"))
        .filter_map(|b| b.get("id").and_then(Value::as_str))
}

fn uuid_str(r: &Value) -> Option<String> {
    str_field(r, "uuid").map(str::to_owned)
}

/// R19 (`CLAUDE_CODE_RESUME_INTERRUPTED_TURN=1`): when the session ended in
/// the middle of a turn (the last user/assistant record is an assistant with
/// an unanswered tool_use, or a tool_result), drop that turn's records after
/// its prompt, keeping attachments. Returns `None` when the rule does not
/// apply (then R11/R12 run instead).
///
/// Deviation: the oracle crashes when the chain has no real prompt; here the
/// rule then does not apply.
pub fn rewind_interrupted_turn(chain: &[Value]) -> Option<(Vec<Value>, Vec<Repair>)> {
    let last = chain
        .iter()
        .rev()
        .find(|r| matches!(rec_type(r), Some("user" | "assistant")))?;
    let answered = answered_ids(chain);
    let unfinished = (rec_type(last) == Some("assistant")
        && tool_use_ids(last).any(|id| !answered.contains(id)))
        || is_tool_result_msg(last);
    if !unfinished {
        return None;
    }
    let p = chain.iter().rposition(is_real_prompt)?;
    let mut out: Vec<Value> = chain[..=p].to_vec();
    let mut repairs = Vec::new();
    for r in &chain[p + 1..] {
        if rec_type(r) == Some("attachment") {
            out.push(r.clone());
        } else {
            repairs.push(Repair {
                kind: RepairKind::InterruptedTurnRewound,
                uuid: uuid_str(r),
                detail: format!("dropped {} record", rec_type(r).unwrap_or("?")),
            });
        }
    }
    Some((out, repairs))
}

/// A v4-formatted UUID derived from `seed` (FNV-1a, 2 × 64 bit), so repairs
/// are deterministic.
fn derived_uuid(seed: &str) -> String {
    fn fnv(seed: &str, basis: u64) -> u64 {
        seed.bytes().fold(basis, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    }
    let hi = fnv(seed, 0xcbf2_9ce4_8422_2325);
    let lo = fnv(seed, hi ^ 0x9e37_79b9_7f4a_7c15);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&hi.to_be_bytes());
    bytes[8..].copy_from_slice(&lo.to_be_bytes());
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

/// Build a synthetic record following `prev` (envelope fields copied from it).
fn synthetic_record(prev: Option<&Value>, uuid: &str, body: Vec<(&str, Value)>) -> Value {
    let mut m = Map::new();
    m.insert(
        "parentUuid".into(),
        prev.and_then(|p| p.get("uuid"))
            .cloned()
            .unwrap_or(Value::Null),
    );
    m.insert("isSidechain".into(), Value::Bool(false));
    for (k, v) in body {
        if k == "timestamp" {
            m.insert("uuid".into(), Value::String(uuid.to_owned()));
        }
        m.insert(k.to_owned(), v);
    }
    m.insert("synthetic".into(), Value::Bool(true));
    if let Some(p) = prev {
        for k in crate::jsonl::STAMP_KEYS {
            if let Some(v) = p.get(k) {
                m.insert(k.to_owned(), v.clone());
            }
        }
    }
    Value::Object(m)
}

fn timestamp_near(out: &[Value], at: usize) -> Value {
    out[..at.min(out.len())]
        .iter()
        .rev()
        .find_map(|r| r.get("timestamp").filter(|t| t.is_string()))
        .cloned()
        .unwrap_or_else(|| Value::String("1970-01-01T00:00:00.000Z".into()))
}

/// The synthetic R11 tool_result record for `ids`, following `prev`.
fn synthetic_tool_result(prev: &Value, owner: Option<&str>, ids: &[String], ts: Value) -> Value {
    let seed = format!(
        "synthetic_tool_result:{}:{}",
        str_field(prev, "uuid").unwrap_or(""),
        ids.join(",")
    );
    let uuid = derived_uuid(&seed);
    let blocks: Vec<Value> = ids
        .iter()
        .map(|t| {
            json!({"tool_use_id": t, "type": "tool_result", "content": SYNTHETIC_TOOL_RESULT, "is_error": true})
        })
        .collect();
    let mut body = vec![
        ("type", json!("user")),
        ("message", json!({"role": "user", "content": blocks})),
        ("timestamp", ts),
    ];
    if let Some(o) = owner {
        body.push(("sourceToolAssistantUUID", json!(o)));
    }
    synthetic_record(Some(prev), &uuid, body)
}

/// The synthetic R12 sentinel assistant record following `prev` (spec §6.8
/// fields, as CLI 2.1.332 writes it back).
fn sentinel_record(prev: &Value, ts: Value) -> Value {
    let prev_uuid = str_field(prev, "uuid").unwrap_or("");
    let uuid = derived_uuid(&format!("sentinel:{prev_uuid}"));
    let mid = derived_uuid(&format!("sentinel-message:{prev_uuid}"));
    let message = json!({
        "id": mid,
        "container": null,
        "model": "<synthetic>",
        "role": "assistant",
        "stop_reason": "stop_sequence",
        "stop_sequence": "",
        "type": "message",
        "usage": {
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": null,
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
            "inference_geo": null,
            "iterations": null,
            "speed": null
        },
        "content": [{"type": "text", "text": SENTINEL}],
        "context_management": null
    });
    synthetic_record(
        Some(prev),
        &uuid,
        vec![
            ("type", json!("assistant")),
            ("timestamp", ts),
            ("message", message),
            ("isApiErrorMessage", json!(false)),
        ],
    )
}

/// R11 + R12 on a built chain.
///
/// * R11: every tool_use with no tool_result anywhere in the chain gets a
///   synthetic error tool_result, placed after the results its turn did
///   record (flushed before the next assistant message with another
///   `message.id`, the next non-tool-result user record, or a local command).
///   Its `parentUuid` is the record it follows, `sourceToolAssistantUUID`
///   the assistant record holding the (last) tool_use.
/// * R12: when the last user/assistant (or local-command) record is a user
///   record that is not a local command, the sentinel is inserted after the
///   last non-system record.
///
/// Idempotent: on its own output (or on the file with the added records
/// appended, R16) it adds nothing.
pub fn recover_conversation(chain: Vec<Value>) -> (Vec<Value>, Vec<Repair>) {
    let mut answered = answered_ids(&chain);
    let mut out: Vec<Value> = Vec::with_capacity(chain.len() + 2);
    let mut repairs = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    let mut pending_mid: Option<String> = None;
    let mut pending_owner: Option<String> = None;

    let flush = |out: &mut Vec<Value>,
                 pending: &mut Vec<String>,
                 owner: &Option<String>,
                 answered: &mut HashSet<String>,
                 repairs: &mut Vec<Repair>| {
        if pending.is_empty() {
            return;
        }
        let Some(prev) = out.last() else {
            return; // unreachable: a pending id implies a pushed assistant
        };
        let ts = timestamp_near(out, out.len());
        let rec = synthetic_tool_result(prev, owner.as_deref(), pending, ts);
        repairs.push(Repair {
            kind: RepairKind::SyntheticToolResult,
            uuid: uuid_str(&rec),
            detail: format!("tool_use {}", pending.join(", ")),
        });
        out.push(rec);
        answered.extend(pending.drain(..));
    };

    for r in chain {
        let t = rec_type(&r);
        if !pending.is_empty()
            && ((t == Some("assistant") && msg_id(&r) != pending_mid.as_deref())
                || (t == Some("user") && !is_tool_result_msg(&r))
                || is_local_command(&r))
        {
            flush(
                &mut out,
                &mut pending,
                &pending_owner,
                &mut answered,
                &mut repairs,
            );
        }
        if t == Some("assistant") && !truthy(r.get("isApiErrorMessage")) {
            let mut miss: Vec<String> = Vec::new();
            for id in tool_use_ids(&r) {
                if !answered.contains(id)
                    && !pending.iter().any(|p| p == id)
                    && !miss.iter().any(|p| p == id)
                {
                    miss.push(id.to_owned());
                }
            }
            if !miss.is_empty() {
                pending.extend(miss);
                pending_mid = msg_id(&r).map(str::to_owned);
                pending_owner = uuid_str(&r);
            }
        }
        out.push(r);
    }
    flush(
        &mut out,
        &mut pending,
        &pending_owner,
        &mut answered,
        &mut repairs,
    );

    let last_ua = out
        .iter()
        .rposition(|r| matches!(rec_type(r), Some("user" | "assistant")));
    if let Some(i) = last_ua {
        let last = &out[i];
        // A PreToolUse hook that deferred a tool call after the prompt: the CLI resumes
        // with that call pending and adds no sentinel (difftest `cut-attachment` of
        // `issue25_silent__*`, bisected to `hook_deferred_tool` with the real CLI).
        let deferred = out[i + 1..].iter().any(|r| {
            r.get("attachment")
                .and_then(|a| a.get("type"))
                .and_then(Value::as_str)
                == Some("hook_deferred_tool")
        });
        let exempt =
            rec_type(last) != Some("user") || ends_local_command_exchange(&out, i) || deferred;
        if !exempt {
            if let Some(k) = out.iter().rposition(|r| rec_type(r) != Some("system")) {
                let ts = timestamp_near(&out, k + 1);
                let rec = sentinel_record(&out[k], ts);
                repairs.push(Repair {
                    kind: RepairKind::Sentinel,
                    uuid: uuid_str(&rec),
                    detail: format!(
                        "after {} record {}",
                        rec_type(&out[k]).unwrap_or("?"),
                        str_field(&out[k], "uuid").unwrap_or("?")
                    ),
                });
                out.insert(k + 1, rec);
            }
        }
    }
    (out, repairs)
}

/// What part of a local-command exchange a user record is, as CLI 2.1.332 classifies it
/// for R12: by the start (no trimming) of its string content or of its last text block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LocalPart {
    /// `<command-name>…`: the command as typed.
    Record,
    /// A user record starting with `/` (a bare slash command).
    BareRecord,
    /// `<local-command-stdout>` / `<local-command-stderr>`.
    Output,
    /// The `isMeta` `<local-command-caveat>` record that opens the exchange.
    Caveat,
}

fn local_part(r: &Value) -> Option<LocalPart> {
    if rec_type(r) != Some("user") || r.get("promptSource").is_some_and(|p| !p.is_null()) {
        return None;
    }
    let meta = r.get("isMeta") == Some(&Value::Bool(true));
    let text = content(r).and_then(last_text_of);
    let part = text.and_then(|t| {
        [
            ("<command-name>", LocalPart::Record),
            ("<local-command-stdout>", LocalPart::Output),
            ("<local-command-stderr>", LocalPart::Output),
            ("<local-command-caveat>", LocalPart::Caveat),
        ]
        .iter()
        .find(|(p, _)| t.starts_with(p))
        .map(|(_, k)| *k)
    });
    match part {
        Some(LocalPart::Caveat) if !meta => None,
        Some(k) => Some(k),
        None => {
            let bare = match content(r) {
                Some(Value::String(s)) => s.trim().starts_with('/'),
                Some(Value::Array(a)) => a.last().is_some_and(|b| {
                    block_type(b) == Some("text")
                        && b.get("text")
                            .and_then(Value::as_str)
                            .is_some_and(|t| t.trim().starts_with('/'))
                }),
                _ => false,
            };
            (bare && !meta).then_some(LocalPart::BareRecord)
        }
    }
}

/// String content, or the last text block's text.
fn last_text_of(c: &Value) -> Option<&str> {
    match c {
        Value::String(s) => Some(s.as_str()),
        Value::Array(a) => a
            .iter()
            .rev()
            .find(|b| block_type(b) == Some("text"))
            .and_then(|b| b.get("text"))
            .and_then(Value::as_str),
        _ => None,
    }
}

/// R12 exemption, B7: the session ends with a local-command exchange, so no sentinel is
/// added. Walking back from `records[last]` (system, progress and attachment records
/// skipped): output records, then the command record, which must be preceded by a
/// *tagged* `<local-command-caveat>` (not older than a bare `/command`); an exchange of
/// only `isMeta` records also counts. Pre-2.0 CLIs wrote the caveat without its tag
/// (`Caveat: The messages below…`), so their local-command endings get the sentinel:
/// `swordintel__6cf7db75-091b-4b27-9f73-7ca1979e06b7__own`.
pub fn ends_local_command_exchange(records: &[Value], last: usize) -> bool {
    if records.get(last).and_then(local_part).is_none() {
        return false;
    }
    let mut after_record = false;
    let mut bare_ts: Option<&str> = None;
    let mut all_meta = true;
    for r in records[..=last].iter().rev() {
        if matches!(rec_type(r), Some("system" | "progress" | "attachment")) {
            continue;
        }
        let part = local_part(r);
        if part == Some(LocalPart::Caveat) {
            let ts = str_field(r, "timestamp").unwrap_or("");
            return bare_ts.is_none_or(|b| ts >= b);
        }
        if part.is_none() || after_record {
            break;
        }
        after_record = matches!(part, Some(LocalPart::Record | LocalPart::BareRecord));
        if part == Some(LocalPart::BareRecord) {
            bare_ts = str_field(r, "timestamp");
        }
        all_meta &= r.get("isMeta") == Some(&Value::Bool(true));
    }
    all_meta
}

/// R17 (interactive resumes only): `content-replacement` records of the main
/// thread (no `agentId`) replace a tool_result's content with the recorded
/// `<persisted-output>` preview. `records` must include the session's
/// content-replacement records (a later replacement for the same tool_use
/// wins).
pub fn apply_content_replacements(
    chain: Vec<Value>,
    records: &[Value],
) -> (Vec<Value>, Vec<Repair>) {
    let mut rep: HashMap<&str, &Value> = HashMap::new();
    for r in records {
        if rec_type(r) != Some("content-replacement") || truthy(r.get("agentId")) {
            continue;
        }
        let list = r.get("replacements").and_then(Value::as_array);
        for x in list.map(Vec::as_slice).unwrap_or(&[]) {
            if x.get("kind").and_then(Value::as_str) != Some("tool-result") {
                continue;
            }
            if let (Some(id), Some(v)) = (
                x.get("toolUseId").and_then(Value::as_str),
                x.get("replacement"),
            ) {
                rep.insert(id, v);
            }
        }
    }
    if rep.is_empty() {
        return (chain, Vec::new());
    }
    let mut repairs = Vec::new();
    let out = chain
        .into_iter()
        .map(|mut r| {
            if rec_type(&r) != Some("user") {
                return r;
            }
            let uuid = uuid_str(&r);
            let Some(Value::Array(bs)) = r.get_mut("message").and_then(|m| m.get_mut("content"))
            else {
                return r;
            };
            for b in bs.iter_mut() {
                if block_type(b) != Some("tool_result") {
                    continue;
                }
                let Some(id) = b.get("tool_use_id").and_then(Value::as_str) else {
                    continue;
                };
                if let Some(v) = rep.get(id) {
                    repairs.push(Repair {
                        kind: RepairKind::ContentReplacement,
                        uuid: uuid.clone(),
                        detail: format!("tool_result {id}"),
                    });
                    if let Some(obj) = b.as_object_mut() {
                        obj.insert("content".into(), (*v).clone());
                    }
                }
            }
            r
        })
        .collect();
    (out, repairs)
}

/// Spec §6.2: remove a user record's `permissionMode` when it is not one of
/// [`PERMISSION_MODES`]. The field is never sent, so this cannot change the
/// API view.
pub fn strip_invalid_permission_modes(chain: &mut [Value]) -> Vec<Repair> {
    let mut repairs = Vec::new();
    for r in chain.iter_mut() {
        if rec_type(r) != Some("user") {
            continue;
        }
        let bad = match r.get("permissionMode") {
            None | Some(Value::Null) => false,
            Some(Value::String(s)) => !PERMISSION_MODES.contains(&s.as_str()),
            Some(_) => true,
        };
        if bad {
            let uuid = uuid_str(r);
            if let Some(obj) = r.as_object_mut() {
                let old = obj.shift_remove("permissionMode").unwrap_or(Value::Null);
                repairs.push(Repair {
                    kind: RepairKind::PermissionModeStripped,
                    uuid,
                    detail: format!("permissionMode {old}"),
                });
            }
        }
    }
    repairs
}

fn is_thinking(b: &Value) -> bool {
    matches!(block_type(b), Some("thinking" | "redacted_thinking"))
}

fn drop_records(
    chain: Vec<Value>,
    kind: RepairKind,
    drop: impl Fn(&Value) -> bool,
) -> (Vec<Value>, Vec<Repair>) {
    let mut repairs = Vec::new();
    let out = chain
        .into_iter()
        .filter(|r| {
            let d = rec_type(r) == Some("assistant") && drop(r);
            if d {
                repairs.push(Repair {
                    kind,
                    uuid: uuid_str(r),
                    detail: "dropped assistant record".into(),
                });
            }
            !d
        })
        .collect();
    (out, repairs)
}

/// Spec §6.4 `filterOrphanedThinkingOnlyMessages`: drop an assistant record whose
/// content is a non-empty array of only thinking/redacted_thinking blocks when no record
/// of its `message.id` has another kind of block. Applied by
/// [`super::api::load_conversation`] (B20). Blank text does not count as another kind:
/// 2.1.332 repeats its thinking-only and whitespace-only filters until neither drops a
/// record, so a reply of thinking and whitespace-only text records goes as a whole
/// (difftest `cut-assistant` of `entirecli__397737088f0a_0_full__other`); a reply of
/// whitespace-only text alone is left to B5.
pub fn filter_orphaned_thinking_only(chain: Vec<Value>) -> (Vec<Value>, Vec<Repair>) {
    let assistants = || chain.iter().filter(|r| rec_type(r) == Some("assistant"));
    let with_other: HashSet<String> = assistants()
        .filter(|r| {
            blocks(r)
                .iter()
                .any(|b| !is_thinking(b) && !is_blank_text(b))
        })
        .filter_map(|r| msg_id(r).map(str::to_owned))
        .collect();
    let with_thinking: HashSet<String> = assistants()
        .filter(|r| blocks(r).iter().any(is_thinking))
        .filter_map(|r| msg_id(r).map(str::to_owned))
        .collect();
    drop_records(chain, RepairKind::ThinkingOnlyDropped, |r| {
        let bs = blocks(r);
        let id = msg_id(r);
        if bs.is_empty() || id.is_some_and(|m| with_other.contains(m)) {
            return false;
        }
        bs.iter().all(is_thinking)
            || (id.is_some_and(|m| with_thinking.contains(m))
                && bs.iter().all(|b| is_thinking(b) || is_blank_text(b)))
    })
}

fn is_blank_text(b: &Value) -> bool {
    block_type(b) == Some("text")
        && b.get("text")
            .and_then(Value::as_str)
            .is_none_or(|t| t.trim().is_empty())
}

/// Spec §6.5 `filterWhitespaceOnlyAssistantMessages` (CLI 2.1.88): drop an
/// assistant record whose content is a non-empty array of only text blocks
/// with blank text. (The spec's follow-up merge of adjacent user records is
/// what [`super::api::normalize`] does anyway.)
///
/// **Not applied** by [`super::api::load_conversation`]: the oracle passes
/// every case without it. Opt-in; it makes such sessions API-valid.
pub fn filter_whitespace_only_assistants(chain: Vec<Value>) -> (Vec<Value>, Vec<Repair>) {
    drop_records(chain, RepairKind::WhitespaceOnlyDropped, |r| {
        let bs = blocks(r);
        !bs.is_empty()
            && bs.iter().all(|b| {
                block_type(b) == Some("text")
                    && b.get("text")
                        .and_then(Value::as_str)
                        .is_none_or(|t| t.trim().is_empty())
            })
    })
}

#[cfg(test)]
#[path = "repair_tests.rs"]
mod tests;
