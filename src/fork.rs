//! Fork: a stored conversation re-recorded as a new session, the way Claude Code's
//! `--fork-session` writes its new file (spec §7.2 steps 3–4, §7.6, oracle rule R22).
//!
//! What the real CLI (2.1.332) wrote for the oracle's fork cases, field by field, and what
//! sessiondb does:
//!
//! * the chain messages of the resumed conversation, in order, with the **same uuids** and
//!   timestamps; `sessionId` becomes the new id; `parentUuid` is recomputed sequentially
//!   (`insertMessageChain` with an empty dedup set), `sourceToolAssistantUUID` parents are
//!   kept, compact boundaries get `parentUuid: null` and keep their `logicalParentUuid`;
//! * an assistant written under another session id gains `requestSessionId` (its original
//!   session) as its last key, unless it already has one;
//! * `slug` is dropped (the fork has no plan); `cwd`, `version`, `gitBranch`, `userType`,
//!   `entrypoint` are re-stamped by the CLI with its current values, which for a fork made
//!   by sessiondb are the recorded ones, so they are kept; `promptId` is re-stamped by the
//!   CLI with the prompt that triggered the write, and sessiondb, which has no prompt, keeps
//!   the recorded one;
//! * before the messages, as at materialisation (§4.2): the session metadata re-appended
//!   (`custom-title` — or `--title` —, `agent-name`, `agent-color`, `agent-setting`,
//!   `mode`, `pr-link` with a fresh timestamp; never `worktree-state`, and never `tag`,
//!   where the CLI re-appends the source's: a fork is a new line of work, and a tag such as
//!   `review` or `done` copied to it would mislabel it), each the source's
//!   last record of its kind re-keyed to the new id; then one `content-replacement` record
//!   with the source's main-thread replacements re-keyed to the new id (§8.3: records are
//!   looked up by the leaf's session id); then the restorable file-history snapshots,
//!   re-recorded as `isSnapshotUpdate: false` (§10.3);
//! * repair additions (synthetic tool results, the sentinel) are not written: they are
//!   re-derived on every resume, as for the source; sub-agent transcripts and tool-result
//!   files are not copied (R22).
//!
//! The origin is kept beside the lines, in the `forks` table (Claude Code's fork writes no
//! origin into the file; `/branch` and the SDK's `fork_session` write `forkedFrom`, but they
//! also mint new uuids, which `--fork-session` does not).

use crate::catalog;
use crate::error::{Error, Result};
use crate::export::main_transcript;
use crate::model::SessionRef;
use crate::record::write::LineTx;
use crate::record::{self, Stamp};
use crate::resume::{ResumeOptions, Resumed};
use crate::store::Store;
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use serde_json::{json, Map, Value};

/// How to fork.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForkOptions {
    /// End the forked conversation at this message (the SDK's `up_to_message_id`).
    pub up_to: Option<String>,
    /// Give the fork this custom title instead of the inherited one (trimmed).
    pub title: Option<String>,
    /// Use this session id instead of a fresh uuid (`--session-id`); it must be unused in
    /// the project.
    pub session_id: Option<String>,
}

/// What a fork wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Forked {
    /// The new session.
    pub session_id: String,
    /// Its project folder (the source's).
    pub project: String,
    /// The session forked.
    pub source_session_id: String,
    /// The source message the fork's conversation ends at.
    pub leaf_uuid: Option<String>,
    /// Chain messages written.
    pub messages: usize,
    /// Lines written in all (metadata, replacements, snapshots, messages).
    pub lines: usize,
    /// The new session, for further calls (append, resume, export).
    #[serde(skip)]
    pub session: SessionRef,
}

/// Metadata kinds re-appended when the fork's file materialises, in `reAppendSessionMetadata`
/// order (§4.8), without `last-prompt` (not restored on resume), `worktree-state` (never
/// inherited by a fork) and `tag` (see the module's docs: the CLI copies it, sessiondb does
/// not).
const REAPPENDED: &[&str] = &[
    "custom-title",
    "agent-name",
    "agent-color",
    "agent-setting",
    "mode",
    "pr-link",
];

/// What a fork reads and writes, once per backend; [`fork_with`] holds the rules.
pub(crate) trait ForkBackend {
    /// Resumes a stored session (see [`Store::resume`]).
    fn resume(&self, session: &SessionRef, options: &ResumeOptions) -> Result<Resumed>;
    /// The stored line of the source main transcript's last metadata record of each of
    /// `kinds`, among the records keyed by `keyed_by` or by no session; `None` where there
    /// is none (or no main transcript).
    fn last_metadata(
        &self,
        source: &SessionRef,
        kinds: &[&str],
        keyed_by: &str,
    ) -> Result<Vec<Option<Vec<u8>>>>;
    /// The stored line of each of `uuids` in the source's main transcript: the last
    /// well-formed line with that uuid; `None` where there is none.
    fn stored_lines(&self, source: &SessionRef, uuids: &[&str]) -> Result<Vec<Option<Vec<u8>>>>;
    /// Stores the new session in the source's project, its lines and its origin, and its
    /// catalog row, in one transaction; returns the new session's key.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the session id is already used in the project.
    fn write_fork(&self, source: &SessionRef, fork: &NewFork<'_>) -> Result<i64>;
}

/// A fork ready to be stored.
pub(crate) struct NewFork<'a> {
    /// The new session id.
    pub session_id: &'a str,
    /// Its lines, as written.
    pub lines: &'a [Vec<u8>],
    /// The `--up-to` record asked for.
    pub up_to: Option<&'a str>,
    /// The source message the fork ends at.
    pub leaf_uuid: Option<&'a str>,
    /// When the fork is made, epoch ms.
    pub created_at: i64,
}

/// The source's last record of each re-appended kind (`stored`, in [`REAPPENDED`] order
/// without `custom-title` when `title` is given), re-keyed to `new_id`, skipping empty
/// values (an empty title or tag clears it).
fn inherited_metadata(
    stored: &[(&str, Option<Vec<u8>>)],
    new_id: &str,
    title: Option<&str>,
) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(title) = title {
        out.push(json!({"type": "custom-title", "customTitle": title, "sessionId": new_id}));
    }
    for (kind, raw) in stored {
        let Some(Value::Object(mut record)) = raw.as_deref().and_then(crate::jsonl::parse_record)
        else {
            continue;
        };
        let field = match *kind {
            "custom-title" => Some("customTitle"),
            "tag" => Some("tag"),
            "agent-name" => Some("agentName"),
            "agent-color" => Some("agentColor"),
            "agent-setting" => Some("agentSetting"),
            "mode" => Some("mode"),
            _ => None,
        };
        let empty = |v: Option<&Value>| match v {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            _ => false,
        };
        if let Some(field) = field {
            if empty(record.get(field)) {
                continue;
            }
        } else if ["prNumber", "prUrl", "prRepository"]
            .iter()
            .any(|k| empty(record.get(*k)))
        {
            continue;
        }
        record.insert("sessionId".into(), Value::String(new_id.to_owned()));
        if *kind == "pr-link" {
            record.insert(
                "timestamp".into(),
                Value::String(crate::time::format_ms(crate::time::now_ms())),
            );
        }
        out.push(Value::Object(record));
    }
    out
}

/// A message of the fork written on the bytes of the source line it comes from (`stored`,
/// the one with its uuid): only the fields fork changed are serialized, so what the
/// in-memory view cannot hold as written (a lone surrogate escape, deep nesting, a number's
/// spelling) reaches the fork byte for byte (see [`crate::jsonl::patch`]).
fn on_stored_bytes(stored: Option<&[u8]>, line: &Value) -> Result<Vec<u8>> {
    let (Some(record), Some(raw)) = (line.as_object(), stored) else {
        return Ok(serde_json::to_vec(line)?);
    };
    match crate::jsonl::patch::patch_object(raw, record) {
        Some(bytes) => Ok(bytes),
        None => Ok(serde_json::to_vec(line)?),
    }
}

/// Forks a stored session on either backend (see [`Store::fork`]).
pub(crate) fn fork_with(
    store: &impl ForkBackend,
    source: &SessionRef,
    options: &ForkOptions,
) -> Result<Forked> {
    let title = match options.title.as_deref().map(str::trim) {
        Some("") => return Err(Error::Invalid("title must be non-empty".into())),
        other => other,
    };
    let new_id = match &options.session_id {
        Some(id) => {
            crate::names::check_uuid(id)?;
            id.clone()
        }
        None => uuid::Uuid::new_v4().to_string(),
    };
    let resumed = store.resume(source, &ResumeOptions::default())?;
    let on_chain = match options.up_to.as_deref() {
        None => true,
        Some(u) => resumed
            .messages
            .iter()
            .any(|m| m.get("uuid").and_then(Value::as_str) == Some(u)),
    };
    // A message of the resumed conversation: cut after it (the SDK's up_to_message_id).
    // Any other message (a dead branch): the conversation that ends at it.
    let resumed = if on_chain {
        resumed
    } else {
        store.resume(
            source,
            &ResumeOptions {
                at: options.up_to.clone(),
                ..ResumeOptions::default()
            },
        )?
    };
    let mut messages: Vec<&Value> = resumed
        .messages
        .iter()
        .filter(|m| m.get("synthetic") != Some(&Value::Bool(true)))
        .filter(|m| m.get("type").and_then(Value::as_str) != Some("progress"))
        .collect();
    if let Some(up_to) = options.up_to.as_deref() {
        if let Some(i) = messages
            .iter()
            .position(|m| m.get("uuid").and_then(Value::as_str) == Some(up_to))
        {
            messages.truncate(i + 1);
        }
    }
    let leaf_uuid = messages
        .last()
        .and_then(|m| m.get("uuid").and_then(Value::as_str))
        .map(str::to_owned);
    if messages.is_empty() {
        return Err(Error::NotFound(format!(
            "session {} has no conversation to fork",
            source.session_id
        )));
    }
    let keyed_by = messages
        .iter()
        .rev()
        .find_map(|m| m.get("sessionId").and_then(Value::as_str))
        .unwrap_or(&source.session_id)
        .to_owned();
    let kinds: Vec<&str> = REAPPENDED
        .iter()
        .copied()
        .filter(|k| title.is_none() || *k != "custom-title")
        .collect();
    let stored_metadata = store.last_metadata(source, &kinds, &keyed_by)?;
    let stored_metadata: Vec<(&str, Option<Vec<u8>>)> =
        kinds.iter().copied().zip(stored_metadata).collect();
    let mut lines = inherited_metadata(&stored_metadata, &new_id, title);
    let replacements: Vec<Value> = resumed
        .content_replacements
        .iter()
        .filter(|r| r.get("agentId").is_none())
        .cloned()
        .collect();
    if !replacements.is_empty() {
        lines.push(json!({
            "type": "content-replacement",
            "sessionId": new_id,
            "replacements": replacements,
        }));
    }
    let kept: std::collections::HashSet<&str> = messages
        .iter()
        .filter_map(|m| m.get("uuid").and_then(Value::as_str))
        .collect();
    for snapshot in &resumed.file_history {
        let Some(message_id) = snapshot.get("messageId").cloned() else {
            continue;
        };
        if !message_id.as_str().is_some_and(|id| kept.contains(id)) {
            continue;
        }
        lines.push(json!({
            "type": "file-history-snapshot",
            "messageId": message_id,
            "snapshot": snapshot,
            "isSnapshotUpdate": false,
        }));
    }
    let stamp = Stamp {
        session_id: new_id.clone(),
        defaults: Map::new(),
        fork: true,
    };
    let chain: Vec<Value> = messages.into_iter().cloned().collect();
    for (i, entry) in chain.iter().enumerate() {
        record::check_entry(entry).map_err(|m| {
            Error::Invalid(format!(
                "message {} of session {} cannot be re-recorded: {m}",
                i + 1,
                source.session_id
            ))
        })?;
    }
    let planned = record::plan(&chain, &stamp, |_| Ok(false), || Ok(None))?;
    let written_messages = planned.messages as usize;
    let mut bytes: Vec<Vec<u8>> = lines
        .iter()
        .map(serde_json::to_vec)
        .collect::<serde_json::Result<_>>()?;
    let uuids: Vec<&str> = planned
        .lines
        .iter()
        .filter_map(|l| l.get("uuid").and_then(Value::as_str))
        .collect();
    let mut stored = store.stored_lines(source, &uuids)?.into_iter();
    for line in &planned.lines {
        let raw = match line.get("uuid").and_then(Value::as_str) {
            Some(_) => stored.next().flatten(),
            None => None,
        };
        bytes.push(on_stored_bytes(raw.as_deref(), line)?);
    }
    lines.extend(planned.lines);
    let key = store.write_fork(
        source,
        &NewFork {
            session_id: &new_id,
            lines: &bytes,
            up_to: options.up_to.as_deref(),
            leaf_uuid: leaf_uuid.as_deref(),
            created_at: crate::time::now_ms(),
        },
    )?;
    Ok(Forked {
        session_id: new_id.clone(),
        project: source.project.clone(),
        source_session_id: source.session_id.clone(),
        leaf_uuid,
        messages: written_messages,
        lines: lines.len(),
        session: SessionRef {
            key,
            project: source.project.clone(),
            session_id: new_id,
        },
    })
}

const LAST_METADATA: &str =
    "SELECT line(r.raw, r.dict) AS raw, r.id, r.checksum FROM metadata m JOIN rows r ON r.id = m.row_id
     WHERE m.transcript_id = ?1 AND m.kind = ?2
       AND (m.entry_session_id = ?3 OR m.entry_session_id IS NULL)
     ORDER BY m.row_id DESC LIMIT 1";

const STORED_LINE: &str =
    "SELECT id, line(raw, dict) AS raw, checksum FROM rows WHERE transcript_id = ?1 AND uuid = ?2
       AND status = 0
     ORDER BY ordinal DESC LIMIT 1";

/// The SQLite store's reads and write; each stored line read is checked against its
/// checksum.
impl ForkBackend for Store {
    fn resume(&self, session: &SessionRef, options: &ResumeOptions) -> Result<Resumed> {
        Store::resume(self, session, options)
    }

    fn last_metadata(
        &self,
        source: &SessionRef,
        kinds: &[&str],
        keyed_by: &str,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let conn = self.reader()?;
        let Some(transcript) = main_transcript(&conn, source)? else {
            return Ok(vec![None; kinds.len()]);
        };
        let mut stmt = conn.prepare_cached(LAST_METADATA)?;
        let mut out = Vec::with_capacity(kinds.len());
        for kind in kinds {
            let stored: Option<(Vec<u8>, i64, Option<i64>)> = stmt
                .query_row(params![transcript, kind, keyed_by], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .optional()?;
            if let Some((raw, id, checksum)) = &stored {
                crate::integrity::check_row(&conn, *id, raw, *checksum)?;
            }
            out.push(stored.map(|(raw, _, _)| raw));
        }
        Ok(out)
    }

    fn stored_lines(&self, source: &SessionRef, uuids: &[&str]) -> Result<Vec<Option<Vec<u8>>>> {
        let conn = self.reader()?;
        let Some(transcript) = main_transcript(&conn, source)? else {
            return Ok(vec![None; uuids.len()]);
        };
        let mut stmt = conn.prepare_cached(STORED_LINE)?;
        let mut out = Vec::with_capacity(uuids.len());
        for uuid in uuids {
            let stored: Option<(i64, Vec<u8>, Option<i64>)> = stmt
                .query_row(params![transcript, uuid], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .optional()?;
            if let Some((id, raw, checksum)) = &stored {
                crate::integrity::check_row(&conn, *id, raw, *checksum)?;
            }
            out.push(stored.map(|(_, raw, _)| raw));
        }
        Ok(out)
    }

    fn write_fork(&self, source: &SessionRef, fork: &NewFork<'_>) -> Result<i64> {
        self.write(|tx| {
            let project: i64 = tx
                .prepare_cached("SELECT project_id FROM sessions WHERE id = ?1")?
                .query_row([source.key], |r| r.get(0))?;
            let inserted = tx
                .prepare_cached(
                    "INSERT INTO sessions (project_id, session_id) VALUES (?1, ?2)
                     ON CONFLICT (project_id, session_id) DO NOTHING",
                )?
                .execute(params![project, fork.session_id])?;
            if inserted == 0 {
                return Err(used_id(fork.session_id, source));
            }
            let key = tx.last_insert_rowid();
            let mut lines = record::SqliteLines(tx);
            let transcript = lines.create_main_transcript(key)?;
            record::write::write_line_bytes(&mut lines, transcript, fork.session_id, fork.lines)?;
            tx.prepare_cached(
                "INSERT INTO forks (session_key, source_session_key, source_project,
                    source_session_id, up_to_uuid, leaf_uuid, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                key,
                source.key,
                source.project,
                source.session_id,
                fork.up_to,
                fork.leaf_uuid,
                fork.created_at
            ])?;
            catalog::touch_session(tx, key, fork.created_at)?;
            Ok(key)
        })
    }
}

/// The error for a `--session-id` already used in the source's project.
pub(crate) fn used_id(session_id: &str, source: &SessionRef) -> Error {
    Error::Invalid(format!(
        "session id {session_id} is already used in project {}",
        source.project
    ))
}

impl Store {
    /// Forks a stored session: a new session in the same project holding the resumed
    /// conversation (up to [`ForkOptions::up_to`]) re-recorded under a fresh id, as Claude
    /// Code's `--fork-session` writes it (see the [module docs](crate::fork)). The origin is
    /// recorded in the `forks` table. One IMMEDIATE transaction.
    ///
    /// # Errors
    /// [`Error::NotFound`] when `up_to` is not a message of the session or the session has
    /// no conversation; [`Error::Invalid`] for an empty title or a session id already used
    /// in the project; [`Error::BadName`] for a session id that is not a UUID (nothing is
    /// written); database errors.
    pub fn fork(&self, source: &SessionRef, options: &ForkOptions) -> Result<Forked> {
        fork_with(self, source, options)
    }
}

/// Where a session forked by sessiondb came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForkOrigin {
    /// The source's project folder.
    pub project: String,
    /// The source session id.
    pub session_id: String,
    /// The `--up-to` record, if any.
    pub up_to: Option<String>,
    /// The source message the fork ends at.
    pub leaf_uuid: Option<String>,
    /// When the fork was made, epoch ms.
    pub created_at: i64,
}

/// The origin of a session made by [`Store::fork`], or `None`.
///
/// # Errors
/// Database errors.
pub fn fork_origin(conn: &Connection, session: &SessionRef) -> Result<Option<ForkOrigin>> {
    Ok(conn
        .prepare_cached(
            "SELECT source_project, source_session_id, up_to_uuid, leaf_uuid, created_at
             FROM forks WHERE session_key = ?1",
        )?
        .query_row([session.key], |r| {
            Ok(ForkOrigin {
                project: r.get(0)?,
                session_id: r.get(1)?,
                up_to: r.get(2)?,
                leaf_uuid: r.get(3)?,
                created_at: r.get(4)?,
            })
        })
        .optional()?)
}
