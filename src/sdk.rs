//! The Agent SDK's reading of a session: `get_session_messages`, `list_subagents` and
//! `get_subagent_messages` (Python `claude-agent-sdk` 0.2.189), answered from the store.
//!
//! The SDK's chain is not the CLI's (`resume::chain`), so it has its own pure functions here:
//!
//! * entries are `user`, `assistant`, `progress`, `system` and `attachment` records with a
//!   string `uuid`, sidechain records included;
//! * the leaf: from every record no entry names as `parentUuid`, walk up to the nearest
//!   user/assistant record; prefer those that are not sidechain, team or meta records; take
//!   the one latest in the file; then follow `parentUuid` to the root (`logicalParentUuid`
//!   is not followed, so a compaction cuts history; no preserved-segment splice);
//! * parallel tool calls are put back (`recover_parallel`), with results placed through
//!   `sourceToolAssistantUUID` or a `tool_use_id` only when written by the same agent;
//! * returned: user/assistant records that are not meta, sidechain or team records.
//!
//! Sub-agent transcripts take the last user/assistant record as the leaf and return every
//! user/assistant record of its chain.

use crate::error::Result;
use crate::jsonl;
use crate::jsonl::pretty::Pretty;
use crate::model::SessionRef;
use crate::resume::util::{truthy, FastMap, FastSet};
use rusqlite::{Connection, OptionalExtension};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::marker::PhantomData;

/// One message as the SDK's `SessionMessage` has it. `M` is how its `message` is held: a
/// parsed value, or, for a caller that only writes messages out, the JSON text as stored
/// ([`StoredMessage`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionMessage<M = Value> {
    /// `user` or `assistant`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The record's `uuid`.
    pub uuid: String,
    /// The record's own `sessionId` (`""` when absent), not necessarily the file's id.
    pub session_id: Value,
    /// The record's `message`, verbatim.
    pub message: M,
    /// For sub-agents: the `toolUseId` of the agent's `.meta.json` sidecar.
    pub parent_tool_use_id: Option<String>,
    /// For nested sub-agents: the `parentAgentId` of the sidecar.
    pub parent_agent_id: Option<String>,
}

/// A [`SessionMessage`] whose `message` is not parsed yet: `messages --json` writes most
/// of them from their stored text (see [`MessageJson::write_pretty`]).
pub type StoredMessage = SessionMessage<MessageJson>;

impl StoredMessage {
    /// The message with its `message` parsed.
    pub fn parse(self) -> SessionMessage {
        SessionMessage {
            kind: self.kind,
            uuid: self.uuid,
            session_id: self.session_id,
            message: self.message.into_value(),
            parent_tool_use_id: self.parent_tool_use_id,
            parent_agent_id: self.parent_agent_id,
        }
    }
}

/// A record's `message` as read from its stored line.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageJson {
    /// Its JSON text as written in the line (which import found to be JSON).
    Text(Box<str>),
    /// Its value, when the line had to be parsed in full to find it.
    Value(Value),
}

impl MessageJson {
    /// The value the SDK returns: the text read as `JSON.parse` reads it (see
    /// [`jsonl::lenient`]), `null` when it cannot be.
    pub fn into_value(self) -> Value {
        match self {
            MessageJson::Text(text) => jsonl::parse_json(&text).unwrap_or(Value::Null),
            MessageJson::Value(value) => value,
        }
    }

    /// Writes the bytes [`Pretty::value`] writes for [`MessageJson::into_value`]: the text
    /// re-indented where [`Pretty::json_text`] can (building each message's values was
    /// most of `messages --json`), else parsed and written.
    pub fn write_pretty(&self, p: &mut Pretty<'_>) {
        match self {
            MessageJson::Text(text) => {
                if !p.json_text(text) {
                    p.value(&jsonl::parse_json(text).unwrap_or(Value::Null));
                }
            }
            MessageJson::Value(value) => p.value(value),
        }
    }
}

/// The top-level fields of a record that the SDK's chain looks at.
#[derive(Deserialize)]
struct RawEntry {
    #[serde(rename = "type", default)]
    kind: Option<Value>,
    #[serde(default)]
    uuid: Option<Value>,
    #[serde(rename = "parentUuid", default)]
    parent_uuid: Option<Value>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<Value>,
    #[serde(rename = "isMeta", default)]
    is_meta: Option<Value>,
    #[serde(rename = "teamName", default)]
    team_name: Option<Value>,
    #[serde(rename = "agentId", default)]
    agent_id: Option<Value>,
    #[serde(default)]
    timestamp: Option<Value>,
    #[serde(rename = "sourceToolAssistantUUID", default)]
    source_tool: Option<Value>,
    #[serde(rename = "sessionId", default)]
    session_id: Option<Value>,
    #[serde(default)]
    message: Option<ObjectOr<RawMessage>>,
}

/// `message` as far as the chain needs it; everything else in it is skipped unread.
#[derive(Deserialize)]
struct RawMessage {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    content: Option<ArrayOf<ObjectOr<RawBlock>>>,
}

/// A JSON value read as `T` when it is an object and skipped otherwise, in the same pass.
struct ObjectOr<T>(Option<T>);

/// A JSON value read as a list of `T` when it is an array and skipped otherwise.
struct ArrayOf<T>(Vec<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOr<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = ObjectOr<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|t| ObjectOr(Some(t)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ObjectOr(None))
            }
            crate::jsonl::skip_scalars!(ObjectOr(None), str);
        }
        d.deserialize_any(V(PhantomData))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ArrayOf<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = ArrayOf<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ArrayOf(Vec::new()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(item) = seq.next_element::<T>()? {
                    out.push(item);
                }
                Ok(ArrayOf(out))
            }
            crate::jsonl::skip_scalars!(ArrayOf(Vec::new()), str);
        }
        d.deserialize_any(V(PhantomData))
    }
}

#[derive(Deserialize)]
struct RawBlock {
    #[serde(rename = "type", default)]
    kind: Option<Value>,
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    tool_use_id: Option<Value>,
}

/// A transcript entry: the fields the SDK's chain reads (the `message` itself is read again
/// from the stored line only for the messages returned).
#[derive(Debug, Clone)]
pub struct Entry {
    /// The `rows.id` of the line (0 when parsed outside the store).
    pub row: i64,
    kind: String,
    uuid: String,
    parent: Option<String>,
    sidechain: bool,
    meta: bool,
    team: bool,
    agent_id: Option<Value>,
    timestamp: String,
    source_tool: Option<String>,
    session_id: Value,
    message_id: Option<String>,
    tool_use_ids: Vec<String>,
    tool_result_ids: Vec<String>,
    has_tool_result: bool,
    /// Where `message` is in the stored line, when the fast path found it: the messages
    /// returned are parsed from there, without scanning the line again.
    message_at: Option<std::ops::Range<usize>>,
}

fn string(v: Option<Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// Types the SDK reads as transcript entries.
const ENTRY_TYPES: [&str; 5] = ["user", "assistant", "progress", "system", "attachment"];

/// Parses one JSONL line the way the SDK does (the line trimmed, then JSON): `None` unless
/// it is an object with an entry type and a string `uuid`.
pub fn parse_entry(line: &[u8]) -> Option<Entry> {
    let text = python_strip(line)?;
    entry_of(serde_json::from_str(text).ok().or_else(|| {
        // What JSON.parse and Python's json accept beyond serde_json (jsonl::lenient).
        serde_json::from_value(jsonl::parse_json(text)?).ok()
    })?)
}

/// [`parse_entry`] for a stored line that import found to be a UTF-8 JSON object (status
/// 0). Only the fields the entry reads are parsed; the others (most of all a tool result's
/// `toolUseResult`) are skipped by [`jsonl::pick`]'s scanner, which does not stop at every
/// escape as serde_json's skipping does. The answer is the full parse's: a line the scanner
/// cannot take apart, or with a field twice (which the full parse rejects), is parsed in
/// full. (One difference is left: a skipped value nested deeper than serde_json's limit of
/// 128 no longer fails the line.)
fn parse_stored_entry(line: &[u8]) -> Option<Entry> {
    let Some(json) = ascii_strip(line) else {
        return parse_entry(line);
    };
    let Some((raw, message)) = raw_entry_from_fields(json) else {
        return entry_of(
            serde_json::from_slice(json)
                .ok()
                .or_else(|| serde_json::from_value(lenient(json)?).ok())?,
        );
    };
    let mut entry = entry_of(raw)?;
    // `message` is a slice of `line`: its place is the distance between their starts.
    entry.message_at = message.map(|m| {
        let at = m.as_ptr() as usize - line.as_ptr() as usize;
        at..at + m.len()
    });
    Some(entry)
}

/// The top-level keys of a record that [`RawEntry`] reads, in its order.
const ENTRY_KEYS: [&[u8]; 11] = [
    b"type",
    b"uuid",
    b"parentUuid",
    b"isSidechain",
    b"isMeta",
    b"teamName",
    b"agentId",
    b"timestamp",
    b"sourceToolAssistantUUID",
    b"sessionId",
    b"message",
];

/// The [`RawEntry`] of a valid JSON object, from the fields it reads, and its `message` as
/// written; `None` to have the caller parse the object in full. The `message` is taken
/// apart in the same pass that finds it (each byte of a line is scanned once).
fn raw_entry_from_fields(json: &[u8]) -> Option<(RawEntry, Option<&[u8]>)> {
    let mut message_read = None;
    let mut read_message = |at: usize| {
        if json.get(at) != Some(&b'{') {
            return jsonl::value_end(json, at);
        }
        let (message, end) = raw_message_at(json, at)?;
        message_read = Some(message);
        Some(end)
    };
    let ([kind, uuid, parent, sidechain, meta, team, agent, time, source, session, message], _) =
        jsonl::pick_at(json, 0, ENTRY_KEYS, Some((10, &mut read_message)))?;
    let raw_message = match message {
        Some(m) if m.starts_with(b"{") => Some(ObjectOr(Some(message_read.take()?))),
        Some(m) if m != b"null" => Some(ObjectOr(None)),
        _ => None,
    };
    let raw = RawEntry {
        kind: value_of(kind),
        uuid: value_of(uuid),
        parent_uuid: value_of(parent),
        is_sidechain: value_of(sidechain),
        is_meta: value_of(meta),
        team_name: value_of(team),
        agent_id: value_of(agent),
        timestamp: value_of(time),
        source_tool: value_of(source),
        session_id: value_of(session),
        message: raw_message,
    };
    Some((raw, message))
}

/// A field's value as `Option<Value>` reads it (`null` and an absent field are `None`).
/// The usual values (a string without escapes, `true`, `false`) are built directly: a
/// parser per field was a tenth of `messages --json`.
fn value_of(span: Option<&[u8]>) -> Option<Value> {
    let span = span?;
    match span {
        b"null" => return None,
        b"true" => return Some(Value::Bool(true)),
        b"false" => return Some(Value::Bool(false)),
        // Eight bytes at a time: uuids and timestamps are most of these bytes.
        [b'"', text @ .., b'"'] if jsonl::pretty::next_special(text, 0) == text.len() => {
            if let Ok(text) = std::str::from_utf8(text) {
                return Some(Value::String(text.to_owned()));
            }
        }
        _ => {}
    }
    match lenient(span)? {
        Value::Null => None,
        v => Some(v),
    }
}

/// The [`RawMessage`] of the `message` object that starts at `start`, from the fields and
/// blocks the chain reads, and where the object ends.
fn raw_message_at(json: &[u8], start: usize) -> Option<(RawMessage, usize)> {
    let mut blocks_read = None;
    let mut read_content = |at: usize| {
        if json.get(at) != Some(&b'[') {
            return jsonl::value_end(json, at);
        }
        let mut blocks = Vec::new();
        let end = jsonl::array_items_at(json, at, |item| {
            if json.get(item) != Some(&b'{') {
                blocks.push(ObjectOr(None));
                return jsonl::value_end(json, item);
            }
            let ([kind, id, tool_use_id], end) =
                jsonl::pick_at(json, item, [b"type", b"id", b"tool_use_id"], None)?;
            blocks.push(ObjectOr(Some(RawBlock {
                kind: value_of(kind),
                id: value_of(id),
                tool_use_id: value_of(tool_use_id),
            })));
            Some(end)
        })?;
        blocks_read = Some(blocks);
        Some(end)
    };
    let ([id, content], end) = jsonl::pick_at(
        json,
        start,
        [b"id", b"content"],
        Some((1, &mut read_content)),
    )?;
    let content = match content {
        Some(c) if c.starts_with(b"[") => Some(ArrayOf(blocks_read.take()?)),
        Some(c) if c != b"null" => Some(ArrayOf(Vec::new())),
        _ => None,
    };
    Some((
        RawMessage {
            id: value_of(id),
            content,
        },
        end,
    ))
}

/// The text `json.loads` gets from the SDK: the line with Python's `str.strip()`, which
/// also takes `\x1c`-`\x1f`; `None` for a line that is not UTF-8 or strips to nothing.
fn python_strip(line: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(line).ok()?;
    let text = text.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c));
    (!text.is_empty()).then_some(text)
}

/// [`python_strip`] of a line known to be UTF-8, byte by byte; `None` when the stripped
/// line is empty or has a non-ASCII byte at either end (it may be Unicode white space
/// that only [`python_strip`] knows).
fn ascii_strip(line: &[u8]) -> Option<&[u8]> {
    let space = |b: &u8| matches!(b, b'\t'..=b'\r' | b'\x1c'..=b'\x1f' | b' ');
    let start = line.iter().position(|b| !space(b))?;
    let end = line.iter().rposition(|b| !space(b))? + 1;
    let json = &line[start..end];
    (json[0].is_ascii() && json[json.len() - 1].is_ascii()).then_some(json)
}

/// The entry of a parsed line, when it is one.
fn entry_of(raw: RawEntry) -> Option<Entry> {
    let kind = string(raw.kind).filter(|k| ENTRY_TYPES.contains(&k.as_str()))?;
    let uuid = string(raw.uuid)?;
    let mut entry = Entry {
        row: 0,
        parent: string(raw.parent_uuid).filter(|p| !p.is_empty()),
        sidechain: truthy(raw.is_sidechain.as_ref()),
        meta: truthy(raw.is_meta.as_ref()),
        team: truthy(raw.team_name.as_ref()),
        agent_id: raw.agent_id,
        timestamp: string(raw.timestamp).unwrap_or_default(),
        source_tool: string(raw.source_tool),
        session_id: raw
            .session_id
            .unwrap_or_else(|| Value::String(String::new())),
        message_id: None,
        tool_use_ids: Vec::new(),
        tool_result_ids: Vec::new(),
        has_tool_result: false,
        message_at: None,
        kind,
        uuid,
    };
    if let Some(ObjectOr(Some(message))) = raw.message {
        if entry.kind == "assistant" {
            entry.message_id = string(message.id).filter(|id| !id.is_empty());
        }
        for block in message.content.map(|c| c.0).unwrap_or_default() {
            let ObjectOr(Some(block)) = block else {
                continue;
            };
            match block.kind.as_ref().and_then(Value::as_str) {
                Some("tool_use") => entry.tool_use_ids.extend(string(block.id)),
                Some("tool_result") => {
                    entry.has_tool_result = true;
                    entry.tool_result_ids.extend(string(block.tool_use_id));
                }
                _ => {}
            }
        }
    }
    Some(entry)
}

impl Entry {
    fn is_tool_result(&self) -> bool {
        self.kind == "user" && self.parent.is_some() && self.has_tool_result
    }

    fn same_writer(&self, other: &Entry) -> bool {
        self.sidechain == other.sidechain && self.agent_id == other.agent_id
    }

    fn is_visible(&self) -> bool {
        (self.kind == "user" || self.kind == "assistant")
            && !self.meta
            && !self.sidechain
            && !self.team
    }

    /// The `message` of the entry's stored line, `line`: its text when the fast path
    /// found where it is, else its value from a full parse.
    fn message_in(&self, line: &[u8]) -> MessageJson {
        match self.message_at.clone().and_then(|at| line.get(at)) {
            Some(m) => match std::str::from_utf8(m) {
                Ok(text) => MessageJson::Text(text.into()),
                Err(_) => MessageJson::Value(Value::Null),
            },
            None => MessageJson::Value(message_of(line)),
        }
    }

    fn to_message(
        &self,
        message: MessageJson,
        tool_use: Option<&str>,
        agent: Option<&str>,
    ) -> StoredMessage {
        SessionMessage {
            kind: self.kind.clone(),
            uuid: self.uuid.clone(),
            session_id: self.session_id.clone(),
            message,
            parent_tool_use_id: tool_use.map(str::to_owned),
            parent_agent_id: agent.map(str::to_owned),
        }
    }
}

/// The `message` of a stored line that import found to be UTF-8 (`null` when absent),
/// parsed in full (leniently: see [`jsonl::lenient`]).
fn message_of(line: &[u8]) -> Value {
    let parsed = match ascii_strip(line) {
        Some(json) => match jsonl::pick(json, [b"message"]) {
            Some([message]) => {
                return message.map_or(Value::Null, |m| lenient(m).unwrap_or(Value::Null))
            }
            None => lenient(json),
        },
        None => python_strip(line).and_then(jsonl::parse_json),
    };
    match parsed {
        Some(Value::Object(mut o)) => o.remove("message").unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// uuid → entry (a later duplicate wins), with first-seen order kept, like a Python dict.
struct Index<'a> {
    order: Vec<&'a str>,
    by_uuid: FastMap<&'a str, &'a Entry>,
}

impl<'a> Index<'a> {
    fn new(entries: &'a [Entry]) -> Self {
        let mut order = Vec::new();
        let mut by_uuid = FastMap::default();
        for e in entries {
            if by_uuid.insert(e.uuid.as_str(), e).is_none() {
                order.push(e.uuid.as_str());
            }
        }
        Index { order, by_uuid }
    }

    fn get(&self, uuid: Option<&str>) -> Option<&'a Entry> {
        uuid.and_then(|u| self.by_uuid.get(u).copied())
    }

    fn values(&self) -> impl Iterator<Item = &'a Entry> + '_ {
        self.order
            .iter()
            .filter_map(|u| self.by_uuid.get(u).copied())
    }
}

/// The SDK's main-session chain, root to leaf, parallel tool calls recovered.
pub fn conversation_chain(entries: &[Entry]) -> Vec<&Entry> {
    if entries.is_empty() {
        return Vec::new();
    }
    let index = Index::new(entries);
    let position: FastMap<&str, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.uuid.as_str(), i))
        .collect();
    let parents: FastSet<&str> = entries.iter().filter_map(|e| e.parent.as_deref()).collect();
    let mut leaves: Vec<&Entry> = Vec::new();
    for terminal in entries
        .iter()
        .filter(|e| !parents.contains(e.uuid.as_str()))
    {
        let mut seen = FastSet::default();
        let mut cur = Some(terminal);
        while let Some(e) = cur {
            if !seen.insert(e.uuid.as_str()) {
                break;
            }
            if e.kind == "user" || e.kind == "assistant" {
                leaves.push(e);
                break;
            }
            cur = index.get(e.parent.as_deref());
        }
    }
    let best = |candidates: &[&'_ Entry]| -> Option<usize> {
        let mut best: Option<(usize, i64)> = None;
        for (i, c) in candidates.iter().enumerate() {
            let pos = position.get(c.uuid.as_str()).map_or(-1, |p| *p as i64);
            if best.is_none_or(|(_, b)| pos > b) {
                best = Some((i, pos));
            }
        }
        best.map(|(i, _)| i)
    };
    let main: Vec<&Entry> = leaves
        .iter()
        .copied()
        .filter(|l| !l.sidechain && !l.team && !l.meta)
        .collect();
    let leaf = if main.is_empty() {
        best(&leaves).map(|i| leaves[i])
    } else {
        best(&main).map(|i| main[i])
    };
    let Some(leaf) = leaf else {
        return Vec::new();
    };
    let mut seen = FastSet::default();
    let chain = walk_to_root(&index, leaf, &mut seen);
    recover_parallel(&index, chain, &mut seen)
}

/// Puts back the records of a parallel tool-call response that the walk left off the
/// chain, and their results, right after the response's last record on the chain
/// (SDK quirk 16).
fn recover_parallel<'a>(
    index: &Index<'a>,
    chain: Vec<&'a Entry>,
    seen: &mut FastSet<&'a str>,
) -> Vec<&'a Entry> {
    let assistants: Vec<&Entry> = chain
        .iter()
        .copied()
        .filter(|e| e.kind == "assistant")
        .collect();
    let mut anchor: FastMap<&str, &str> = FastMap::default();
    for e in &assistants {
        if let Some(m) = e.message_id.as_deref() {
            anchor.insert(m, e.uuid.as_str());
        }
    }
    if anchor.is_empty() {
        return chain;
    }
    let mut siblings: FastMap<&str, Vec<&Entry>> = FastMap::default();
    // A call id claimed by two different responses maps to None: never used.
    let mut call_owner: FastMap<&str, Option<&Entry>> = FastMap::default();
    let mut results: Vec<&Entry> = Vec::new();
    for e in index.values() {
        if let Some(m) = e.message_id.as_deref() {
            siblings.entry(m).or_default().push(e);
            for call in &e.tool_use_ids {
                match call_owner.get(call.as_str()) {
                    None => {
                        call_owner.insert(call, Some(e));
                    }
                    Some(owner) => {
                        let same = owner.is_some_and(|o| o.message_id.as_deref() == Some(m));
                        call_owner.insert(call, if same { Some(e) } else { None });
                    }
                }
            }
        } else if e.is_tool_result() {
            results.push(e);
        }
    }
    let mut by_assistant: FastMap<&str, Vec<&Entry>> = FastMap::default();
    for r in &results {
        if let Some(p) = r.parent.as_deref() {
            by_assistant.entry(p).or_default().push(r);
        }
        if let Some(src) = r.source_tool.as_deref() {
            if index.get(Some(src)).is_some_and(|s| r.same_writer(s)) {
                by_assistant.entry(src).or_default().push(r);
            }
        }
        for call in &r.tool_result_ids {
            if let Some(Some(owner)) = call_owner.get(call.as_str()) {
                if r.same_writer(owner) {
                    by_assistant.entry(owner.uuid.as_str()).or_default().push(r);
                }
            }
        }
    }
    let mut answered_on_chain: Option<FastSet<&str>> = None;
    let position: FastMap<&str, usize> = index
        .order
        .iter()
        .enumerate()
        .map(|(i, u)| (*u, i))
        .collect();
    let mut processed: FastSet<&str> = FastSet::default();
    let mut inserts: FastMap<&str, Vec<&Entry>> = FastMap::default();
    for a in &assistants {
        let Some(mid) = a.message_id.as_deref() else {
            continue;
        };
        if !processed.insert(mid) {
            continue;
        }
        let group: Vec<&Entry> = siblings.get(mid).cloned().unwrap_or_else(|| vec![*a]);
        let members: FastSet<&str> = group.iter().map(|m| m.uuid.as_str()).collect();
        let mut lost_siblings: Vec<&Entry> = group
            .iter()
            .copied()
            .filter(|m| !seen.contains(m.uuid.as_str()))
            .collect();
        let mut lost_results: Vec<&Entry> = Vec::new();
        let mut strays: Vec<&Entry> = Vec::new();
        let mut collected: FastSet<&str> = FastSet::default();
        for m in &group {
            for r in by_assistant
                .get(m.uuid.as_str())
                .map(Vec::as_slice)
                .unwrap_or(&[])
            {
                let u = r.uuid.as_str();
                if seen.contains(u) || !collected.insert(u) {
                    continue;
                }
                if r.parent.as_deref().is_some_and(|p| members.contains(p)) {
                    lost_results.push(r);
                } else {
                    strays.push(r);
                }
            }
        }
        if !strays.is_empty() {
            let on_chain = answered_on_chain.get_or_insert_with(|| {
                chain
                    .iter()
                    .flat_map(|e| e.tool_result_ids.iter().map(String::as_str))
                    .collect()
            });
            let mut answered: FastSet<&str> = on_chain.clone();
            for r in &lost_results {
                answered.extend(r.tool_result_ids.iter().map(String::as_str));
            }
            strays.sort_by_key(|e| position.get(e.uuid.as_str()).copied().unwrap_or(usize::MAX));
            for r in strays {
                let opens = r.tool_result_ids.iter().any(|call| {
                    !answered.contains(call.as_str())
                        && matches!(call_owner.get(call.as_str()),
                            Some(Some(owner)) if members.contains(owner.uuid.as_str()))
                });
                if !opens {
                    continue;
                }
                answered.extend(r.tool_result_ids.iter().map(String::as_str));
                lost_results.push(r);
            }
        }
        if lost_siblings.is_empty() && lost_results.is_empty() {
            continue;
        }
        lost_siblings.sort_by(|x, y| x.timestamp.cmp(&y.timestamp));
        lost_results.sort_by(|x, y| x.timestamp.cmp(&y.timestamp));
        lost_siblings.extend(lost_results);
        for e in &lost_siblings {
            seen.insert(e.uuid.as_str());
        }
        if let Some(at) = anchor.get(mid) {
            inserts.insert(at, lost_siblings);
        }
    }
    if inserts.is_empty() {
        return chain;
    }
    let mut out = Vec::with_capacity(chain.len());
    for e in chain {
        out.push(e);
        if let Some(extra) = inserts.get(e.uuid.as_str()) {
            out.extend(extra.iter().copied());
        }
    }
    out
}

/// The records `get_session_messages` returns, in order, before paging.
pub fn visible_chain(entries: &[Entry]) -> Vec<&Entry> {
    conversation_chain(entries)
        .into_iter()
        .filter(|e| e.is_visible())
        .collect()
}

/// The SDK's sub-agent chain: the last user/assistant record is the leaf.
pub fn subagent_chain(entries: &[Entry]) -> Vec<&Entry> {
    let index = Index::new(entries);
    let Some(leaf) = entries
        .iter()
        .rev()
        .find(|e| e.kind == "user" || e.kind == "assistant")
    else {
        return Vec::new();
    };
    walk_to_root(&index, leaf, &mut FastSet::default())
}

/// The records from `leaf` up its parents to the root (or to a record seen before: a
/// cycle ends the walk), root first; `seen` gets their uuids.
fn walk_to_root<'a>(
    index: &Index<'a>,
    leaf: &'a Entry,
    seen: &mut FastSet<&'a str>,
) -> Vec<&'a Entry> {
    let mut chain = Vec::new();
    let mut cur = Some(leaf);
    while let Some(e) = cur {
        if !seen.insert(e.uuid.as_str()) {
            break;
        }
        chain.push(e);
        cur = index.get(e.parent.as_deref());
    }
    chain.reverse();
    chain
}

/// The SDK's paging: with `limit > 0` the Python slice `[offset : offset + limit]` (a
/// negative offset counts from the end); otherwise `offset` counts only when > 0.
pub fn page<T>(items: Vec<T>, limit: Option<i64>, offset: i64) -> Vec<T> {
    let len = items.len() as i64;
    let clamp = |i: i64| -> usize {
        let i = if i < 0 {
            i.saturating_add(len).max(0)
        } else {
            i.min(len)
        };
        i as usize
    };
    // A client's offset and limit may be anything up to i64's bounds: saturate, never wrap.
    let (start, stop) = match limit {
        Some(l) if l > 0 => (clamp(offset), clamp(offset.saturating_add(l))),
        _ if offset > 0 => (clamp(offset), len as usize),
        _ => return items,
    };
    if start >= stop {
        return Vec::new();
    }
    items.into_iter().skip(start).take(stop - start).collect()
}

/// The reads the SDK readers need, once per backend: the rules above (entries, chains,
/// paging, the sub-agents' order) use them and hold no SQL. The SQLite store's are below
/// ([`get_session_messages`] and its siblings); the team store's are in `pg::sdk`.
pub(crate) trait SdkSource {
    /// The live main transcript of a session when it is a non-empty file (the SDK finds
    /// nothing for a missing or 0-byte file).
    fn main_transcript(&mut self, session: &SessionRef) -> Result<Option<i64>>;
    /// Calls `each(row, line)` for every stored line of `transcript` that import found to
    /// be a well-formed record (status 0) of an entry type, in file order.
    fn entry_lines(&mut self, transcript: i64, each: &mut dyn FnMut(i64, &[u8])) -> Result<()>;
    /// Calls `each(i, line)` with the stored line of `rows[i]`, for every `i`.
    fn lines(&mut self, rows: &[i64], each: &mut dyn FnMut(usize, &[u8])) -> Result<()>;
    /// The live transcripts that have an agent id and a subpath starting with
    /// `subagents/` (as SQLite's `LIKE` matches it: ASCII letters in any case), in any
    /// order.
    fn subagents(&mut self, session: &SessionRef) -> Result<Vec<StoredSubagent>>;
}

/// A sub-agent transcript as stored.
pub(crate) struct StoredSubagent {
    /// Its `transcripts.id`.
    pub transcript: i64,
    /// The agent id.
    pub agent_id: String,
    /// Its path in the session folder, without `.jsonl` (`subagents/agent-x`).
    pub subpath: String,
    /// The `.meta.json` sidecar's bytes.
    pub meta: Option<Vec<u8>>,
}

const SELECT_MAIN: &str = "SELECT id FROM transcripts
     WHERE session_id = ?1 AND subpath = '' AND superseded_at IS NULL";

const SELECT_ENTRY_ROWS: &str = "SELECT id, raw FROM rows
     WHERE transcript_id = ?1 AND status = 0
       AND type IN ('user', 'assistant', 'progress', 'system', 'attachment')
     ORDER BY ordinal";

const SELECT_NON_EMPTY: &str = "SELECT EXISTS (SELECT 1 FROM rows WHERE transcript_id = ?1
       AND (length(raw) > 0 OR terminated = 1))";

const SELECT_SUBAGENTS: &str = "SELECT id, agent_id, subpath, meta_json FROM transcripts
     WHERE session_id = ?1 AND agent_id IS NOT NULL AND superseded_at IS NULL
       AND subpath LIKE 'subagents/%'";

/// The SQLite store's [`SdkSource`].
struct Sqlite<'c>(&'c Connection);

impl SdkSource for Sqlite<'_> {
    fn main_transcript(&mut self, session: &SessionRef) -> Result<Option<i64>> {
        let Some(id) = self
            .0
            .prepare_cached(SELECT_MAIN)?
            .query_row([session.key], |r| r.get::<_, i64>(0))
            .optional()?
        else {
            return Ok(None);
        };
        let non_empty: bool = self
            .0
            .prepare_cached(SELECT_NON_EMPTY)?
            .query_row([id], |r| r.get(0))?;
        Ok(non_empty.then_some(id))
    }

    fn entry_lines(&mut self, transcript: i64, each: &mut dyn FnMut(i64, &[u8])) -> Result<()> {
        let mut stmt = self.0.prepare_cached(SELECT_ENTRY_ROWS)?;
        let mut rows = stmt.query([transcript])?;
        while let Some(row) = rows.next()? {
            match row.get_ref(1)? {
                rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => {
                    each(row.get(0)?, b);
                }
                _ => continue,
            }
        }
        Ok(())
    }

    fn lines(&mut self, rows: &[i64], each: &mut dyn FnMut(usize, &[u8])) -> Result<()> {
        let mut stmt = self
            .0
            .prepare_cached("SELECT raw FROM rows WHERE id = ?1")?;
        for (i, row) in rows.iter().enumerate() {
            stmt.query_row([row], |r| {
                each(i, r.get_ref(0)?.as_bytes()?);
                Ok(())
            })?;
        }
        Ok(())
    }

    fn subagents(&mut self, session: &SessionRef) -> Result<Vec<StoredSubagent>> {
        Ok(self
            .0
            .prepare_cached(SELECT_SUBAGENTS)?
            .query_map([session.key], |r| {
                Ok(StoredSubagent {
                    transcript: r.get(0)?,
                    agent_id: r.get(1)?,
                    subpath: r.get(2)?,
                    meta: r.get(3)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?)
    }
}

fn entries_of(src: &mut impl SdkSource, transcript: i64) -> Result<Vec<Entry>> {
    let mut out = Vec::new();
    src.entry_lines(transcript, &mut |row, bytes| {
        if let Some(mut entry) = parse_stored_entry(bytes) {
            entry.row = row;
            out.push(entry);
        }
    })?;
    Ok(out)
}

/// The messages of `entries`, each `message` read from its stored line.
fn messages_of(
    src: &mut impl SdkSource,
    entries: &[&Entry],
    tool_use: Option<&str>,
    agent: Option<&str>,
) -> Result<Vec<StoredMessage>> {
    let rows: Vec<i64> = entries.iter().map(|e| e.row).collect();
    let mut messages: Vec<Option<MessageJson>> = Vec::new();
    messages.resize_with(entries.len(), || None);
    src.lines(&rows, &mut |i, line| {
        messages[i] = Some(entries[i].message_in(line))
    })?;
    Ok(entries
        .iter()
        .zip(messages)
        .map(|(e, message)| {
            e.to_message(
                message.unwrap_or(MessageJson::Value(Value::Null)),
                tool_use,
                agent,
            )
        })
        .collect())
}

/// One read transaction around a reader's queries, unless the caller has one open: the
/// entries and the messages then come from the same state of the store (a writer may
/// commit between two statements), and SQLite takes its locks once instead of once per
/// statement (a `fcntl` pair for each of the messages read back one by one).
struct Snapshot<'c> {
    _open: Option<rusqlite::Transaction<'c>>,
}

impl<'c> Snapshot<'c> {
    fn begin(conn: &'c Connection) -> Result<Self> {
        let open = if conn.is_autocommit() {
            Some(conn.unchecked_transaction()?)
        } else {
            None
        };
        Ok(Snapshot { _open: open })
    }
}

/// `get_session_messages(session, limit, offset)`.
///
/// # Errors
/// Fails on a database error.
pub fn get_session_messages(
    conn: &Connection,
    session: &SessionRef,
    limit: Option<i64>,
    offset: i64,
) -> Result<Vec<SessionMessage>> {
    Ok(stored_session_messages(conn, session, limit, offset)?
        .into_iter()
        .map(StoredMessage::parse)
        .collect())
}

/// [`get_session_messages`] with each `message` left as stored.
///
/// # Errors
/// Fails on a database error.
pub fn stored_session_messages(
    conn: &Connection,
    session: &SessionRef,
    limit: Option<i64>,
    offset: i64,
) -> Result<Vec<StoredMessage>> {
    let _snapshot = Snapshot::begin(conn)?;
    session_messages_with(&mut Sqlite(conn), session, limit, offset)
}

/// [`stored_session_messages`] over either store.
pub(crate) fn session_messages_with(
    src: &mut impl SdkSource,
    session: &SessionRef,
    limit: Option<i64>,
    offset: i64,
) -> Result<Vec<StoredMessage>> {
    let Some(main) = src.main_transcript(session)? else {
        return Ok(Vec::new());
    };
    let entries = entries_of(src, main)?;
    let chain = page(visible_chain(&entries), limit, offset);
    messages_of(src, &chain, None, None)
}

/// Sub-agents in the SDK's order: a depth-first walk of `subagents/` with each folder's
/// entries sorted by name.
fn subagents_of(src: &mut impl SdkSource, session: &SessionRef) -> Result<Vec<StoredSubagent>> {
    if src.main_transcript(session)?.is_none() {
        return Ok(Vec::new());
    }
    let mut found: Vec<(Vec<String>, StoredSubagent)> = src
        .subagents(session)?
        .into_iter()
        .map(|s| {
            let mut parts: Vec<String> = s.subpath.split('/').map(str::to_owned).collect();
            if let Some(last) = parts.last_mut() {
                last.push_str(".jsonl");
            }
            (parts, s)
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found.into_iter().map(|(_, s)| s).collect())
}

/// `list_subagents(session)`: the agent ids, in the SDK's order.
///
/// # Errors
/// Fails on a database error.
pub fn list_subagents(conn: &Connection, session: &SessionRef) -> Result<Vec<String>> {
    list_subagents_with(&mut Sqlite(conn), session)
}

/// [`list_subagents`] over either store.
pub(crate) fn list_subagents_with(
    src: &mut impl SdkSource,
    session: &SessionRef,
) -> Result<Vec<String>> {
    Ok(subagents_of(src, session)?
        .into_iter()
        .map(|s| s.agent_id)
        .collect())
}

/// `get_subagent_messages(session, agent_id, limit, offset)`; each message carries the
/// sidecar's `toolUseId` / `parentAgentId` when the sidecar is a JSON object.
///
/// # Errors
/// Fails on a database error.
pub fn get_subagent_messages(
    conn: &Connection,
    session: &SessionRef,
    agent_id: &str,
    limit: Option<i64>,
    offset: i64,
) -> Result<Vec<SessionMessage>> {
    Ok(
        stored_subagent_messages(conn, session, agent_id, limit, offset)?
            .into_iter()
            .map(StoredMessage::parse)
            .collect(),
    )
}

/// [`get_subagent_messages`] with each `message` left as stored.
///
/// # Errors
/// Fails on a database error.
pub fn stored_subagent_messages(
    conn: &Connection,
    session: &SessionRef,
    agent_id: &str,
    limit: Option<i64>,
    offset: i64,
) -> Result<Vec<StoredMessage>> {
    let _snapshot = Snapshot::begin(conn)?;
    subagent_messages_with(&mut Sqlite(conn), session, agent_id, limit, offset)
}

/// [`stored_subagent_messages`] over either store.
pub(crate) fn subagent_messages_with(
    src: &mut impl SdkSource,
    session: &SessionRef,
    agent_id: &str,
    limit: Option<i64>,
    offset: i64,
) -> Result<Vec<StoredMessage>> {
    if agent_id.is_empty() {
        return Ok(Vec::new());
    }
    let Some(agent) = subagents_of(src, session)?
        .into_iter()
        .find(|s| s.agent_id == agent_id)
    else {
        return Ok(Vec::new());
    };
    let meta: Option<serde_json::Map<String, Value>> = agent
        .meta
        .as_deref()
        .and_then(|m| serde_json::from_slice::<Value>(m).ok())
        .and_then(|v| match v {
            Value::Object(map) => Some(map),
            _ => None,
        });
    let field = |k: &str| {
        meta.as_ref()
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let (tool_use, parent_agent) = (field("toolUseId"), field("parentAgentId"));
    let entries = entries_of(src, agent.transcript)?;
    let chain: Vec<&Entry> = subagent_chain(&entries)
        .into_iter()
        .filter(|e| e.kind == "user" || e.kind == "assistant")
        .collect();
    let chain = page(chain, limit, offset);
    messages_of(src, &chain, tool_use.as_deref(), parent_agent.as_deref())
}

/// A JSON value from UTF-8 bytes, as `JSON.parse` (and Python's `json`) accept it: see
/// [`jsonl::lenient`].
fn lenient(bytes: &[u8]) -> Option<Value> {
    jsonl::parse_json(std::str::from_utf8(bytes).ok()?)
}

#[cfg(test)]
#[path = "sdk_tests.rs"]
mod tests;
