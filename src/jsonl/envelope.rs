//! A fast, lenient projection of one JSONL record: only the fields the store indexes are
//! extracted, nested content is skipped without being built, and a field of an unexpected
//! type is treated as absent rather than failing the line.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// How a stored line parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineStatus {
    /// A JSON object: Claude Code's loader reads it.
    Record = 0,
    /// Empty or whitespace only.
    Blank = 1,
    /// Not a JSON object (torn write, glued records, invalid UTF-8, ...): kept, flagged.
    Malformed = 2,
}

/// The projected fields of a record. Strings borrow from the line where they can.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Envelope<'a> {
    /// `type`.
    pub kind: Option<Cow<'a, str>>,
    /// `uuid`.
    pub uuid: Option<Cow<'a, str>>,
    /// `parentUuid`.
    pub parent_uuid: Option<Cow<'a, str>>,
    /// `logicalParentUuid`.
    pub logical_parent_uuid: Option<Cow<'a, str>>,
    /// `isSidechain: true`.
    pub is_sidechain: bool,
    /// `sessionId`.
    pub session_id: Option<Cow<'a, str>>,
    /// `agentId`.
    pub agent_id: Option<Cow<'a, str>>,
    /// `timestamp`.
    pub timestamp: Option<Cow<'a, str>>,
    /// `subtype` (system records).
    pub subtype: Option<Cow<'a, str>>,
    /// `message.id`.
    pub message_id: Option<Cow<'a, str>>,
    /// `message.role`.
    pub role: Option<Cow<'a, str>>,
    /// `isMeta: true`.
    pub is_meta: bool,
    /// `isCompactSummary: true`.
    pub is_compact_summary: bool,
    /// `isApiErrorMessage: true`.
    pub is_api_error: bool,
    /// `sourceToolAssistantUUID`.
    pub source_tool_assistant_uuid: Option<Cow<'a, str>>,
    /// `cwd`.
    pub cwd: Option<Cow<'a, str>>,
    /// Top-level keys this version of sessiondb does not know (kept in the raw line).
    pub unknown_fields: u32,
    /// What the record states about its API response, read in the same pass (the usage
    /// projection reads an assistant line from it instead of parsing the line again).
    pub billing: Billing<'a>,
}

/// The fields of a record that the usage projection reads ([`crate::usage::record`])
/// beyond the envelope's own, captured by [`Envelope::parse`]. An owned envelope
/// ([`Envelope::into_owned`]) drops them: its reader parses the line itself.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Billing<'a> {
    /// The fields below say what that reader's own parse of the line would say: set by
    /// [`Envelope::parse`] unless a field it reads had a type it rejects or appeared twice,
    /// or the record holds `data` (a nested record). False on an owned envelope.
    pub usable: bool,
    /// `requestId`.
    pub request_id: Option<Cow<'a, str>>,
    /// `gitBranch`.
    pub git_branch: Option<Cow<'a, str>>,
    /// `message.model`.
    pub model: Option<Cow<'a, str>>,
    /// `message.usage`, as its JSON text.
    pub usage: Option<&'a str>,
    /// `costUSD`, as its JSON text.
    pub cost_usd: Option<&'a str>,
}

/// Top-level keys seen in Claude Code transcripts (spec §3 and the corpus). Anything else
/// is counted as unknown; it still round-trips, because the raw line is what is stored.
const KNOWN_FIELDS: &[&str] = &[
    "type",
    "uuid",
    "parentUuid",
    "logicalParentUuid",
    "isSidechain",
    "sessionId",
    "session_id",
    "agentId",
    "timestamp",
    "subtype",
    "message",
    "isMeta",
    "isCompactSummary",
    "isApiErrorMessage",
    "sourceToolAssistantUUID",
    "cwd",
    "userType",
    "version",
    "gitBranch",
    "slug",
    "requestId",
    "toolUseResult",
    "toolUseID",
    "data",
    "parentToolUseID",
    "entrypoint",
    "attachment",
    "promptId",
    "messageId",
    "snapshot",
    "isSnapshotUpdate",
    "effort",
    "level",
    "permissionMode",
    "thinkingMetadata",
    "leafUuid",
    "hookCount",
    "hookInfos",
    "hookErrors",
    "preventedContinuation",
    "stopReason",
    "hasOutput",
    "todos",
    "mode",
    "lastPrompt",
    "durationMs",
    "error",
    "content",
    "retryInMs",
    "retryAttempt",
    "maxRetries",
    "summary",
    "operation",
    "attributionSkill",
    "attributionAgent",
    "messageCount",
    "promptSource",
    "aiTitle",
    "hookAdditionalContext",
    "origin",
    "prNumber",
    "prUrl",
    "prRepository",
    "bridgeSessionId",
    "lastSequenceNum",
    "isVisibleInTranscriptOnly",
    "compactMetadata",
    "sourceToolUseID",
    "classifierMetaLines",
    "pendingWorkflowCount",
    "mcpMeta",
    "snapshotMessageId",
    "trackingPath",
    "backup",
    "customTitle",
    "agentName",
    "agentColor",
    "agentSetting",
    "apiErrorStatus",
    "cause",
    "microcompactMetadata",
    "imagePasteIds",
    "planContent",
    "url",
    "teamName",
    "isVirtual",
    "summarizeMetadata",
    "replacements",
    "worktreeSession",
    "rendered",
    "explicit",
    "forkedFrom",
    "snipMetadata",
    "tag",
    "taskSummary",
    "delta",
    "isolationLatch",
    "side",
    "parentSessionId",
    "parentLastUuid",
    "contextLength",
    "costState",
    "synthetic",
];

/// Record types Claude Code is known to write (spec §3, §14 and the corpus).
pub const KNOWN_TYPES: &[&str] = &[
    "user",
    "assistant",
    "attachment",
    "system",
    "progress",
    "summary",
    "custom-title",
    "ai-title",
    "tag",
    "agent-name",
    "agent-color",
    "agent-setting",
    "mode",
    "permission-mode",
    "worktree-state",
    "pr-link",
    "last-prompt",
    "file-history-snapshot",
    "file-history-delta",
    "content-replacement",
    "queue-operation",
    "task-summary",
    "speculation-accept",
    "attribution-snapshot",
    "marble-origami-commit",
    "marble-origami-snapshot",
    "frame-link",
    "isolation-latch",
    "fork-context-ref",
    "api-request",
    "api-request-blob",
    "api-request-shape",
    "tools-used",
    "cost-state",
    "atis-latch",
    "bridge-session",
];

impl<'a> Envelope<'a> {
    /// Projects a line. Returns the status and, for a record, its envelope.
    pub fn parse(bytes: &'a [u8]) -> (LineStatus, Envelope<'a>) {
        let Some(text) = super::parse_text(bytes) else {
            return (LineStatus::Malformed, Envelope::default());
        };
        if text.is_empty() {
            return (LineStatus::Blank, Envelope::default());
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let parsed = de.deserialize_any(EnvelopeVisitor).and_then(|env| {
            de.end()?;
            Ok(env)
        });
        match parsed {
            Ok(Some(env)) => (LineStatus::Record, env),
            _ => (LineStatus::Malformed, Envelope::default()),
        }
    }

    /// The same envelope owning its strings, so that it can outlive the line (import
    /// parses on one thread and writes on another).
    pub fn into_owned(self) -> Envelope<'static> {
        let own = |s: Option<Cow<'a, str>>| s.map(|s| Cow::Owned(s.into_owned()));
        Envelope {
            kind: own(self.kind),
            uuid: own(self.uuid),
            parent_uuid: own(self.parent_uuid),
            logical_parent_uuid: own(self.logical_parent_uuid),
            is_sidechain: self.is_sidechain,
            session_id: own(self.session_id),
            agent_id: own(self.agent_id),
            timestamp: own(self.timestamp),
            subtype: own(self.subtype),
            message_id: own(self.message_id),
            role: own(self.role),
            is_meta: self.is_meta,
            is_compact_summary: self.is_compact_summary,
            is_api_error: self.is_api_error,
            source_tool_assistant_uuid: own(self.source_tool_assistant_uuid),
            cwd: own(self.cwd),
            unknown_fields: self.unknown_fields,
            billing: Billing::default(),
        }
    }

    /// Whether `type` is one this version knows.
    pub fn has_known_type(&self) -> bool {
        self.kind
            .as_deref()
            .is_some_and(|kind| KNOWN_TYPES.contains(&kind))
    }
}

/// Visits the top level; `None` when the value is not an object.
struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Option<Envelope<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut env = Envelope::default();
        let mut check = Strictness::default();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let key = key.0;
            match key.as_ref() {
                "type" => env.kind = check.text(1 << 0, map.next_value()?),
                "uuid" => env.uuid = map.next_value::<Text>()?.0,
                "parentUuid" => env.parent_uuid = map.next_value::<Text>()?.0,
                "logicalParentUuid" => env.logical_parent_uuid = map.next_value::<Text>()?.0,
                "isSidechain" => env.is_sidechain = map.next_value::<Flag>()?.0,
                "sessionId" => env.session_id = map.next_value::<Text>()?.0,
                "agentId" => env.agent_id = check.text(1 << 1, map.next_value()?),
                "timestamp" => env.timestamp = check.text(1 << 2, map.next_value()?),
                "subtype" => env.subtype = map.next_value::<Text>()?.0,
                "isMeta" => env.is_meta = map.next_value::<Flag>()?.0,
                "isCompactSummary" => env.is_compact_summary = map.next_value::<Flag>()?.0,
                "isApiErrorMessage" => env.is_api_error = map.next_value::<Flag>()?.0,
                "sourceToolAssistantUUID" => {
                    env.source_tool_assistant_uuid = map.next_value::<Text>()?.0
                }
                "cwd" => env.cwd = check.text(1 << 3, map.next_value()?),
                "requestId" => env.billing.request_id = check.text(1 << 4, map.next_value()?),
                "gitBranch" => env.billing.git_branch = check.text(1 << 5, map.next_value()?),
                "costUSD" => {
                    check.field(1 << 6, true);
                    env.billing.cost_usd = Some(map.next_value::<&'de RawValue>()?.get());
                }
                "data" => {
                    check.irregular = true;
                    map.next_value::<IgnoredAny>()?;
                }
                "message" => {
                    let head = map.next_value::<MessageHead>()?;
                    check.field(1 << 7, !head.irregular);
                    env.message_id = head.id;
                    env.role = head.role;
                    env.billing.model = head.model;
                    env.billing.usage = head.usage;
                }
                other => {
                    if !KNOWN_FIELDS.contains(&other) {
                        env.unknown_fields += 1;
                    }
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        env.billing.usable = !check.irregular;
        Ok(Some(env))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    crate::jsonl::skip_scalars!(None, str);
}

/// An object key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(TypedVisitor)
            .map(|t| Key(t.text.unwrap_or(Cow::Borrowed(""))))
    }
}

/// A string field; any other JSON type reads as absent.
struct Text<'a>(Option<Cow<'a, str>>);

impl<'de> serde::Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TypedVisitor).map(|t| Text(t.text))
    }
}

/// Whether the fields the usage reader reads are as it accepts them: each at most once, a
/// string or `null` where it reads a string, an object or `null` where it reads one.
#[derive(Default)]
struct Strictness {
    /// The fields seen so far, one bit each.
    seen: u16,
    irregular: bool,
}

impl Strictness {
    /// Notes the field of bit `bit`, of an accepted type or not.
    fn field(&mut self, bit: u16, accepted: bool) {
        self.irregular |= !accepted || self.seen & bit != 0;
        self.seen |= bit;
    }

    /// Notes a string field and gives its text.
    fn text<'a>(&mut self, bit: u16, typed: Typed<'a>) -> Option<Cow<'a, str>> {
        self.field(bit, typed.accepted);
        typed.text
    }
}

/// A string field read as [`Text`] reads it, noting whether it was a string or `null`
/// (what a strict reader of an optional string accepts).
struct Typed<'a> {
    text: Option<Cow<'a, str>>,
    accepted: bool,
}

impl<'de> serde::Deserialize<'de> for Typed<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TypedVisitor)
    }
}

struct TypedVisitor;

impl<'de> Visitor<'de> for TypedVisitor {
    type Value = Typed<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(typed(Some(Cow::Borrowed(v)), true))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(typed(Some(Cow::Owned(v.to_owned())), true))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(typed(Some(Cow::Owned(v)), true))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(typed(None, true))
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(typed(None, true))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(typed(None, false))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(typed(None, false))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(typed(None, false))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(typed(None, false))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(typed(None, false))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(typed(None, false))
    }
}

fn typed(text: Option<Cow<'_, str>>, accepted: bool) -> Typed<'_> {
    Typed { text, accepted }
}

/// A boolean field that counts only when it is JSON `true`.
struct Flag(bool);

impl<'de> serde::Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = d.deserialize_any(FlagVisitor)?;
        Ok(Flag(value))
    }
}

struct FlagVisitor;

impl<'de> Visitor<'de> for FlagVisitor {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
        Ok(v)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(false)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(false)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
}

/// `message.id` and `message.role`, and for the usage reader `model` and the text of
/// `usage`; the content is skipped without being built.
#[derive(Default)]
struct MessageHead<'a> {
    id: Option<Cow<'a, str>>,
    role: Option<Cow<'a, str>>,
    model: Option<Cow<'a, str>>,
    usage: Option<&'a str>,
    /// Not an object or `null`, or a field the usage reader reads was not as it accepts
    /// (see [`Strictness`]).
    irregular: bool,
}

impl<'de> serde::Deserialize<'de> for MessageHead<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MessageHeadVisitor)
    }
}

struct MessageHeadVisitor;

/// A `message` that is neither an object nor `null`.
fn not_an_object<'a>() -> MessageHead<'a> {
    MessageHead {
        irregular: true,
        ..MessageHead::default()
    }
}

impl<'de> Visitor<'de> for MessageHeadVisitor {
    type Value = MessageHead<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut head = MessageHead::default();
        let mut check = Strictness::default();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match key.0.as_ref() {
                "id" => head.id = check.text(1 << 0, map.next_value()?),
                "role" => head.role = map.next_value::<Text>()?.0,
                "model" => head.model = check.text(1 << 1, map.next_value()?),
                "usage" => {
                    check.field(1 << 2, true);
                    head.usage = Some(map.next_value::<&'de RawValue>()?.get());
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        head.irregular = check.irregular;
        Ok(head)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(not_an_object())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(MessageHead::default())
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(MessageHead::default())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(not_an_object())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(not_an_object())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(not_an_object())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(not_an_object())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(not_an_object())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projects_the_indexed_fields() {
        let line = br#"{"parentUuid":null,"isSidechain":false,"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"hi"}]},"uuid":"u1","timestamp":"2025-01-01T00:00:00.000Z","sessionId":"s1","zz":1}"#;
        let (status, env) = Envelope::parse(line);
        assert_eq!(status, LineStatus::Record);
        assert_eq!(env.kind.as_deref(), Some("assistant"));
        assert_eq!(env.uuid.as_deref(), Some("u1"));
        assert_eq!(env.parent_uuid, None);
        assert_eq!(env.message_id.as_deref(), Some("msg_1"));
        assert_eq!(env.role.as_deref(), Some("assistant"));
        assert_eq!(env.session_id.as_deref(), Some("s1"));
        assert_eq!(env.unknown_fields, 1);
        assert!(env.has_known_type());
    }

    #[test]
    fn odd_types_read_as_absent() {
        let (status, env) =
            Envelope::parse(br#"{"type":7,"uuid":{"a":1},"isSidechain":"yes","message":"x"}"#);
        assert_eq!(status, LineStatus::Record);
        assert_eq!(env.kind, None);
        assert_eq!(env.uuid, None);
        assert!(!env.is_sidechain);
    }

    #[test]
    fn statuses() {
        assert_eq!(Envelope::parse(b"").0, LineStatus::Blank);
        assert_eq!(Envelope::parse(b" \r").0, LineStatus::Blank);
        assert_eq!(Envelope::parse(b"{}{}").0, LineStatus::Malformed);
        assert_eq!(Envelope::parse(b"[]").0, LineStatus::Malformed);
        assert_eq!(Envelope::parse(b"{\"a\":").0, LineStatus::Malformed);
        assert_eq!(Envelope::parse(b"\xff").0, LineStatus::Malformed);
        assert_eq!(
            Envelope::parse(b"\xef\xbb\xbf{\"type\":\"x\"}\r").0,
            LineStatus::Record
        );
    }

    #[test]
    fn escaped_strings_are_owned() {
        let (_, env) = Envelope::parse(br#"{"type":"us\u0065r"}"#);
        assert_eq!(env.kind.as_deref(), Some("user"));
    }
}
