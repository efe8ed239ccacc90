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
use crate::resume::util::truthy;
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;
use serde_json::Value;

mod chain;
mod parse;
pub use chain::{conversation_chain, page, subagent_chain, visible_chain};
use parse::parse_stored_entry;
pub use parse::{parse_entry, Entry};

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
    /// The rows of `transcript` that [`SdkSource::entry_lines`] reads and that have a
    /// `uuid`, as their columns hold them, in file order, without reading a line (a
    /// compressed line costs its decoding; most of a long session's lines are not on the
    /// chain shown).
    fn entry_columns(&mut self, transcript: i64) -> Result<Vec<EntryColumns>>;
    /// Calls `each(i, line)` with the stored line of `rows[i]`, for every `i`. The lines
    /// read are kept with those of the last [`SdkSource::entry_lines`] or
    /// [`SdkSource::entry_columns`], so that a line is read once.
    fn lines(&mut self, rows: &[i64], each: &mut dyn FnMut(usize, &[u8])) -> Result<()>;
    /// The live transcripts that have an agent id and a subpath starting with
    /// `subagents/` (as SQLite's `LIKE` matches it: ASCII letters in any case), in any
    /// order.
    fn subagents(&mut self, session: &SessionRef) -> Result<Vec<StoredSubagent>>;
}

/// An entry row's columns, which import filled from the line's top-level fields: what the
/// SDK's walk from a leaf to the root reads (its `type`, `uuid` and `parentUuid` read as
/// the SDK reads them: a string field of another type is absent in both, and a field
/// given twice is its last value in both).
pub(crate) struct EntryColumns {
    /// `rows.id`.
    pub row: i64,
    /// `type`.
    pub kind: String,
    /// `uuid`.
    pub uuid: String,
    /// `parentUuid`.
    pub parent: Option<String>,
    /// `sourceToolAssistantUUID`.
    pub source_tool: Option<String>,
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

const SELECT_ENTRY_ROWS: &str = "SELECT id, line(raw, dict) AS raw FROM rows
     WHERE transcript_id = ?1 AND status = 0
       AND type IN ('user', 'assistant', 'progress', 'system', 'attachment')
     ORDER BY ordinal";

const SELECT_ENTRY_COLUMNS: &str = "SELECT id, type, uuid, parent_uuid,
       source_tool_assistant_uuid FROM rows
     WHERE transcript_id = ?1 AND status = 0 AND uuid IS NOT NULL
       AND type IN ('user', 'assistant', 'progress', 'system', 'attachment')
     ORDER BY ordinal";

const SELECT_NON_EMPTY: &str = "SELECT EXISTS (SELECT 1 FROM rows WHERE transcript_id = ?1
       AND (length(raw) > 0 OR terminated = 1))";

const SELECT_SUBAGENTS: &str = "SELECT id, agent_id, subpath, meta_json FROM transcripts
     WHERE session_id = ?1 AND agent_id IS NOT NULL AND superseded_at IS NULL
       AND subpath LIKE 'subagents/%'";

/// The entry lines of the last transcript an [`SdkSource`] read, kept so that the messages
/// returned are cut from them instead of being read a second time (a compressed line would
/// be decoded twice; a team store's would cross the network twice).
#[derive(Default)]
pub(crate) struct KeptLines {
    /// The lines, one after another.
    bytes: Vec<u8>,
    /// Where each of them is in `bytes`, by row id.
    at: std::collections::HashMap<i64, std::ops::Range<usize>>,
}

impl KeptLines {
    /// Forgets the lines kept so far.
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.at.clear();
    }

    /// Keeps row `id`'s line.
    pub(crate) fn keep(&mut self, id: i64, line: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(line);
        self.at.insert(id, start..self.bytes.len());
    }

    /// Row `id`'s line, when kept.
    pub(crate) fn get(&self, id: i64) -> Option<&[u8]> {
        self.at.get(&id).map(|r| &self.bytes[r.clone()])
    }
}

/// The SQLite store's [`SdkSource`].
struct Sqlite<'c> {
    conn: &'c Connection,
    kept: KeptLines,
}

impl<'c> Sqlite<'c> {
    fn new(conn: &'c Connection) -> Self {
        Sqlite {
            conn,
            kept: KeptLines::default(),
        }
    }
}

impl SdkSource for Sqlite<'_> {
    fn main_transcript(&mut self, session: &SessionRef) -> Result<Option<i64>> {
        let Some(id) = self
            .conn
            .prepare_cached(SELECT_MAIN)?
            .query_row([session.key], |r| r.get::<_, i64>(0))
            .optional()?
        else {
            return Ok(None);
        };
        let non_empty: bool = self
            .conn
            .prepare_cached(SELECT_NON_EMPTY)?
            .query_row([id], |r| r.get(0))?;
        Ok(non_empty.then_some(id))
    }

    fn entry_lines(&mut self, transcript: i64, each: &mut dyn FnMut(i64, &[u8])) -> Result<()> {
        self.kept.clear();
        let mut stmt = self.conn.prepare_cached(SELECT_ENTRY_ROWS)?;
        let mut rows = stmt.query([transcript])?;
        while let Some(row) = rows.next()? {
            match row.get_ref(1)? {
                rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => {
                    let id = row.get(0)?;
                    each(id, b);
                    self.kept.keep(id, b);
                }
                _ => continue,
            }
        }
        Ok(())
    }

    fn entry_columns(&mut self, transcript: i64) -> Result<Vec<EntryColumns>> {
        self.kept.clear();
        Ok(self
            .conn
            .prepare_cached(SELECT_ENTRY_COLUMNS)?
            .query_map([transcript], |r| {
                Ok(EntryColumns {
                    row: r.get(0)?,
                    kind: r.get(1)?,
                    uuid: r.get(2)?,
                    parent: r.get(3)?,
                    source_tool: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?)
    }

    fn lines(&mut self, rows: &[i64], each: &mut dyn FnMut(usize, &[u8])) -> Result<()> {
        // The rows not kept, in one statement (a statement per row cost more than reading
        // a short line).
        let mut missing: crate::resume::util::FastMap<i64, Vec<usize>> = Default::default();
        let mut ids = String::from("[");
        for (i, row) in rows.iter().enumerate() {
            if let Some(line) = self.kept.get(*row) {
                each(i, line);
                continue;
            }
            let at = missing.entry(*row).or_default();
            if at.is_empty() {
                if ids.len() > 1 {
                    ids.push(',');
                }
                ids.push_str(&row.to_string());
            }
            at.push(i);
        }
        if missing.is_empty() {
            return Ok(());
        }
        ids.push(']');
        let mut stmt = self.conn.prepare_cached(
            "SELECT r.id, line(r.raw, r.dict) FROM json_each(?1) j
             JOIN rows r ON r.id = j.value",
        )?;
        let mut found = stmt.query([ids])?;
        while let Some(row) = found.next()? {
            let id: i64 = row.get(0)?;
            let line = match row.get_ref(1)? {
                rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => b,
                _ => continue,
            };
            for i in missing.get(&id).map_or(&[][..], Vec::as_slice) {
                each(*i, line);
            }
            self.kept.keep(id, line);
        }
        Ok(())
    }

    fn subagents(&mut self, session: &SessionRef) -> Result<Vec<StoredSubagent>> {
        Ok(self
            .conn
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

/// The entries of `transcript` with the lines read that decide the SDK's chain, the others
/// known from their columns only ([`Entry::from_columns`]): the leaf candidates, every
/// assistant record, the chain walked from the leaf chosen, and the user records that
/// name an assistant record of a response on that chain as their parent or
/// `sourceToolAssistantUUID` (see [`chain::audited_visible_chain`]). `None` when a line
/// read does not say what its columns say: the caller reads every line.
fn entries_from_columns(src: &mut impl SdkSource, transcript: i64) -> Result<Option<Vec<Entry>>> {
    let mut entries: Vec<Entry> = src
        .entry_columns(transcript)?
        .into_iter()
        .map(Entry::from_columns)
        .collect();
    let at: crate::resume::util::FastMap<i64, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.row, i))
        .collect();
    let mut read = vec![false; entries.len()];
    let index_of = |e: &Entry| at.get(&e.row).copied();
    let mut wanted: Vec<usize> = chain::leaves_of(&entries)
        .into_iter()
        .filter_map(index_of)
        .collect();
    wanted.extend((0..entries.len()).filter(|i| entries[*i].kind == "assistant"));
    if !read_lines(src, &mut entries, &mut read, wanted)? {
        return Ok(None);
    }
    let wanted: Vec<usize> = chain::walked_chain(&entries)
        .into_iter()
        .filter_map(index_of)
        .collect();
    if !read_lines(src, &mut entries, &mut read, wanted)? {
        return Ok(None);
    }
    let responses: std::collections::HashSet<&str> = chain::walked_chain(&entries)
        .into_iter()
        .filter(|e| e.kind == "assistant")
        .filter_map(|e| e.message_id.as_deref())
        .collect();
    let members: std::collections::HashSet<&str> = entries
        .iter()
        .filter(|e| {
            e.message_id
                .as_deref()
                .is_some_and(|m| responses.contains(m))
        })
        .map(|e| e.uuid.as_str())
        .collect();
    let names_member = |u: &Option<String>| u.as_deref().is_some_and(|u| members.contains(u));
    let wanted: Vec<usize> = (0..entries.len())
        .filter(|i| {
            let e = &entries[*i];
            e.kind == "user" && (names_member(&e.parent) || names_member(&e.source_tool))
        })
        .collect();
    if !read_lines(src, &mut entries, &mut read, wanted)? {
        return Ok(None);
    }
    Ok(Some(entries))
}

/// Reads the lines of `entries[i]` for each `i` of `wanted` not `read` yet, in place of
/// the entries known from columns; false when a line is not an entry with the fields its
/// columns gave.
fn read_lines(
    src: &mut impl SdkSource,
    entries: &mut [Entry],
    read: &mut [bool],
    mut wanted: Vec<usize>,
) -> Result<bool> {
    wanted.retain(|i| !read[*i]);
    wanted.sort_unstable();
    wanted.dedup();
    let rows: Vec<i64> = wanted.iter().map(|i| entries[*i].row).collect();
    let mut agree = true;
    src.lines(&rows, &mut |k, line| {
        let i = wanted[k];
        match parse_stored_entry(line) {
            Some(mut entry) if entries[i].columns_agree(&entry) => {
                entry.row = entries[i].row;
                entries[i] = entry;
                read[i] = true;
            }
            _ => agree = false,
        }
    })?;
    Ok(agree && wanted.iter().all(|i| read[*i]))
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
    crate::codec::sql::preload(conn);
    session_messages_with(&mut Sqlite::new(conn), session, limit, offset)
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
    if let Some(entries) = entries_from_columns(src, main)? {
        if let Some(chain) = chain::audited_visible_chain(&entries) {
            return messages_of(src, &page(chain, limit, offset), None, None);
        }
    }
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
    list_subagents_with(&mut Sqlite::new(conn), session)
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
    crate::codec::sql::preload(conn);
    subagent_messages_with(&mut Sqlite::new(conn), session, agent_id, limit, offset)
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
    // The sub-agent's chain reads only `type`, `uuid` and `parentUuid`: the columns give
    // it, and only the lines of the messages returned are read.
    let mut entries: Vec<Entry> = src
        .entry_columns(agent.transcript)?
        .into_iter()
        .map(Entry::from_columns)
        .collect();
    let rows: Vec<i64> = page(
        subagent_chain(&entries)
            .into_iter()
            .filter(|e| e.kind == "user" || e.kind == "assistant")
            .map(|e| e.row)
            .collect(),
        limit,
        offset,
    );
    let at: crate::resume::util::FastMap<i64, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.row, i))
        .collect();
    let wanted = rows.iter().filter_map(|r| at.get(r).copied()).collect();
    let mut read = vec![false; entries.len()];
    if !read_lines(src, &mut entries, &mut read, wanted)? {
        entries = entries_of(src, agent.transcript)?;
    }
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
mod tests;
