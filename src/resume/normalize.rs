//! The send-time normalisation of the API view (R4–R10, R13–R15): what CLI 2.1.332 does to
//! the resumed records before it sends them: attachments reordered and merged, consecutive
//! user messages merged, reminders placed by the model's profile. Port of `normalize`,
//! `reorder_attachments`, `merge_user` and `merge_attachment` of the oracle's
//! `tool/apiview.py`.

use serde_json::{json, Value};

use super::answers;
use super::api::{TASK_NOTIFICATION_PREFIX, TASK_NOTIFICATION_SUFFIX};
use super::attachments;
use super::cli_version::{CliVersion, Rule};
use super::legacy;
use super::model::{model_profile, ModelProfile, ReminderStyle};
use super::render_later;
use super::render_open;
use super::thinking_strip;
use super::util::{block_type, is_tool_result_msg, msg_id, rec_type, str_field, truthy, FastMap};

/// R6: attachments move earlier past user records until they reach an
/// assistant record or a user record carrying tool_result blocks.
pub fn reorder_attachments(msgs: &[Value]) -> Vec<Value> {
    reordered(msgs).into_iter().cloned().collect()
}

/// [`reorder_attachments`] without copying the records.
fn reordered(msgs: &[Value]) -> Vec<&Value> {
    reordered_positions(msgs)
        .into_iter()
        .map(|i| &msgs[i])
        .collect()
}

/// [`reorder_attachments`] as positions in `msgs`.
fn reordered_positions(msgs: &[Value]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::with_capacity(msgs.len());
    let mut pending: Vec<usize> = Vec::new();
    for (i, r) in msgs.iter().enumerate().rev() {
        if rec_type(r) == Some("attachment") && !holds_attachments(r) {
            pending.push(i);
            continue;
        }
        let stop =
            rec_type(r) == Some("assistant") || is_tool_result_msg(r) || holds_attachments(r);
        if stop && !pending.is_empty() {
            out.append(&mut pending);
        }
        out.push(i);
    }
    out.append(&mut pending);
    out.reverse();
    out
}

/// A `message_pdf_reads` attachment (it sends nothing) stops R6: the attachments after it
/// stay after the prompt (difftest `insert-*` variants of `issue25_silent__*`; found by
/// bisecting the silent kinds with the real CLI).
fn holds_attachments(r: &Value) -> bool {
    r.get("attachment")
        .and_then(|a| a.get("type"))
        .and_then(Value::as_str)
        == Some("message_pdf_reads")
}

fn text_block(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

/// String content → one text block; array → its blocks; anything else → none.
fn as_blocks(c: &Value) -> Vec<Value> {
    match c {
        Value::String(s) => vec![text_block(s)],
        Value::Array(a) => a.clone(),
        _ => Vec::new(),
    }
}

/// tool_result blocks first, order otherwise kept.
fn hoist(blocks: Vec<Value>) -> Vec<Value> {
    let (mut res, other): (Vec<Value>, Vec<Value>) = blocks
        .into_iter()
        .partition(|b| block_type(b) == Some("tool_result"));
    res.extend(other);
    res
}

/// Append `"\n"` to a text block's `text` (the R8 seam), keeping key order.
fn add_seam(b: &mut Value) {
    if let Some(o) = b.as_object_mut() {
        let t = o
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
            + "\n";
        o.insert("text".into(), Value::String(t));
    }
}

/// R8: a user message (or R7 system text) merged after a user message; when
/// text meets text, `"\n"` is appended to the earlier text block; tool_result
/// blocks are hoisted to the front.
pub fn merge_user(a: &Value, b: &Value) -> Value {
    let mut a = as_blocks(a);
    let b = as_blocks(b);
    let b_text = b.first().and_then(block_type) == Some("text");
    if b_text {
        if let Some(last) = a.last_mut().filter(|l| block_type(l) == Some("text")) {
            add_seam(last);
        }
    }
    a.extend(b);
    Value::Array(hoist(a))
}

/// R9/R10: attachment texts merged into the preceding user message without a
/// seam; when that message ends with a tool_result, the text goes into it:
/// string content becomes [`fold_into_result_text`] (B12), list content
/// gets a new text block (and the `"\n"` seam on its last text block).
pub fn merge_attachment(a: &Value, texts: &[&str]) -> Value {
    merge_attachment_as(a, texts, CliVersion::default())
}

/// [`merge_attachment`] as the CLI of version `cli` merges (which texts stay beside a tool
/// result depends on it, [`stays_beside`]).
pub fn merge_attachment_as(a: &Value, texts: &[&str], cli: CliVersion) -> Value {
    let stays_beside = |t: &str| stays_beside(t, cli);
    let mut a = as_blocks(a);
    for t in texts {
        if stays_beside(t) {
            a.push(text_block(t));
            continue;
        }
        // the texts left beside a tool result do not stop the next fold into it
        let at = a
            .iter()
            .rposition(|b| {
                !b.get("text")
                    .and_then(Value::as_str)
                    .is_some_and(stays_beside)
            })
            .unwrap_or(a.len());
        let target = a.get(at);
        let last_is_result = target.and_then(block_type) == Some("tool_result");
        let last_content = target.and_then(|l| l.get("content"));
        match (last_is_result, last_content) {
            (true, Some(Value::String(s))) => {
                let new = fold_into_result_text(s, t);
                if let Some(o) = a.get_mut(at).and_then(Value::as_object_mut) {
                    o.insert("content".into(), Value::String(new));
                }
            }
            // A list holding tool_reference / search_result blocks is not folded into:
            // the reminder follows the tool_result (`soph__…__other`, message 78).
            (true, Some(Value::Array(inner)))
                if !inner
                    .iter()
                    .any(|b| matches!(block_type(b), Some("tool_reference" | "search_result"))) =>
            {
                let mut inner = inner.clone();
                if let Some(l) = inner.last_mut().filter(|l| block_type(l) == Some("text")) {
                    add_seam(l);
                }
                inner.push(text_block(t));
                if let Some(o) = a.get_mut(at).and_then(Value::as_object_mut) {
                    o.insert("content".into(), Value::Array(inner));
                }
            }
            _ => a.push(text_block(t)),
        }
    }
    Value::Array(hoist(a))
}

/// A reminder the CLI leaves as a text block of its own beside a tool result instead of
/// folding it in (R10): its fold skips texts of several fixed forms, of which sessiondb
/// follows one, the auto mode rules of CLI 2.1.336 (made case
/// `issue25_later__claude-sonnet-4-5`, the tool probe). Later reminders still fold into
/// the tool result before it. 2.1.332's fold has no such form ([`Rule::AutoModeRulesBeside`]):
/// as that version, a stored auto mode rules text is folded in too (made case
/// `issue25_beside_332__claude-sonnet-4-5`).
fn stays_beside(t: &str, cli: CliVersion) -> bool {
    cli.follows(Rule::AutoModeRulesBeside)
        && t.starts_with("<system-reminder>\n## Auto mode rules\n")
}

/// B12 (corrects R10): a reminder folded into a tool_result's string content is
/// `content.trim() + "\n\n" + text.trim()`, both ends trimmed (JavaScript `trim`), an
/// empty side left out. Old Read output `"     1→…"` loses its leading spaces:
/// `extagents__c1780de3c26f_3_full__own`.
pub fn fold_into_result_text(content: &str, text: &str) -> String {
    let parts: Vec<&str> = [js_trim(content), js_trim(text)]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect();
    parts.join("\n\n")
}

/// JavaScript's `String.prototype.trim`: its whitespace set differs from Rust's
/// (`U+FEFF` is trimmed, `U+0085` is not).
fn js_trim(s: &str) -> &str {
    fn js_space(c: char) -> bool {
        matches!(
            c,
            '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
                ..='\u{200a}'
                    | '\u{2028}'
                    | '\u{2029}'
                    | '\u{202f}'
                    | '\u{205f}'
                    | '\u{3000}'
                    | '\u{feff}'
        )
    }
    s.trim_matches(js_space)
}

fn has_tool_result_blocks(c: &Value) -> bool {
    c.as_array()
        .is_some_and(|a| a.iter().any(|b| block_type(b) == Some("tool_result")))
}

/// A message under construction: role, content, `message.id` (assistant).
struct Msg {
    role: &'static str,
    content: Value,
    mid: Option<String>,
    /// A user message holding only the reminders of attachments that followed a reply:
    /// it does not end that reply, a later record of the same `message.id` still merges
    /// into it (the reminders then follow the whole reply, as the CLI sends them; made
    /// case `issue25_split__*`).
    reminder: bool,
}

fn push_user(out: &mut Vec<Msg>, c: Value) {
    match out.last_mut() {
        Some(last) if last.role == "user" => {
            last.content = merge_user(&last.content, &c);
            last.reminder = false;
        }
        _ => out.push(Msg {
            role: "user",
            content: c,
            mid: None,
            reminder: false,
        }),
    }
}

/// Loaded records → API messages `{"role","content"}`:
/// R6 attachment reordering, then R13 (drop API-error assistants),
/// R4 assistant merge by `message.id` (looking back over assistant and
/// tool_result user messages), R5 rendered attachments (those without
/// `rendered` are not sent), R7 only `system/local_command` sent as user
/// text, R8–R10 user merges, R14 shape (unmerged user string content stays a
/// string), R15 task-notification wrapping. Other record types are ignored.
pub fn normalize(msgs: &[Value]) -> Vec<Value> {
    normalize_for(msgs.to_vec(), None)
}

/// What [`normalize_owned`] does with a record.
enum Kind {
    System,
    User,
    Attachment,
    Assistant,
    Other,
}

/// [`normalize`] taking the records: their contents move into the messages instead of
/// being copied (a long session's contents are megabytes of JSON).
pub fn normalize_owned(msgs: Vec<Value>) -> Vec<Value> {
    normalize_for(msgs, None)
}

/// [`normalize_owned`] for a target model (`ApiOptions::model`): the send-time rules
/// that depend on the model (B1, B10) use it. `None` = no model known. As the newest
/// checked CLI ([`normalize_as`] for another).
pub fn normalize_for(msgs: Vec<Value>, model: Option<&str>) -> Vec<Value> {
    normalize_as(msgs, model, CliVersion::default())
}

/// [`normalize_for`] as the CLI of version `cli` sends (`--cli-version`): the rules that
/// differ between versions ([`Rule`]) follow it.
pub fn normalize_as(mut msgs: Vec<Value>, model: Option<&str>, cli: CliVersion) -> Vec<Value> {
    let profile = model_profile(model);
    answers::apply(&mut msgs, cli);
    let system_mode = profile.reminders == ReminderStyle::SystemMessages;
    let order = reordered_positions(&msgs);
    let strip_plan = thinking_strip::plan(&msgs);
    // thinking blocks of each stripped reply met so far, and replies left with no block
    let mut strip_seen: FastMap<String, usize> = FastMap::default();
    let mut stripped_empty: Vec<String> = Vec::new();
    // per `message.id`: (a record held a `fallback` block, a record held another block)
    let mut fallback_of: FastMap<String, (bool, bool)> = FastMap::default();
    let mut slots: Vec<Option<Value>> = msgs.into_iter().map(Some).collect();
    let mut out: Vec<Msg> = Vec::new();
    // B10: reminders waiting for the next `system` message.
    let mut pending: Vec<String> = Vec::new();
    for i in order {
        let Some(mut m) = slots[i].take() else {
            continue;
        };
        let kind = match rec_type(&m) {
            Some("assistant") if truthy(m.get("isApiErrorMessage")) => continue,
            Some("system") => Kind::System,
            Some("user") => Kind::User,
            Some("attachment") => Kind::Attachment,
            Some("assistant") => Kind::Assistant,
            _ => Kind::Other,
        };
        match kind {
            Kind::System => {
                if str_field(&m, "subtype") != Some("local_command") {
                    continue;
                }
                let c = m
                    .get_mut("content")
                    .map(Value::take)
                    .unwrap_or_else(|| json!(""));
                push_user(&mut out, c);
            }
            Kind::User => {
                let task = m
                    .get("origin")
                    .and_then(|o| o.get("kind"))
                    .and_then(Value::as_str)
                    == Some("task-notification");
                let mut c = take_content(&mut m).unwrap_or(Value::Null);
                if let Value::Array(blocks) = c {
                    c = Value::Array(legacy::tool_references(blocks, model));
                }
                if task {
                    if let Value::String(s) = &c {
                        c = Value::String(format!(
                            "{TASK_NOTIFICATION_PREFIX}{s}{TASK_NOTIFICATION_SUFFIX}"
                        ));
                    }
                }
                push_user(&mut out, c);
            }
            Kind::Attachment => {
                let Some(texts) = attachment_texts(&m, &profile, cli) else {
                    continue;
                };
                if system_mode && !stays_user(&m, cli) {
                    let joined = texts
                        .iter()
                        .map(|t| attachments::unwrap(t))
                        .collect::<Vec<_>>()
                        .join("\n");
                    if !js_trim(&joined).is_empty() {
                        pending.push(if profile.wrap_system_reminders {
                            attachments::wrap(&joined)
                        } else {
                            joined
                        });
                    }
                    continue;
                }
                match out.last_mut() {
                    // B10: for `system`-message models an attachment kept in the user
                    // turn merges as user text, with the R8 seam on the text before it
                    // (difftest `insert-account_memory_recall` of `issue25_silent__claude-opus-4-8`);
                    // right after a tool result it is folded into it as for the folded
                    // form (R10; made case `issue25_beside_332__claude-opus-4-8`).
                    Some(last)
                        if last.role == "user" && system_mode && !ends_in_result(&last.content) =>
                    {
                        let blocks = texts.iter().map(|t| text_block(t)).collect();
                        last.content = merge_user(&last.content, &Value::Array(blocks));
                    }
                    Some(last) if last.role == "user" => {
                        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
                        last.content = merge_attachment_as(&last.content, &texts, cli);
                    }
                    // No user message to merge into: each text is a user message of its
                    // own (string content); later ones merge into the last of them
                    // (made case `issue25_files__claude-sonnet-4-5`).
                    // A kind whose texts are blocks of one message (`mcp_resource`):
                    // one user message holding them (made case `issue25_open__claude-sonnet-4-5`).
                    _ if one_message(&m) => out.push(Msg {
                        role: "user",
                        content: Value::Array(
                            texts
                                .into_iter()
                                .map(|t| json!({"type": "text", "text": t}))
                                .collect(),
                        ),
                        mid: None,
                        reminder: true,
                    }),
                    _ => out.extend(texts.into_iter().map(|t| Msg {
                        role: "user",
                        content: Value::String(t),
                        mid: None,
                        reminder: true,
                    })),
                }
            }
            Kind::Assistant => {
                let mid = msg_id(&m).map(str::to_owned);
                let blocks = take_content(&mut m).map(into_blocks).unwrap_or_default();
                let record_model = m.get("message").and_then(|x| str_field(x, "model"));
                if let Some(id) = &mid {
                    let fb = blocks.iter().any(|b| block_type(b) == Some("fallback"));
                    let other = blocks.iter().any(|b| block_type(b) != Some("fallback"));
                    match fallback_of.get_mut(id) {
                        Some(e) => *e = (e.0 || fb, e.1 || other),
                        None => {
                            fallback_of.insert(id.clone(), (fb, other));
                        }
                    }
                }
                let mut blocks = legacy::assistant_blocks(blocks, record_model, model);
                if let Some(from) = mid.as_ref().and_then(|id| strip_plan.get(id)) {
                    let id = mid.clone().unwrap_or_default();
                    let seen = strip_seen.entry(id.clone()).or_default();
                    let here = thinking_strip::count(&blocks);
                    let had = !blocks.is_empty();
                    blocks = thinking_strip::strip(blocks, *from, *seen);
                    *seen += here;
                    if had && blocks.is_empty() {
                        stripped_empty.push(id);
                    }
                }
                let mut target = None;
                if let Some(id) = &mid {
                    for k in (0..out.len()).rev() {
                        if out[k].role == "system" {
                            continue;
                        }
                        if out[k].role == "assistant" {
                            if out[k].mid.as_deref() == Some(id) && out[k].content.is_array() {
                                target = Some(k);
                            }
                            if out[k].mid.as_deref() == Some(id) {
                                break;
                            }
                            continue;
                        }
                        if !has_tool_result_blocks(&out[k].content) && !out[k].reminder {
                            break;
                        }
                    }
                }
                match target.and_then(|k| out[k].content.as_array_mut()) {
                    Some(a) => a.extend(blocks),
                    None => {
                        flush_system(&mut out, &mut pending, &profile);
                        out.push(Msg {
                            role: "assistant",
                            content: Value::Array(blocks),
                            mid,
                            reminder: false,
                        });
                    }
                }
            }
            Kind::Other => {}
        }
    }
    flush_system(&mut out, &mut pending, &profile);
    for m in out.iter_mut().filter(|m| m.role == "assistant") {
        let empty = m.content.as_array().is_some_and(Vec::is_empty);
        if empty && m.mid.as_ref().is_some_and(|id| stripped_empty.contains(id)) {
            m.content = json!([thinking_strip::placeholder()]);
        } else if empty
            && m.mid
                .as_ref()
                .and_then(|id| fallback_of.get(id))
                .is_some_and(|&(fb, other)| fb && !other)
        {
            // A reply of nothing but `fallback` blocks: the CLI removes them before the
            // pairing pass and puts `(no content)` in their place, so the pass does not
            // see an empty reply (difftest `cut-assistant` of `issue25_misses__*`).
            m.content = json!([{"type": "text", "text": legacy::NO_CONTENT, "citations": []}]);
        }
    }
    let msgs = out
        .into_iter()
        .map(|m| json!({"role": m.role, "content": m.content}))
        .collect();
    legacy::pair_tool_results(msgs)
}

/// The reminder texts an attachment record sends, in the CLI's wrapped form: its stored
/// `rendered[].content` strings (R5), else — records of CLI ≤ 2.1.237 have none — the
/// texts [`attachments::render`] makes from the payload (B3). `None` when nothing is sent.
fn attachment_texts(m: &Value, profile: &ModelProfile, cli: CliVersion) -> Option<Vec<String>> {
    if answers::left_out(m) || dropped_for(m, profile) {
        return None;
    }
    let stored = m.get("rendered").filter(|_| !from_payload(m, cli));
    let texts: Vec<String> = match stored {
        Some(Value::Array(r)) => r
            .iter()
            .filter_map(|x| x.get("content").and_then(Value::as_str))
            .map(str::to_owned)
            .collect(),
        Some(_) => return None,
        None => attachments::render(m.get("attachment")?, profile, cli)?
            .iter()
            .map(|t| attachments::wrap(t))
            .collect(),
    };
    (!texts.is_empty()).then_some(texts)
}

/// Kinds the CLI skips, stored text and all, for a model they are not meant for:
/// `batching_reminder` and `secondary_reminder` unless the model gets `system` messages,
/// `output_limit_note` unless it also is the note's model (2.1.332 and 2.1.336 alike;
/// made case `issue25_later__claude-sonnet-4-5`, the last turn).
fn dropped_for(m: &Value, profile: &ModelProfile) -> bool {
    let Some(a) = m.get("attachment") else {
        return false;
    };
    match a.get("type").and_then(Value::as_str) {
        Some("batching_reminder" | "secondary_reminder") => {
            profile.reminders != ReminderStyle::SystemMessages
        }
        Some("output_limit_note") => !render_open::output_limit_note_kept(a, profile),
        _ => false,
    }
}

/// An attachment the CLI renders from its payload even when it has a stored text
/// ([`render_later::rendered_from_payload`]), unless an answer rewrote that text
/// ([`answers::rewritten`]).
fn from_payload(m: &Value, cli: CliVersion) -> bool {
    !answers::rewritten(m) && payload_kind(m, cli)
}

/// An attachment of a kind of [`render_later::RENDERED_FROM_PAYLOAD`] (for a CLI that
/// knows it).
fn payload_kind(m: &Value, cli: CliVersion) -> bool {
    kind_of(m).is_some_and(|k| render_later::rendered_from_payload(k, cli))
}

/// `attachment.type`.
fn kind_of(m: &Value) -> Option<&str> {
    m.get("attachment")
        .and_then(|a| a.get("type"))
        .and_then(Value::as_str)
}

/// Content whose last block is a tool result (an R10 fold target).
fn ends_in_result(c: &Value) -> bool {
    c.as_array().and_then(|a| a.last()).and_then(block_type) == Some("tool_result")
}

/// An attachment whose re-rendered texts the CLI sends as the blocks of one message.
fn one_message(m: &Value) -> bool {
    m.get("rendered").is_none()
        && m.get("attachment")
            .and_then(|a| a.get("type"))
            .and_then(Value::as_str)
            .is_some_and(attachments::one_message)
}

/// B10: attachments that stay user text even for models that get `system` messages: a
/// stored `renderedRole: "user"`, or a type the CLI keeps in the user turn, or one it
/// does not know ([`render_later::known`]: 2.1.332 promotes only known kinds).
fn stays_user(m: &Value, cli: CliVersion) -> bool {
    // the CLI never reads a stored role for the kinds it renders from their payload,
    // not even when an answer rewrote their text
    let role = m.get("renderedRole").filter(|_| !payload_kind(m, cli));
    match role.and_then(Value::as_str) {
        Some(role) => role == "user",
        None => {
            kind_of(m).is_some_and(|k| attachments::stays_user(k) || !render_later::known(k, cli))
        }
    }
}

/// B10: the reminders collected since the last assistant message become one
/// `{"role":"system","content": texts joined by "\n\n"}` after the user message of
/// their turn (merged into a `system` message already there). With no user message
/// before them (after an assistant message, or at the start) the CLI sends them as a
/// user message instead, wrapped in `<system-reminder>`.
fn flush_system(out: &mut Vec<Msg>, pending: &mut Vec<String>, profile: &ModelProfile) {
    if pending.is_empty() {
        return;
    }
    let text = pending.join("\n\n");
    pending.clear();
    match out.last_mut() {
        Some(last) if last.role == "system" => {
            if let Value::String(s) = &mut last.content {
                s.push_str("\n\n");
                s.push_str(&text);
            }
        }
        Some(last) if last.role == "user" => out.push(Msg {
            role: "system",
            content: Value::String(text),
            mid: None,
            reminder: false,
        }),
        _ => out.push(Msg {
            role: "user",
            content: Value::String(if profile.wrap_system_reminders {
                text
            } else {
                attachments::wrap(&text)
            }),
            mid: None,
            reminder: false,
        }),
    }
}

/// Takes `message.content` out of a record.
fn take_content(r: &mut Value) -> Option<Value> {
    r.get_mut("message")
        .and_then(|m| m.get_mut("content"))
        .map(Value::take)
}

/// [`as_blocks`] of an owned content, without copying it.
fn into_blocks(c: Value) -> Vec<Value> {
    match c {
        Value::String(s) => vec![text_block(&s)],
        Value::Array(a) => a,
        _ => Vec::new(),
    }
}
