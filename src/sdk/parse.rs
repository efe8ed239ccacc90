//! The SDK's reading of one stored line: which records are entries, and the fields of each
//! that its chain looks at, read leniently the way the SDK's Python reads them.

use super::{lenient, truthy, MessageJson, SessionMessage, StoredMessage};
use crate::jsonl;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::marker::PhantomData;

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
    pub(super) kind: String,
    pub(super) uuid: String,
    pub(super) parent: Option<String>,
    pub(super) sidechain: bool,
    pub(super) meta: bool,
    pub(super) team: bool,
    pub(super) agent_id: Option<Value>,
    pub(super) timestamp: String,
    pub(super) source_tool: Option<String>,
    pub(super) session_id: Value,
    pub(super) message_id: Option<String>,
    pub(super) tool_use_ids: Vec<String>,
    pub(super) tool_result_ids: Vec<String>,
    pub(super) has_tool_result: bool,
    /// Where `message` is in the stored line, when the fast path found it: the messages
    /// returned are parsed from there, without scanning the line again.
    pub(super) message_at: Option<std::ops::Range<usize>>,
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
pub(super) fn parse_stored_entry(line: &[u8]) -> Option<Entry> {
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
pub(super) fn python_strip(line: &[u8]) -> Option<&str> {
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
    /// An entry known only from its row's columns (see [`super::EntryColumns`]): what
    /// the chain's walk reads. Its flags read false and it has no tool calls or results
    /// until its line is read.
    pub(super) fn from_columns(c: super::EntryColumns) -> Entry {
        Entry {
            row: c.row,
            kind: c.kind,
            uuid: c.uuid,
            parent: c.parent.filter(|p| !p.is_empty()),
            sidechain: false,
            meta: false,
            team: false,
            agent_id: None,
            timestamp: String::new(),
            source_tool: c.source_tool,
            session_id: Value::String(String::new()),
            message_id: None,
            tool_use_ids: Vec::new(),
            tool_result_ids: Vec::new(),
            has_tool_result: false,
            message_at: None,
        }
    }

    /// Whether `read`, this entry's line as read, has the fields its columns gave.
    pub(super) fn columns_agree(&self, read: &Entry) -> bool {
        self.kind == read.kind
            && self.uuid == read.uuid
            && self.parent == read.parent
            && self.source_tool == read.source_tool
    }

    pub(super) fn is_tool_result(&self) -> bool {
        self.kind == "user" && self.parent.is_some() && self.has_tool_result
    }

    pub(super) fn same_writer(&self, other: &Entry) -> bool {
        self.sidechain == other.sidechain && self.agent_id == other.agent_id
    }

    pub(super) fn is_visible(&self) -> bool {
        (self.kind == "user" || self.kind == "assistant")
            && !self.meta
            && !self.sidechain
            && !self.team
    }

    /// The `message` of the entry's stored line, `line`: its text when the fast path
    /// found where it is, else its value from a full parse.
    pub(super) fn message_in(&self, line: &[u8]) -> MessageJson {
        match self.message_at.clone().and_then(|at| line.get(at)) {
            Some(m) => match std::str::from_utf8(m) {
                Ok(text) => MessageJson::Text(text.into()),
                Err(_) => MessageJson::Value(Value::Null),
            },
            None => MessageJson::Value(message_of(line)),
        }
    }

    pub(super) fn to_message(
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
pub(super) fn message_of(line: &[u8]) -> Value {
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
