//! The session catalog: one row per session with what a listing shows (titles, first
//! prompt, branch, times, size, counts), kept current by every write.
//!
//! [`refresh_session`] recomputes a session's row from its stored rows and side tables. The
//! importer calls it at the end of each file's transaction, and so does every other write
//! (rename, tag, the record API), so listings never scan transcripts.
//!
//! The fields follow the Agent SDK's `SDKSessionInfo` rules (spec §9.5), read from the whole
//! session as JSON instead of two 64 KiB windows of text:
//!
//! * `custom_title`: the last non-empty `custom-title` record, else the last `ai-title`;
//! * `summary`: `custom_title`, else the last `last-prompt`, else the last `summary` record
//!   whose `leafUuid` is a message of this transcript, else `first_prompt`;
//! * `first_prompt`: the first meaningful user prompt (`first_prompt`);
//! * `git_branch`: the last top-level `gitBranch`; `cwd`: the first top-level `cwd`;
//! * `tag`: the last `tag` record (`""` clears it);
//! * `created_at`: the first top-level `timestamp`;
//! * `last_modified`: the source file's mtime (or sessiondb's last write, if later);
//!   `file_size`: the bytes of the main transcript.

use crate::error::Result;
use crate::time::parse_iso8601_ms;
use serde_json::Value;

mod sqlite;
pub use sqlite::{
    backfill, rebuild_session, refresh_session, refresh_transcript, stale_columns, touch_session,
};

/// What the catalog holds for one session, before it is written.
#[derive(Debug, Default)]
pub(crate) struct Entry {
    pub(crate) listed: bool,
    pub(crate) summary: Option<String>,
    pub(crate) custom_title: Option<String>,
    pub(crate) user_title: Option<String>,
    pub(crate) ai_title: Option<String>,
    pub(crate) last_prompt: Option<String>,
    pub(crate) summary_record: Option<String>,
    pub(crate) first_prompt: Option<String>,
    pub(crate) git_branch: Option<String>,
    pub(crate) cwd: Option<String>,
    pub(crate) tag: Option<String>,
    pub(crate) created_at: Option<i64>,
    pub(crate) first_timestamp: Option<String>,
    pub(crate) last_timestamp: Option<String>,
    pub(crate) file_size: i64,
    pub(crate) message_count: i64,
    pub(crate) source_state: &'static str,
    pub(crate) mtime_ms: i64,
    pub(crate) main_transcript: Option<i64>,
    pub(crate) scanned_ordinal: i64,
    pub(crate) base_size: i64,
    pub(crate) base_messages: i64,
    pub(crate) first_line_sidechain: bool,
    pub(crate) prompt_is_command: bool,
}

/// What the previous refresh left, for an incremental one.
#[derive(Debug, Default)]
pub(crate) struct Previous {
    pub(crate) main_transcript: Option<i64>,
    pub(crate) scanned_ordinal: i64,
    pub(crate) base_size: i64,
    pub(crate) base_messages: i64,
    pub(crate) first_line_sidechain: bool,
    pub(crate) first_prompt: Option<String>,
    pub(crate) prompt_is_command: bool,
    pub(crate) cwd: Option<String>,
    pub(crate) created_at: Option<i64>,
    pub(crate) first_timestamp: Option<String>,
    pub(crate) last_timestamp: Option<String>,
    pub(crate) git_branch: Option<String>,
}

/// The catalog row as it is written: the entry and what the refresh adds to it.
pub(crate) struct Computed<'a> {
    pub(crate) session_key: i64,
    pub(crate) session_id: &'a str,
    pub(crate) project_id: i64,
    pub(crate) entry: &'a Entry,
    pub(crate) last_modified: i64,
    pub(crate) written_at: Option<i64>,
    pub(crate) subagents: i64,
    pub(crate) name_text: &'a str,
}

/// The reads and the one write a catalog refresh needs, once per backend; the rules that
/// turn them into a row ([`refresh_with`]) are shared. `from` is an ordinal: lines before it
/// were seen by the previous refresh. The scans call `f` with each line's bytes, in the
/// order named, until it returns `true`.
pub(crate) trait CatalogSource {
    /// The session (its id, project and live main transcript), the previous row's
    /// `written_at` and watermark fields, and its live sub-agent transcripts; `None` when
    /// the session is gone.
    fn session_state(&mut self, key: i64) -> Result<Option<SessionState>>;
    /// What the refresh reads of the main transcript as a whole (see [`TranscriptState`]).
    fn transcript_state(&mut self, transcript: i64) -> Result<TranscriptState>;
    /// Bytes and messages of lines `from..split` and of lines from `split` on, and the
    /// first and last non-NULL timestamps from `from` on.
    fn tail(&mut self, transcript: i64, from: i64, split: i64) -> Result<Tail>;
    /// The first line's bytes.
    fn first_line(&mut self, transcript: i64) -> Result<Vec<u8>>;
    /// User lines (status 0) from `from` on, in file order.
    fn scan_user_lines(
        &mut self,
        transcript: i64,
        from: i64,
        f: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<()>;
    /// JSON lines from `from` on that contain `needle`, forward or backward.
    fn scan_lines_with(
        &mut self,
        transcript: i64,
        needle: &[u8],
        forward: bool,
        from: i64,
        f: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<()>;
    /// Writes the row.
    fn upsert(&mut self, row: &Computed<'_>) -> Result<()>;
}

/// What [`CatalogSource::session_state`] answers.
pub(crate) struct SessionState {
    /// The session's id, project and live main transcript.
    pub(crate) session: (String, i64, Option<i64>),
    /// The previous row's `written_at` and watermark fields.
    pub(crate) previous: Option<(Option<i64>, Previous)>,
    /// Live sub-agent transcripts of the session.
    pub(crate) subagents: i64,
}

/// What [`CatalogSource::transcript_state`] answers.
pub(crate) struct TranscriptState {
    /// The newest ledger entry of the transcript: mtime (ns) and whether it vanished.
    pub(crate) ledger: Option<(i64, bool)>,
    /// The transcript's last ordinal.
    pub(crate) max_ordinal: Option<i64>,
    /// The last non-empty value of each metadata kind: `custom-title`, `ai-title`,
    /// `last-prompt`.
    pub(crate) user_title: Option<String>,
    pub(crate) ai_title: Option<String>,
    pub(crate) last_prompt: Option<String>,
    /// The last non-empty `summary` whose `leafUuid` is a line of the transcript.
    pub(crate) summary_record: Option<String>,
    /// The last `tag` entry's value, if there is one and it is not NULL.
    pub(crate) tag: Option<String>,
}

/// What [`CatalogSource::tail`] answers.
pub(crate) struct Tail {
    pub(crate) totals: (i64, i64, i64, i64),
    pub(crate) timestamps: (Option<String>, Option<String>),
}

/// A computed row's values in [`COLUMNS`]' order, as an array of `&$to_sql` (each backend
/// binds the same list with its own parameter trait).
macro_rules! catalog_values {
    ($c:expr, $to_sql:ty) => {{
        let c = $c;
        let e = c.entry;
        let values: [&$to_sql; 30] = [
            &c.session_key,
            &c.session_id,
            &c.project_id,
            &e.listed,
            &e.summary,
            &e.custom_title,
            &e.user_title,
            &e.ai_title,
            &e.last_prompt,
            &e.summary_record,
            &e.first_prompt,
            &e.git_branch,
            &e.cwd,
            &e.tag,
            &e.created_at,
            &e.first_timestamp,
            &e.last_timestamp,
            &c.last_modified,
            &c.written_at,
            &e.file_size,
            &e.message_count,
            &c.subagents,
            &e.source_state,
            &c.name_text,
            &e.main_transcript,
            &e.scanned_ordinal,
            &e.base_size,
            &e.base_messages,
            &e.first_line_sidechain,
            &e.prompt_is_command,
        ];
        values
    }};
}
#[cfg_attr(not(feature = "postgres"), allow(unused_imports))]
pub(crate) use catalog_values;

/// The catalog columns in [`UPSERT`]'s order, for [`stale_columns`] (and the team store's).
pub(crate) const COLUMNS: [&str; 30] = [
    "session_key",
    "session_id",
    "project_id",
    "listed",
    "summary",
    "custom_title",
    "user_title",
    "ai_title",
    "last_prompt",
    "summary_record",
    "first_prompt",
    "git_branch",
    "cwd",
    "tag",
    "created_at",
    "first_timestamp",
    "last_timestamp",
    "last_modified",
    "written_at",
    "file_size",
    "message_count",
    "subagent_count",
    "source_state",
    "name_text",
    "main_transcript",
    "scanned_ordinal",
    "base_size",
    "base_messages",
    "first_line_sidechain",
    "prompt_is_command",
];
/// Recomputes a session's catalog row from what `src` reads, with `written` the time
/// sessiondb itself wrote to it (if it did): the one implementation of the catalog's rules,
/// for every backend.
pub(crate) fn refresh_with(
    src: &mut impl CatalogSource,
    session_key: i64,
    written: Option<i64>,
) -> Result<()> {
    computed(src, session_key, written, false, |src, row| src.upsert(row))
}

/// Computes a session's catalog row, from the previous refresh's watermark on or, when
/// `full`, from its first line, and hands it to `then`; `T::default()` when the session
/// does not exist.
pub(crate) fn computed<S: CatalogSource, T: Default>(
    src: &mut S,
    session_key: i64,
    written: Option<i64>,
    full: bool,
    then: impl FnOnce(&mut S, &Computed<'_>) -> Result<T>,
) -> Result<T> {
    let Some(SessionState {
        session: (session_id, project_id, main),
        previous,
        subagents,
    }) = src.session_state(session_key)?
    else {
        return Ok(T::default());
    };
    let (previous_written, previous) = previous.unwrap_or_default();
    let previous = if full { Previous::default() } else { previous };
    let written_at = match (previous_written, written) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let mut e = match main {
        Some(transcript) => compute(src, transcript, previous)?,
        None => Entry {
            source_state: "none",
            ..Entry::default()
        },
    };
    let last_modified = e.mtime_ms.max(written_at.unwrap_or(0));
    let name_text = [
        &e.summary,
        &e.user_title,
        &e.ai_title,
        &e.last_prompt,
        &e.summary_record,
        &e.first_prompt,
    ]
    .iter()
    .filter_map(|s| s.as_deref())
    .map(str::to_lowercase)
    .collect::<Vec<_>>()
    .join("\n");
    if e.summary.is_none() {
        e.listed = false;
    }
    then(
        src,
        &Computed {
            session_key,
            session_id: &session_id,
            project_id,
            entry: &e,
            last_modified,
            written_at,
            subagents,
            name_text: &name_text,
        },
    )
}

/// Computes a session's entry from its main transcript. Lines before the previous
/// refresh's watermark are not read again when the transcript is the same one and has not
/// shrunk: their totals and first-found fields come from `previous`.
fn compute(src: &mut impl CatalogSource, transcript: i64, previous: Previous) -> Result<Entry> {
    let mut e = Entry {
        main_transcript: Some(transcript),
        ..Entry::default()
    };
    let state = src.transcript_state(transcript)?;
    (e.mtime_ms, e.source_state) = match state.ledger {
        Some((mtime_ns, vanished)) => (
            mtime_ns.div_euclid(1_000_000),
            if vanished { "vanished" } else { "present" },
        ),
        None => (0, "none"),
    };
    let Some(max_ordinal) = state.max_ordinal else {
        e.scanned_ordinal = -1;
        return Ok(e);
    };
    let incremental = previous.main_transcript == Some(transcript)
        && previous.scanned_ordinal >= 0
        && max_ordinal >= previous.scanned_ordinal;
    let p = if incremental {
        previous
    } else {
        Previous::default()
    };
    let from = p.scanned_ordinal.max(0);
    let Tail {
        totals: (base_size, base_messages, tail_size, tail_messages),
        timestamps: (first, last),
    } = src.tail(transcript, from, max_ordinal)?;
    e.base_size = p.base_size + base_size;
    e.base_messages = p.base_messages + base_messages;
    e.file_size = e.base_size + tail_size;
    e.message_count = e.base_messages + tail_messages;
    e.scanned_ordinal = max_ordinal;
    e.first_line_sidechain = if from == 0 {
        let first_line = src.first_line(transcript)?;
        contains(&first_line, b"\"isSidechain\":true")
            || contains(&first_line, b"\"isSidechain\": true")
    } else {
        p.first_line_sidechain
    };
    e.user_title = state.user_title;
    e.ai_title = state.ai_title;
    e.last_prompt = state.last_prompt;
    e.custom_title = e.user_title.clone().or_else(|| e.ai_title.clone());
    e.summary_record = state.summary_record;
    e.tag = state.tag.filter(|t| !t.is_empty());
    (e.first_prompt, e.prompt_is_command) = if p.first_prompt.is_some() && !p.prompt_is_command {
        (p.first_prompt, false)
    } else {
        let fallback = p.first_prompt.filter(|_| p.prompt_is_command);
        first_prompt_of(src, transcript, from, fallback)?
    };
    e.summary = e
        .custom_title
        .clone()
        .or_else(|| e.last_prompt.clone())
        .or_else(|| e.summary_record.clone())
        .or_else(|| e.first_prompt.clone());
    e.git_branch = field_of(src, transcript, "gitBranch", false, from)?.or(p.git_branch);
    e.cwd = match p.cwd {
        Some(cwd) => Some(cwd),
        None => field_of(src, transcript, "cwd", true, from)?,
    };
    if p.first_timestamp.is_some() {
        e.first_timestamp = p.first_timestamp;
        e.created_at = p.created_at;
    } else {
        e.created_at = first.as_deref().and_then(parse_iso8601_ms);
        e.first_timestamp = first;
    }
    e.last_timestamp = last.or(p.last_timestamp);
    e.listed = e.file_size > 0 && !e.first_line_sidechain && e.summary.is_some();
    Ok(e)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The first (`forward`) or last non-empty top-level string `key` of the transcript's lines
/// from ordinal `from` on.
fn field_of(
    src: &mut impl CatalogSource,
    transcript: i64,
    key: &str,
    forward: bool,
    from: i64,
) -> Result<Option<String>> {
    let needle = format!("\"{key}\"").into_bytes();
    let mut found = None;
    src.scan_lines_with(transcript, &needle, forward, from, &mut |raw| {
        if let Some(Value::Object(map)) = crate::jsonl::parse_record(raw) {
            if let Some(Value::String(s)) = map.get(key) {
                if !s.is_empty() {
                    found = Some(s.clone());
                    return true;
                }
            }
        }
        false
    })?;
    Ok(found)
}

/// The first prompt of the lines from ordinal `from` on, with `fallback` the command seen
/// before; returns the prompt and whether it is only the command fallback.
fn first_prompt_of(
    src: &mut impl CatalogSource,
    transcript: i64,
    from: i64,
    fallback: Option<String>,
) -> Result<(Option<String>, bool)> {
    let mut finder = FirstPrompt {
        command_fallback: fallback,
    };
    let mut found = None;
    src.scan_user_lines(transcript, from, &mut |raw| {
        found = finder.feed(raw);
        found.is_some()
    })?;
    if let Some(found) = found {
        return Ok((Some(found), false));
    }
    let fallback = finder.finish();
    let is_command = fallback.is_some();
    Ok((fallback, is_command))
}

/// The Agent SDK's first-prompt rule (spec §9.2, SDK quirk 7), fed one line at a time.
///
/// A line counts when it contains `"type":"user"` and none of `"tool_result"`,
/// `"isMeta":true`, `"isCompactSummary":true` (each also with a space after the colon) and
/// parses as a user record with a `message` object. Its string content, or the `text` of each
/// text block, is a candidate: newlines become spaces and it is trimmed; a slash command is
/// remembered as the fallback and skipped; generated text (`<local-command-stdout>`,
/// `<session-start-hook>`, `<tick>`, `<goal>`, `[Request interrupted by user…]`, a lone
/// `<ide_opened_file>` or `<ide_selection>` element) is skipped. The first survivor is cut to
/// 200 characters plus `…`.
#[derive(Debug, Default)]
pub struct FirstPrompt {
    command_fallback: Option<String>,
}

impl FirstPrompt {
    /// Looks at one JSONL line; returns the prompt when this line has it.
    pub fn feed(&mut self, line: &[u8]) -> Option<String> {
        let has = |a: &[u8], b: &[u8]| contains(line, a) || contains(line, b);
        if !has(b"\"type\":\"user\"", b"\"type\": \"user\"")
            || contains(line, b"\"tool_result\"")
            || has(b"\"isMeta\":true", b"\"isMeta\": true")
            || has(b"\"isCompactSummary\":true", b"\"isCompactSummary\": true")
        {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let entry: Value = serde_json::from_str(text.trim()).ok()?;
        if entry.get("type").and_then(Value::as_str) != Some("user") {
            return None;
        }
        let content = entry.get("message")?.as_object()?.get("content")?;
        let texts: Vec<&str> = match content {
            Value::String(s) => vec![s.as_str()],
            Value::Array(blocks) => blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect(),
            _ => Vec::new(),
        };
        for raw in texts {
            let flat = raw.replace('\n', " ");
            let result = py_strip(&flat);
            if result.is_empty() {
                continue;
            }
            if let Some(name) = command_name(result) {
                if self.command_fallback.is_none() && !name.is_empty() {
                    self.command_fallback = Some(name.to_owned());
                }
                continue;
            }
            if is_generated(result) {
                continue;
            }
            return Some(truncate_prompt(result));
        }
        None
    }

    /// The fallback when no line had a prompt: the first slash command seen.
    pub fn finish(self) -> Option<String> {
        self.command_fallback
    }
}

fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

fn py_strip(s: &str) -> &str {
    s.trim_matches(py_space)
}

/// `<command-name>X</command-name>` anywhere in the text: `X`.
fn command_name(text: &str) -> Option<&str> {
    const OPEN: &str = "<command-name>";
    const CLOSE: &str = "</command-name>";
    let start = text.find(OPEN)? + OPEN.len();
    let len = text[start..].find(CLOSE)?;
    Some(&text[start..start + len])
}

fn is_generated(text: &str) -> bool {
    const PREFIXES: [&str; 4] = [
        "<local-command-stdout>",
        "<session-start-hook>",
        "<tick>",
        "<goal>",
    ];
    if PREFIXES.iter().any(|p| text.starts_with(p)) {
        return true;
    }
    if let Some(rest) = text.strip_prefix("[Request interrupted by user") {
        if rest.contains(']') {
            return true;
        }
    }
    let trimmed = text.trim_start_matches(py_space);
    let tail_trimmed = trimmed.trim_end_matches(py_space);
    for (open, close) in [
        ("<ide_opened_file>", "</ide_opened_file>"),
        ("<ide_selection>", "</ide_selection>"),
    ] {
        if tail_trimmed.len() >= open.len() + close.len()
            && tail_trimmed.starts_with(open)
            && tail_trimmed.ends_with(close)
        {
            return true;
        }
    }
    false
}

/// At most 200 characters; a longer prompt is cut, right-trimmed and given `…`.
fn truncate_prompt(text: &str) -> String {
    match text.char_indices().nth(200) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}\u{2026}", text[..cut].trim_end_matches(py_space)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(lines: &[&str]) -> Option<String> {
        let mut f = FirstPrompt::default();
        for line in lines {
            if let Some(p) = f.feed(line.as_bytes()) {
                return Some(p);
            }
        }
        f.finish()
    }

    #[test]
    fn first_prompt_rules() {
        let user =
            |c: &str| format!(r#"{{"type":"user","message":{{"role":"user","content":{c}}}}}"#);
        let cases: Vec<(Vec<String>, Option<&str>)> = vec![
            (vec![user(r#""hello\nworld ""#)], Some("hello world")),
            (
                vec![
                    user(r#""<command-name>/exit</command-name>""#),
                    user(r#""<local-command-stdout>bye</local-command-stdout>""#),
                ],
                Some("/exit"),
            ),
            (
                vec![
                    user(r#""[Request interrupted by user for tool use]""#),
                    user(r#"[{"type":"image"},{"type":"text","text":"  real  "}]"#),
                ],
                Some("real"),
            ),
            (
                vec![
                    user(r#""<ide_opened_file>a</ide_opened_file>""#),
                    user(r#""b""#),
                ],
                Some("b"),
            ),
            (
                vec![r#"{"type":"user","isMeta":true,"message":{"content":"meta"}}"#.into()],
                None,
            ),
            (
                vec![user(r#"[{"type":"tool_result","content":"x"}]"#)],
                None,
            ),
        ];
        for (lines, want) in cases {
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            assert_eq!(prompt(&refs).as_deref(), want, "{lines:?}");
        }
    }

    #[test]
    fn long_prompts_are_cut_at_200_characters() {
        let long = "é".repeat(250);
        let got = truncate_prompt(&long);
        assert_eq!(got.chars().count(), 201);
        assert!(got.ends_with('…'));
        assert_eq!(truncate_prompt("short"), "short");
        let spaced = format!("{}  {}", "a".repeat(199), "b".repeat(10));
        assert_eq!(truncate_prompt(&spaced), format!("{}…", "a".repeat(199)));
    }
}
