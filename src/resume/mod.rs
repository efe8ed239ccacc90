//! Resume: rebuild a stored conversation the way Claude Code does.
//!
//! Pure functions over transcript records (`serde_json::Value`, one JSON
//! object per JSONL line, in file order), ported from the resume oracle's
//! reference model (`oracle/tool/apiview.py`, rules R1–R24 of the oracle
//! README) for Claude Code 2.1.332:
//!
//! * [`chain`]: which records form the conversation (R1–R3, R18);
//! * [`repair`]: load-time repairs (R11, R12, R17, R19) and the interruption
//!   state;
//! * [`api`]: the API `messages` view (R4–R10, R13–R15) and the entry points
//!   [`api_view`] / [`load_conversation`];
//! * [`mod@validate`]: a checker for the Messages API's structural rules;
//! * [`gather`]: the SQL half — the leaf and the rows a chain needs, from the projected
//!   columns, so only those rows are parsed;
//! * [`history`]: file-history snapshots restorable on a chain.
//!
//! [`Store::resume`] puts them together and restores the runtime state beside the messages.

pub mod answers;
pub mod api;
pub mod attachments;
pub mod chain;
pub mod cli_version;
pub mod gather;
pub mod history;
pub mod legacy;
pub mod model;
pub mod normalize;
mod reminder_escape;
pub mod render_extra;
pub mod render_later;
pub mod render_open;
pub mod render_plan;
pub mod repair;
mod thinking_strip;
pub mod unanswered;
pub(crate) mod util;
pub mod validate;
mod walk_fallback;

pub use api::{
    api_view, load_conversation, load_conversation_owned, normalize, normalize_as, normalize_for,
    normalize_owned, ApiOptions, Conversation,
};
pub use chain::{build_chain, build_chain_from, chain_positions, pick_leaf, ChainError};
pub use cli_version::{BadCliVersion, CliVersion};
pub use model::{model_profile, resolve_model, same_model, ModelProfile, ReminderStyle};
pub use repair::{Interruption, Repair, RepairKind};
pub use validate::{validate, Violation, ViolationKind};

use crate::error::{Error, Result};
use crate::export::main_transcript;
use crate::model::SessionRef;
use crate::store::Store;
use rusqlite::{params, Connection};
use serde::Serialize;
use serde_json::{Map, Value};

/// How to resume a stored session (the options an oracle case can need).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResumeOptions {
    /// `--resume-session-at`: end the conversation at this record.
    pub at: Option<String>,
    /// Apply content-replacement records as the interactive client does.
    pub interactive: bool,
    /// `CLAUDE_CODE_RESUME_INTERRUPTED_TURN=1`: drop an unfinished last turn.
    pub continue_interrupted: bool,
    /// How the leaf is chosen when `at` is not given.
    pub leaf_rule: gather::LeafRule,
    /// `--model`: the model the resumed conversation is sent to, as given (aliases are
    /// resolved, B14). `None`: the model of the conversation's last assistant message.
    pub model: Option<String>,
    /// `--cli-version`: the Claude Code version whose rules the view follows where versions
    /// differ ([`cli_version::Rule`]); default the newest checked.
    pub cli_version: CliVersion,
}

/// Where the next writes of a resumed session go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteTarget {
    /// The session that future records are appended to.
    pub session_id: String,
    /// True when that is a new session forked from the resumed one.
    pub fork: bool,
}

/// A sidechain transcript of the session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subagent {
    /// The agent id (from the file name).
    pub agent_id: Option<String>,
    /// The path inside the session folder, without `.jsonl`.
    pub subpath: String,
    /// `agentType` from the `.meta.json` sidecar.
    pub agent_type: Option<String>,
    /// `description` from the sidecar.
    pub description: Option<String>,
    /// Lines stored for the sidechain.
    pub rows: i64,
}

/// The restored runtime state of a session: what a client needs to continue it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Resumed {
    /// The project folder name.
    pub project: String,
    /// The resumed session.
    pub session_id: String,
    /// Where future records go.
    pub write_target: WriteTarget,
    /// The record the conversation ends at.
    pub leaf_uuid: Option<String>,
    /// The model the conversation is sent to (after B14 rewrites); `None` when neither
    /// `--model` was given nor the session has an assistant message.
    pub model: Option<String>,
    /// The interruption state of the stored chain (spec §6.6).
    pub interruption: Interruption,
    /// The repaired chain as stored records; repair additions carry `"synthetic": true`.
    pub messages: Vec<Value>,
    /// Every change the repair pass made.
    pub repairs: Vec<Repair>,
    /// Last-write-wins session metadata (title, tag, agent, mode, worktree, PR link, ...).
    pub metadata: Map<String, Value>,
    /// The file-history snapshots restorable on this chain.
    pub file_history: Vec<Value>,
    /// The content-replacement records in force for the session and its agents.
    pub content_replacements: Vec<Value>,
    /// The session's sidechain transcripts.
    pub subagents: Vec<Subagent>,
    /// The CLI version the API view follows (`ResumeOptions::cli_version`); not part of
    /// the bundle.
    #[serde(skip)]
    pub cli_version: CliVersion,
}

impl Resumed {
    /// The provider-valid `messages` array for this state (the API view).
    pub fn api_view(&self) -> Vec<Value> {
        normalize_as(
            self.messages.clone(),
            self.model.as_deref(),
            self.cli_version,
        )
    }

    /// [`Resumed::api_view`] consuming the state: the messages' contents move into the
    /// view instead of being copied.
    pub fn into_api_view(self) -> Vec<Value> {
        normalize_as(self.messages, self.model.as_deref(), self.cli_version)
    }
}

/// One content replacement as stored: (kind, toolUseId, replacement, agentId).
pub(crate) type StoredReplacement = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// One sidechain transcript as stored: (agent id, subpath, sidecar bytes, line count).
pub(crate) type StoredSubagent = (Option<String>, String, Option<Vec<u8>>, i64);

/// The reads resume needs, once per backend; [`resume_with`] puts them together with the
/// shared pure functions (chain, repair, metadata and file-history rules).
pub(crate) trait ResumeSource {
    /// The live main transcript of a session.
    fn main_transcript(&mut self, session: &SessionRef) -> Result<Option<i64>>;
    /// Whether a chain row with this uuid exists in the transcript (for `--at`).
    fn has_entry(&mut self, transcript: i64, uuid: &str) -> Result<bool>;
    /// The leaf by `rule` (see [`gather::LeafRule`]).
    fn pick_leaf_by(&mut self, transcript: i64, rule: gather::LeafRule) -> Result<Option<String>>;
    /// The parsed rows a chain ending at `leaf` needs, in file order (see [`gather::gather`]).
    fn gather(
        &mut self,
        transcript: i64,
        leaf: &str,
        with_replacements: bool,
    ) -> Result<Vec<Value>>;
    /// The last metadata entry of each kind but `summary`, among entries of `session_id`
    /// or without one: (kind, value).
    fn last_metadata(
        &mut self,
        transcript: i64,
        session_id: &str,
    ) -> Result<Vec<(String, Option<String>)>>;
    /// The value of the last `summary` entry whose `leafUuid` is `leaf`.
    fn summary_at(&mut self, transcript: i64, leaf: &str) -> Result<Option<String>>;
    /// The file-history records of the transcript, parsed, in file order.
    fn file_history_records(&mut self, transcript: i64) -> Result<Vec<Value>>;
    /// The content replacements of the session (keyed by `session_id` or by none) and of
    /// its agents, in stored order.
    fn replacements(&mut self, session: i64, session_id: &str) -> Result<Vec<StoredReplacement>>;
    /// The live sidechain transcripts of the session, by subpath.
    fn subagents(&mut self, session: i64) -> Result<Vec<StoredSubagent>>;
}

/// The SQLite store's [`ResumeSource`], building each gathered record as far as the second
/// field says.
struct Sqlite<'c>(&'c Connection, gather::Records);

impl ResumeSource for Sqlite<'_> {
    fn main_transcript(&mut self, session: &SessionRef) -> Result<Option<i64>> {
        main_transcript(self.0, session)
    }

    fn has_entry(&mut self, transcript: i64, uuid: &str) -> Result<bool> {
        gather::has_entry(self.0, transcript, uuid)
    }

    fn pick_leaf_by(&mut self, transcript: i64, rule: gather::LeafRule) -> Result<Option<String>> {
        gather::pick_leaf_by(self.0, transcript, rule)
    }

    fn gather(
        &mut self,
        transcript: i64,
        leaf: &str,
        with_replacements: bool,
    ) -> Result<Vec<Value>> {
        gather::gather(self.0, transcript, leaf, with_replacements, self.1)
    }

    fn last_metadata(
        &mut self,
        transcript: i64,
        session_id: &str,
    ) -> Result<Vec<(String, Option<String>)>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT m.kind, m.value FROM metadata m
             WHERE m.transcript_id = ?1 AND m.kind <> 'summary'
               AND (m.entry_session_id = ?2 OR m.entry_session_id IS NULL)
               AND m.row_id = (SELECT max(x.row_id) FROM metadata x WHERE x.transcript_id = ?1
                               AND x.kind = m.kind AND (x.entry_session_id = ?2 OR x.entry_session_id IS NULL))",
        )?;
        let rows = stmt.query_map(params![transcript, session_id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn summary_at(&mut self, transcript: i64, leaf: &str) -> Result<Option<String>> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT value FROM metadata WHERE transcript_id = ?1 AND kind = 'summary' AND leaf_uuid = ?2
                 ORDER BY row_id DESC LIMIT 1",
            )?
            .query_row(params![transcript, leaf], |r| r.get(0))
            .ok()
            .flatten())
    }

    fn file_history_records(&mut self, transcript: i64) -> Result<Vec<Value>> {
        file_history_records(self.0, transcript)
    }

    fn replacements(&mut self, session: i64, session_id: &str) -> Result<Vec<StoredReplacement>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT c.kind, c.tool_use_id, c.replacement, c.agent_id FROM content_replacements c
             JOIN transcripts t ON t.id = c.transcript_id
             WHERE t.session_id = ?1 AND t.superseded_at IS NULL
               AND (c.agent_id IS NOT NULL OR c.entry_session_id = ?2 OR c.entry_session_id IS NULL)
             ORDER BY c.id",
        )?;
        let rows = stmt.query_map(params![session, session_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn subagents(&mut self, session: i64) -> Result<Vec<StoredSubagent>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT t.agent_id, t.subpath, t.meta_json, (SELECT count(*) FROM rows r WHERE r.transcript_id = t.id)
             FROM transcripts t WHERE t.session_id = ?1 AND t.subpath <> '' AND t.superseded_at IS NULL
             ORDER BY t.subpath",
        )?;
        let rows = stmt.query_map([session], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl Store {
    /// Resumes a stored session: SQL chooses the leaf and gathers the rows on its chain,
    /// pure functions build the chain and repair it, and the metadata, file history,
    /// content replacements and subagents are restored beside it.
    ///
    /// # Errors
    /// Fails when `--at` names no record of the session, or on a database error.
    pub fn resume(&self, session: &SessionRef, options: &ResumeOptions) -> Result<Resumed> {
        let conn = self.reader()?;
        crate::codec::sql::preload(&conn);
        resume_with(&mut Sqlite(&conn, gather::Records::Full), session, options)
    }

    /// [`Resumed::into_api_view`] of [`Store::resume`], with only what the view reads:
    /// the conversation and the model. The records are gathered lighter (each
    /// `toolUseResult` is a stand-in, see [`gather::Records::ApiView`]), and the runtime
    /// state beside them (metadata, file history, content replacements, sub-agents: five
    /// more queries, each compiled for this one use) is not read.
    ///
    /// # Errors
    /// As [`Store::resume`].
    pub fn resume_api_view(
        &self,
        session: &SessionRef,
        options: &ResumeOptions,
    ) -> Result<Vec<Value>> {
        let conn = self.reader()?;
        crate::codec::sql::preload(&conn);
        api_view_with(
            &mut Sqlite(&conn, gather::Records::ApiView),
            session,
            options,
        )
    }

    /// The session `--continue` picks in a project: the main transcript whose source file
    /// was modified last (as the CLI does), skipping sessions that hold only sidechains.
    ///
    /// # Errors
    /// [`Error::SessionNotFound`] when the project has no resumable session.
    pub fn continue_target(&self, project: &str) -> Result<SessionRef> {
        let conn = self.reader()?;
        let found = conn
            .prepare_cached(
                "SELECT s.id, p.key, s.session_id FROM sessions s
                 JOIN projects p ON p.id = s.project_id
                 JOIN transcripts t ON t.session_id = s.id AND t.subpath = '' AND t.superseded_at IS NULL
                 LEFT JOIN source_files f ON f.transcript_id = t.id
                 WHERE p.key = ?1
                   AND EXISTS (SELECT 1 FROM rows r WHERE r.transcript_id = t.id AND r.is_sidechain = 0
                               AND r.type IN ('user', 'assistant', 'attachment', 'system'))
                 ORDER BY f.mtime_ns DESC NULLS LAST, s.id DESC LIMIT 1",
            )?
            .query_row([project], |r| {
                Ok(SessionRef {
                    key: r.get(0)?,
                    project: r.get(1)?,
                    session_id: r.get(2)?,
                })
            });
        match found {
            Ok(s) => Ok(s),
            Err(rusqlite::Error::QueryReturnedNoRows) => Err(Error::SessionNotFound(format!(
                "no resumable session in project {project}"
            ))),
            Err(e) => Err(e.into()),
        }
    }
}

/// What a resume loads before the runtime state: the main transcript, the repaired
/// conversation and the model it is sent to.
struct Loaded {
    transcript: Option<i64>,
    conversation: Conversation,
    model: Option<String>,
}

/// Loads the conversation of a session from what `src` reads (see [`Loaded`]).
fn load_with(
    src: &mut impl ResumeSource,
    session: &SessionRef,
    options: &ResumeOptions,
) -> Result<Loaded> {
    let transcript = src.main_transcript(session)?;
    let (leaf, records) = match transcript {
        None => (None, Vec::new()),
        Some(t) => {
            let leaf = match options.at.as_deref() {
                Some(at) => {
                    if !src.has_entry(t, at)? {
                        return Err(Error::NotFound(format!(
                            "record {at} is not a message of session {}",
                            session.session_id
                        )));
                    }
                    Some(at.to_owned())
                }
                None => src.pick_leaf_by(t, options.leaf_rule)?,
            };
            match leaf {
                Some(l) => {
                    let records = src.gather(t, &l, options.interactive)?;
                    (Some(l), records)
                }
                None => (None, Vec::new()),
            }
        }
    };
    let api = ApiOptions {
        interactive: options.interactive,
        at: options.at.clone(),
        resume_interrupted_turn: options.continue_interrupted,
        leaf: if options.at.is_some() { None } else { leaf },
        model: None, // only the send-time half reads it
        cli_version: options.cli_version,
    };
    let conversation =
        load_conversation_owned(records, &api).map_err(|e| Error::NotFound(e.to_string()))?;
    if refusal(&conversation.messages, &session.session_id).is_some() {
        return Err(Error::NoConversation(session.session_id.clone()));
    }
    // Without --model: the model of the conversation's last assistant message, so a
    // fork (which holds only the conversation) resumes with the same model.
    let model = options
        .model
        .as_deref()
        .or_else(|| model::last_assistant_model(&conversation.messages))
        .map(model::resolve_model);
    Ok(Loaded {
        transcript,
        conversation,
        model,
    })
}

/// [`Resumed::into_api_view`] of [`resume_with`], reading only what the view needs: the
/// conversation and the model, not the runtime state beside them (metadata, file history,
/// content replacements, sub-agents).
///
/// # Errors
/// As [`resume_with`].
pub(crate) fn api_view_with(
    src: &mut impl ResumeSource,
    session: &SessionRef,
    options: &ResumeOptions,
) -> Result<Vec<Value>> {
    let loaded = load_with(src, session, options)?;
    Ok(normalize_as(
        loaded.conversation.messages,
        loaded.model.as_deref(),
        options.cli_version,
    ))
}

/// Resumes a session from what `src` reads: the one composition of resume, for every
/// backend.
pub(crate) fn resume_with(
    src: &mut impl ResumeSource,
    session: &SessionRef,
    options: &ResumeOptions,
) -> Result<Resumed> {
    let Loaded {
        transcript,
        conversation,
        model,
    } = load_with(src, session, options)?;
    // Metadata is keyed by the session id the records carry (spec §5.8).
    let keyed_by = conversation
        .messages
        .iter()
        .rev()
        .find_map(|m| m.get("sessionId").and_then(Value::as_str))
        .unwrap_or(&session.session_id)
        .to_owned();
    let (metadata, file_history) = match transcript {
        Some(t) => (
            restore_metadata(src, t, &keyed_by, conversation.leaf.as_deref())?,
            history::restore(&conversation.messages, &src.file_history_records(t)?),
        ),
        None => (Map::new(), Vec::new()),
    };
    Ok(Resumed {
        project: session.project.clone(),
        session_id: session.session_id.clone(),
        write_target: WriteTarget {
            session_id: session.session_id.clone(),
            fork: false,
        },
        leaf_uuid: conversation.leaf,
        model,
        interruption: conversation.interruption,
        messages: conversation.messages,
        repairs: conversation.repairs,
        metadata,
        file_history,
        content_replacements: content_replacements(src, session.key, &keyed_by)?,
        subagents: subagents(src, session.key)?,
        cli_version: options.cli_version,
    })
}

/// B9: the message CLI 2.1.332 refuses a resume with when the loaded chain holds no user
/// or assistant record (a file of only `summary` or `file-history-snapshot` lines, or a
/// lone attachment): `No conversation found with session ID: <id>`, exit 1, no request
/// sent (`episodic__medium-conversation__own`, `happy__goal-status-completed__own`,
/// `swordintel__4734107e-ab8b-4034-bb65-423eaf94d5ba__own`). `None` when there is a
/// conversation to resume.
pub fn refusal(messages: &[Value], session_id: &str) -> Option<String> {
    let conversation = messages
        .iter()
        .any(|m| matches!(util::rec_type(m), Some("user" | "assistant")));
    (!conversation).then(|| format!("No conversation found with session ID: {session_id}"))
}

/// Metadata kinds restored on resume and the names they get in the bundle.
const METADATA_NAMES: &[(&str, &str)] = &[
    ("custom-title", "custom_title"),
    ("ai-title", "ai_title"),
    ("tag", "tag"),
    ("agent-name", "agent_name"),
    ("agent-color", "agent_color"),
    ("agent-setting", "agent_setting"),
    ("mode", "mode"),
    ("permission-mode", "permission_mode"),
    ("worktree-state", "worktree_state"),
    ("pr-link", "pr_link"),
    ("last-prompt", "last_prompt"),
    ("cost-state", "cost_state"),
];

/// Last write wins per kind, for entries of `session_id` (or without one).
fn restore_metadata(
    src: &mut impl ResumeSource,
    transcript: i64,
    session_id: &str,
    leaf: Option<&str>,
) -> Result<Map<String, Value>> {
    let mut out = Map::new();
    for (kind, value) in src.last_metadata(transcript, session_id)? {
        let Some(name) = METADATA_NAMES
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, n)| *n)
        else {
            continue;
        };
        let value = match (kind.as_str(), value) {
            // An empty tag is how a tag is cleared.
            ("tag", Some(v)) if v.is_empty() => Value::Null,
            ("worktree-state" | "pr-link" | "cost-state" | "agent-setting", Some(v)) => {
                serde_json::from_str(&v).unwrap_or(Value::String(v))
            }
            (_, Some(v)) => Value::String(v),
            (_, None) => Value::Null,
        };
        out.insert(name.to_owned(), value);
    }
    if let Some(leaf) = leaf {
        if let Some(summary) = src.summary_at(transcript, leaf)? {
            out.insert("summary".to_owned(), Value::String(summary));
        }
    }
    Ok(out)
}

fn file_history_records(conn: &Connection, transcript: i64) -> Result<Vec<Value>> {
    let mut stmt = conn.prepare_cached(
        "SELECT line(r.raw, r.dict) AS raw, r.id, r.checksum FROM file_history f JOIN rows r ON r.id = f.row_id
         WHERE f.transcript_id = ?1 ORDER BY r.ordinal",
    )?;
    let mut rows = stmt.query([transcript])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let raw = row.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?;
        crate::integrity::check_row(conn, row.get(1)?, raw, row.get(2)?)?;
        out.extend(crate::jsonl::parse_record(raw));
    }
    Ok(out)
}

/// The replacement records of the session (main thread, keyed by session id) and of its
/// agents (keyed by agent id, from their own files).
fn content_replacements(
    src: &mut impl ResumeSource,
    session: i64,
    session_id: &str,
) -> Result<Vec<Value>> {
    let stored = src.replacements(session, session_id)?;
    Ok(stored
        .into_iter()
        .map(|(kind, id, replacement, agent)| {
            let mut record = Map::new();
            record.insert("kind".into(), kind.map_or(Value::Null, Value::String));
            record.insert("toolUseId".into(), id.map_or(Value::Null, Value::String));
            record.insert(
                "replacement".into(),
                replacement.map_or(Value::Null, Value::String),
            );
            if let Some(agent) = agent {
                record.insert("agentId".into(), Value::String(agent));
            }
            Value::Object(record)
        })
        .collect())
}

fn subagents(src: &mut impl ResumeSource, session: i64) -> Result<Vec<Subagent>> {
    Ok(src
        .subagents(session)?
        .into_iter()
        .map(|(agent_id, subpath, meta, rows)| {
            let meta: Value = meta
                .and_then(|m| serde_json::from_slice(&m).ok())
                .unwrap_or(Value::Null);
            let field = |k: &str| meta.get(k).and_then(Value::as_str).map(str::to_owned);
            Subagent {
                agent_id,
                subpath,
                agent_type: field("agentType"),
                description: field("description"),
                rows,
            }
        })
        .collect())
}
