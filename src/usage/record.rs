//! A stored line → the billed API responses it records. Pure: no SQL, no I/O.
//!
//! Claude Code writes each API response's `usage` on its assistant records: one record per
//! content block while the response streams (the parts share `message.id` and `requestId`,
//! the last carries the final output count), and again wherever the record is copied (a
//! fork, a resumed copy, a sidechain replay, the same session imported from a second
//! machine). CLI 2.1.x also wrote each sub-agent response inside the parent's
//! `agent_progress` records (`data.message`). [`responses`] reads both; [`dedupe_key`] and
//! [`replaces`] are the rule that makes one row of them (docs/usage.md).

use crate::jsonl::Envelope;
use serde::Deserialize;

/// The model name Claude Code gives the assistant records it writes itself (an API error,
/// an interruption): no request was billed.
pub const SYNTHETIC_MODEL: &str = "<synthetic>";

/// One billed API response as a record states it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Response {
    /// `message.id`; `None` on records that name none (nothing to deduplicate them by).
    pub message_id: Option<String>,
    /// `requestId`, where the CLI recorded one.
    pub request_id: Option<String>,
    /// The sub-agent that made it (`agentId`), `None` for the main agent.
    pub agent_id: Option<String>,
    /// `message.model`.
    pub model: Option<String>,
    /// The record's time, epoch milliseconds.
    pub timestamp_ms: i64,
    /// The record's `cwd`.
    pub cwd: Option<String>,
    /// The record's `gitBranch`.
    pub git_branch: Option<String>,
    /// `usage.input_tokens`.
    pub input_tokens: i64,
    /// `usage.output_tokens`.
    pub output_tokens: i64,
    /// `usage.cache_creation_input_tokens`: every cache write, both lifetimes.
    pub cache_creation_tokens: i64,
    /// The part of [`Self::cache_creation_tokens`] written for one hour
    /// (`usage.cache_creation.ephemeral_1h_input_tokens`); the rest is 5-minute writes.
    pub cache_creation_1h_tokens: i64,
    /// `usage.cache_read_input_tokens`.
    pub cache_read_tokens: i64,
    /// `usage.server_tool_use.web_search_requests`.
    pub web_search_requests: i64,
    /// `usage.service_tier`.
    pub service_tier: Option<String>,
    /// `usage.speed`.
    pub speed: Option<String>,
    /// The record's own `costUSD` (written by old CLIs).
    pub cost_usd: Option<f64>,
}

impl Response {
    /// The key two records of one response share (see [`dedupe_key`]).
    pub fn key(&self) -> Option<(&str, &str)> {
        dedupe_key(self.message_id.as_deref(), self.request_id.as_deref())
    }
}

/// The identity of an API response: its `message.id` with its `requestId` (`""` when the
/// record has none: the message id alone is unique per response). `None` when the record
/// names no message id: such records are each counted.
pub fn dedupe_key<'a>(
    message: Option<&'a str>,
    request: Option<&'a str>,
) -> Option<(&'a str, &'a str)> {
    let message = message.filter(|m| !m.is_empty())?;
    Some((message, request.unwrap_or("")))
}

/// Where a copy of a response is stored: (project folder name, session id).
pub type Owner<'a> = (&'a str, &'a str);

/// Whether `new`, a record of the same response as the stored `old`, replaces it. Within
/// one session: when its counts are at least as final (the output count grows as a
/// response streams; equal counts take the later record). Across sessions (a fork, a
/// resumed copy, one session under two machines' project folders): the session first in
/// (project, session id) order keeps the response, whatever order the copies arrive in,
/// so that both engines, and parallel imports, agree (docs/usage.md). The engines'
/// conditions for replacing a stored copy (SQLite's `REPLACE`, PostgreSQL's
/// `ON CONFLICT … WHERE`) are this function in SQL.
pub fn replaces(old: Owner<'_>, old_output: i64, new: Owner<'_>, new_output: i64) -> bool {
    if old == new {
        more_final(old_output, new_output)
    } else {
        new < old
    }
}

/// Within one session: whether a later record of a response, with output count `new`,
/// holds counts at least as final as the earlier one's `old` (see [`replaces`]).
pub fn more_final(old: i64, new: i64) -> bool {
    new >= old
}

/// The responses of one session's lines, in row order, folded by the dedupe rule before
/// they are stored: one entry per response key (the part [`more_final`] keeps, with its
/// row), and every response without a key. Storing the entries gives the rows that storing
/// each record in turn gives (the parts of a response share an owner, so only the
/// within-session rule applies among them), with one upsert per response instead of one
/// per streamed part.
#[derive(Default)]
pub struct Fold {
    /// (row, response), in the order each key was first seen.
    kept: Vec<(i64, Response)>,
    /// Where each key's entry is in `kept`.
    at: std::collections::HashMap<(String, String), usize>,
}

impl Fold {
    /// Adds the responses of the line stored as `row` (lines in row order).
    pub fn add(&mut self, row: i64, found: impl IntoIterator<Item = Response>) {
        for response in found {
            let Some((message, request)) = response.key() else {
                self.kept.push((row, response));
                continue;
            };
            match self.at.get(&(message.to_owned(), request.to_owned())) {
                Some(&i) => {
                    if more_final(self.kept[i].1.output_tokens, response.output_tokens) {
                        self.kept[i] = (row, response);
                    }
                }
                None => {
                    let key = (message.to_owned(), request.to_owned());
                    self.at.insert(key, self.kept.len());
                    self.kept.push((row, response));
                }
            }
        }
    }

    /// The folded responses with the row each one's counts come from.
    pub fn responses(&self) -> &[(i64, Response)] {
        &self.kept
    }

    /// Whether there is nothing to store.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }
}

/// Whether a line can hold a response at all: checked on the envelope before any parse.
pub fn may_hold(bytes: &[u8], env: &Envelope<'_>) -> bool {
    matches!(env.kind.as_deref(), Some("assistant") | Some("progress"))
        && memchr::memmem::find(bytes, b"\"usage\"").is_some()
}

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: Option<String>,
    timestamp: Option<String>,
    #[serde(rename = "requestId")]
    request_id: Option<String>,
    #[serde(rename = "agentId")]
    agent_id: Option<String>,
    cwd: Option<String>,
    #[serde(rename = "gitBranch")]
    git_branch: Option<String>,
    #[serde(rename = "costUSD")]
    cost_usd: Option<f64>,
    message: Option<Message>,
    data: Option<Progress>,
}

#[derive(Deserialize)]
struct Progress {
    message: Option<Box<Line>>,
    #[serde(rename = "agentId")]
    agent_id: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    id: Option<String>,
    model: Option<String>,
    usage: Option<Usage>,
}

#[derive(Deserialize, Default)]
struct Usage {
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    cache_creation_input_tokens: Option<i64>,
    cache_read_input_tokens: Option<i64>,
    cache_creation: Option<CacheCreation>,
    server_tool_use: Option<ServerToolUse>,
    service_tier: Option<String>,
    speed: Option<String>,
}

#[derive(Deserialize)]
struct CacheCreation {
    ephemeral_1h_input_tokens: Option<i64>,
}

#[derive(Deserialize)]
struct ServerToolUse {
    web_search_requests: Option<i64>,
}

/// The responses a stored line records: its own (an assistant record with `usage`) and a
/// sub-agent's inside a progress record. Records without a usable timestamp, and those of
/// the [`SYNTHETIC_MODEL`], are no billed response.
pub fn responses(bytes: &[u8], env: &Envelope<'_>) -> Vec<Response> {
    if !may_hold(bytes, env) {
        return Vec::new();
    }
    let Some(text) = crate::jsonl::parse_text(bytes) else {
        return Vec::new();
    };
    let Ok(line) = serde_json::from_str::<Line>(text) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    if line.kind.as_deref() == Some("assistant") {
        found.extend(response(&line, line.agent_id.clone(), &line));
    }
    if let Some(Progress {
        message: Some(inner),
        agent_id,
    }) = &line.data
    {
        if inner.kind.as_deref() == Some("assistant") {
            found.extend(response(inner, agent_id.clone(), &line));
        }
    }
    found
}

/// One response from `rec`; `outer` supplies what a nested record leaves out.
fn response(rec: &Line, agent_id: Option<String>, outer: &Line) -> Option<Response> {
    let message = rec.message.as_ref()?;
    let usage = message.usage.as_ref()?;
    if message.model.as_deref() == Some(SYNTHETIC_MODEL) {
        return None;
    }
    let stamp = rec.timestamp.as_deref().or(outer.timestamp.as_deref())?;
    let timestamp_ms = crate::time::parse_iso8601_ms(stamp)?;
    let n = |v: Option<i64>| v.unwrap_or(0).max(0);
    let cache_creation_tokens = n(usage.cache_creation_input_tokens);
    Some(Response {
        message_id: message.id.clone(),
        request_id: rec.request_id.clone(),
        agent_id,
        model: message.model.clone(),
        timestamp_ms,
        cwd: rec.cwd.clone().or_else(|| outer.cwd.clone()),
        git_branch: rec.git_branch.clone().or_else(|| outer.git_branch.clone()),
        input_tokens: n(usage.input_tokens),
        output_tokens: n(usage.output_tokens),
        cache_creation_tokens,
        cache_creation_1h_tokens: n(usage
            .cache_creation
            .as_ref()
            .and_then(|c| c.ephemeral_1h_input_tokens))
        .min(cache_creation_tokens),
        cache_read_tokens: n(usage.cache_read_input_tokens),
        web_search_requests: n(usage
            .server_tool_use
            .as_ref()
            .and_then(|s| s.web_search_requests)),
        service_tier: usage.service_tier.clone(),
        speed: usage.speed.clone(),
        cost_usd: rec.cost_usd.or(outer.cost_usd),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Vec<Response> {
        let (_, env) = Envelope::parse(line.as_bytes());
        responses(line.as_bytes(), &env)
    }

    #[test]
    fn an_assistant_record_is_one_response() {
        let got = read(
            r#"{"type":"assistant","timestamp":"2025-07-20T05:57:17.385Z","requestId":"req_1","cwd":"/w","gitBranch":"main","message":{"id":"msg_1","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":4,"output_tokens":172,"cache_creation_input_tokens":10539,"cache_read_input_tokens":13771,"cache_creation":{"ephemeral_5m_input_tokens":10000,"ephemeral_1h_input_tokens":539},"server_tool_use":{"web_search_requests":2},"service_tier":"standard","speed":"fast"}}}"#,
        );
        assert_eq!(got.len(), 1);
        let r = &got[0];
        assert_eq!(r.key(), Some(("msg_1", "req_1")));
        assert_eq!((r.input_tokens, r.output_tokens), (4, 172));
        assert_eq!(
            (r.cache_creation_tokens, r.cache_creation_1h_tokens),
            (10539, 539)
        );
        assert_eq!((r.cache_read_tokens, r.web_search_requests), (13771, 2));
        assert_eq!(r.timestamp_ms, 1_752_991_037_385);
        assert_eq!(r.speed.as_deref(), Some("fast"));
        assert_eq!(r.git_branch.as_deref(), Some("main"));
    }

    #[test]
    fn a_progress_record_holds_a_sub_agent_response() {
        let got = read(
            r#"{"type":"progress","timestamp":"2026-03-20T18:02:35.188Z","data":{"type":"agent_progress","agentId":"a9b","message":{"type":"assistant","timestamp":"2026-03-20T18:02:35.100Z","requestId":"req_2","message":{"id":"msg_2","model":"claude-haiku-4-5-20251001","usage":{"input_tokens":3,"output_tokens":3}}}}}"#,
        );
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].agent_id.as_deref(), Some("a9b"));
        assert_eq!(got[0].key(), Some(("msg_2", "req_2")));
        assert_eq!(got[0].timestamp_ms % 1000, 100);
    }

    #[test]
    fn synthetic_and_unusable_records_are_no_response() {
        for line in [
            r#"{"type":"assistant","timestamp":"2025-07-20T05:57:17Z","message":{"id":"x","model":"<synthetic>","usage":{"input_tokens":0,"output_tokens":0}}}"#,
            r#"{"type":"assistant","message":{"id":"x","model":"m","usage":{"input_tokens":1}}}"#,
            r#"{"type":"assistant","timestamp":"2025-07-20T05:57:17Z","message":{"id":"x","model":"m"}}"#,
            r#"{"type":"user","timestamp":"2025-07-20T05:57:17Z","message":{"usage":{"input_tokens":1}}}"#,
            r#"not json "usage""#,
        ] {
            assert!(read(line).is_empty(), "{line}");
        }
    }

    #[test]
    fn a_fold_keeps_one_entry_per_response_with_the_final_counts() {
        let part = |id: Option<&str>, request: Option<&str>, output: i64, model: &str| Response {
            message_id: id.map(str::to_owned),
            request_id: request.map(str::to_owned),
            output_tokens: output,
            model: Some(model.to_owned()),
            ..Response::default()
        };
        let mut fold = Fold::default();
        fold.add(1, [part(Some("m1"), Some("r1"), 3, "a")]);
        fold.add(2, [part(Some("m2"), None, 5, "a")]);
        fold.add(3, [part(Some("m1"), Some("r1"), 263, "b")]);
        fold.add(4, [part(Some("m1"), Some("r1"), 263, "c")]);
        fold.add(5, [part(Some("m1"), Some("r1"), 12, "d")]);
        fold.add(
            6,
            [
                part(None, Some("r1"), 1, "a"),
                part(None, Some("r1"), 1, "a"),
            ],
        );
        fold.add(7, [part(Some("m1"), Some("r2"), 1, "a")]);
        let got: Vec<(i64, Option<&str>, i64, Option<&str>)> = fold
            .responses()
            .iter()
            .map(|(row, r)| {
                (
                    *row,
                    r.message_id.as_deref(),
                    r.output_tokens,
                    r.model.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (4, Some("m1"), 263, Some("c")),
                (2, Some("m2"), 5, Some("a")),
                (6, None, 1, Some("a")),
                (6, None, 1, Some("a")),
                (7, Some("m1"), 1, Some("a")),
            ],
            "the later of the two final parts, in first-seen order; keyless records each kept"
        );
        assert!(Fold::default().is_empty());
    }

    #[test]
    fn the_dedupe_rule() {
        assert_eq!(dedupe_key(Some("m"), None), Some(("m", "")));
        assert_eq!(dedupe_key(None, Some("r")), None);
        assert_eq!(dedupe_key(Some(""), Some("r")), None);
        let (a, b) = (("-w-app", "s1"), ("-w-app", "s2"));
        assert!(
            replaces(a, 3, a, 263),
            "a later streamed part with the final count"
        );
        assert!(
            !replaces(a, 263, a, 3),
            "an earlier part never undoes the final count"
        );
        assert!(
            !replaces(a, 3, b, 263),
            "a later session's copy never takes the response"
        );
        assert!(
            replaces(b, 263, a, 263),
            "the first session takes it whenever it arrives"
        );
        assert!(
            replaces(("-w-app", "s9"), 1, ("-a-app", "s9"), 1),
            "project first"
        );
    }
}
