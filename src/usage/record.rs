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
use std::borrow::Cow;

/// The model name Claude Code gives the assistant records it writes itself (an API error,
/// an interruption): no request was billed.
pub const SYNTHETIC_MODEL: &str = "<synthetic>";

/// One billed API response as a record states it. Its strings borrow from the line where
/// they can (import folds a file's responses before it keeps any: see [`Fold`]);
/// [`Response::into_owned`] makes one that outlives the line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Response<'a> {
    /// `message.id`; `None` on records that name none (nothing to deduplicate them by).
    pub message_id: Option<Cow<'a, str>>,
    /// `requestId`, where the CLI recorded one.
    pub request_id: Option<Cow<'a, str>>,
    /// The sub-agent that made it (`agentId`), `None` for the main agent.
    pub agent_id: Option<Cow<'a, str>>,
    /// `message.model`.
    pub model: Option<Cow<'a, str>>,
    /// The record's time, epoch milliseconds.
    pub timestamp_ms: i64,
    /// The record's `cwd`.
    pub cwd: Option<Cow<'a, str>>,
    /// The record's `gitBranch`.
    pub git_branch: Option<Cow<'a, str>>,
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
    pub service_tier: Option<Cow<'a, str>>,
    /// `usage.speed`.
    pub speed: Option<Cow<'a, str>>,
    /// The record's own `costUSD` (written by old CLIs).
    pub cost_usd: Option<f64>,
}

impl Response<'_> {
    /// The key two records of one response share (see [`dedupe_key`]).
    pub fn key(&self) -> Option<(&str, &str)> {
        dedupe_key(self.message_id.as_deref(), self.request_id.as_deref())
    }

    /// The same response owning its strings.
    pub fn into_owned(self) -> Response<'static> {
        let own = |s: Option<Cow<'_, str>>| s.map(|s| Cow::Owned(s.into_owned()));
        Response {
            message_id: own(self.message_id),
            request_id: own(self.request_id),
            agent_id: own(self.agent_id),
            model: own(self.model),
            timestamp_ms: self.timestamp_ms,
            cwd: own(self.cwd),
            git_branch: own(self.git_branch),
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_creation_tokens: self.cache_creation_tokens,
            cache_creation_1h_tokens: self.cache_creation_1h_tokens,
            cache_read_tokens: self.cache_read_tokens,
            web_search_requests: self.web_search_requests,
            service_tier: own(self.service_tier),
            speed: own(self.speed),
            cost_usd: self.cost_usd,
        }
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
///
/// Import folds a file's lines on the thread that parses them, with each line's place in
/// the file as its row, and the writer gives the entries their rows ([`Fold::absorb`]): the
/// parts a response supersedes are never copied out of the line nor sent to the writer.
#[derive(Default)]
pub struct Fold<'a> {
    /// (row, response), in the order each key was first seen.
    kept: Vec<(i64, Response<'a>)>,
    /// Where each key's entry is in `kept`, by [`key_bytes`].
    at: std::collections::HashMap<Vec<u8>, usize>,
    /// The key being looked up (reused: a key seen before costs no allocation).
    scratch: Vec<u8>,
}

/// A response key as one byte string: the message id's length, the message id, the request
/// id (unambiguous, whatever bytes the ids hold).
fn key_bytes(into: &mut Vec<u8>, message: &str, request: &str) {
    into.clear();
    into.extend_from_slice(&(message.len() as u64).to_le_bytes());
    into.extend_from_slice(message.as_bytes());
    into.extend_from_slice(request.as_bytes());
}

impl<'a> Fold<'a> {
    /// Adds the responses of the line stored as `row` (lines in row order).
    pub fn add(&mut self, row: i64, found: impl IntoIterator<Item = Response<'a>>) {
        for response in found {
            let Some((message, request)) = response.key() else {
                self.kept.push((row, response));
                continue;
            };
            key_bytes(&mut self.scratch, message, request);
            match self.at.get(self.scratch.as_slice()) {
                Some(&i) => {
                    if more_final(self.kept[i].1.output_tokens, response.output_tokens) {
                        self.kept[i] = (row, response);
                    }
                }
                None => {
                    self.at.insert(self.scratch.clone(), self.kept.len());
                    self.kept.push((row, response));
                }
            }
        }
    }

    /// Adds the entries of `later`, a fold of the lines that follow this fold's, whose rows
    /// `row_of` maps to rows. The same as adding those lines one by one: of two entries of
    /// a key, the later one is kept when its counts are at least as final, and keys first
    /// seen in `later` follow in the order it saw them.
    pub fn absorb(&mut self, later: Fold<'a>, row_of: impl Fn(i64) -> i64) {
        if self.kept.is_empty() {
            *self = later;
            for (row, _) in &mut self.kept {
                *row = row_of(*row);
            }
            return;
        }
        for (row, response) in later.kept {
            self.add(row_of(row), [response]);
        }
    }

    /// The same fold owning its strings.
    pub fn into_owned(self) -> Fold<'static> {
        Fold {
            kept: self
                .kept
                .into_iter()
                .map(|(row, r)| (row, r.into_owned()))
                .collect(),
            at: self.at,
            scratch: self.scratch,
        }
    }

    /// The folded responses with the row each one's counts come from.
    pub fn responses(&self) -> &[(i64, Response<'a>)] {
        &self.kept
    }

    /// Whether there is nothing to store.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }
}

/// Whether a line can hold a response at all: checked on the envelope before any parse.
pub fn may_hold(bytes: &[u8], env: &Envelope<'_>) -> bool {
    /// Built once: building a finder costs as much as searching a short line.
    static USAGE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"usage\""));
    matches!(env.kind.as_deref(), Some("assistant") | Some("progress"))
        && USAGE.find(bytes).is_some()
}

// The record's fields, borrowed from the line where they hold no escapes.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "requestId", borrow)]
    request_id: Option<Cow<'a, str>>,
    #[serde(rename = "agentId", borrow)]
    agent_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    cwd: Option<Cow<'a, str>>,
    #[serde(rename = "gitBranch", borrow)]
    git_branch: Option<Cow<'a, str>>,
    #[serde(rename = "costUSD")]
    cost_usd: Option<f64>,
    #[serde(borrow)]
    message: Option<Message<'a>>,
    #[serde(borrow)]
    data: Option<Progress<'a>>,
}

#[derive(Deserialize)]
struct Progress<'a> {
    #[serde(borrow)]
    message: Option<Box<Line<'a>>>,
    #[serde(rename = "agentId", borrow)]
    agent_id: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow)]
    usage: Option<Usage<'a>>,
}

#[derive(Deserialize, Default)]
struct Usage<'a> {
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    cache_creation_input_tokens: Option<i64>,
    cache_read_input_tokens: Option<i64>,
    cache_creation: Option<CacheCreation>,
    server_tool_use: Option<ServerToolUse>,
    #[serde(borrow)]
    service_tier: Option<Cow<'a, str>>,
    #[serde(borrow)]
    speed: Option<Cow<'a, str>>,
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
///
/// An assistant record is read from the fields its envelope captured in the same pass
/// ([`crate::jsonl::Billing`]): only its small `usage` object is parsed again. Other
/// records, and envelopes without those fields, are parsed in full; both readings give
/// the same responses (the envelope's capture notes whatever the full parse would reject).
pub fn responses<'a>(bytes: &'a [u8], env: &Envelope<'a>) -> Vec<Response<'a>> {
    if !may_hold(bytes, env) {
        return Vec::new();
    }
    if env.billing.usable && env.kind.as_deref() == Some("assistant") {
        return from_envelope(env).into_iter().collect();
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

/// An assistant record's response from its envelope: what [`response`] makes of the same
/// fields parsed from the whole line.
fn from_envelope<'a>(env: &Envelope<'a>) -> Option<Response<'a>> {
    let b = &env.billing;
    let cost_usd = match b.cost_usd {
        Some(raw) => serde_json::from_str::<Option<f64>>(raw).ok()?,
        None => None,
    };
    let usage = match b.usage {
        Some(raw) => serde_json::from_str::<Option<Usage>>(raw).ok()?,
        None => None,
    };
    let line = Line {
        kind: env.kind.clone(),
        timestamp: env.timestamp.clone(),
        request_id: b.request_id.clone(),
        agent_id: env.agent_id.clone(),
        cwd: env.cwd.clone(),
        git_branch: b.git_branch.clone(),
        cost_usd,
        message: Some(Message {
            id: env.message_id.clone(),
            model: b.model.clone(),
            usage,
        }),
        data: None,
    };
    response(&line, line.agent_id.clone(), &line)
}

/// One response from `rec`; `outer` supplies what a nested record leaves out.
fn response<'a>(
    rec: &Line<'a>,
    agent_id: Option<Cow<'a, str>>,
    outer: &Line<'a>,
) -> Option<Response<'a>> {
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

    fn read(line: &str) -> Vec<Response<'_>> {
        let (_, env) = Envelope::parse(line.as_bytes());
        responses(line.as_bytes(), &env)
    }

    /// The responses of `line` read the long way: an owned envelope has no captured fields.
    fn read_in_full(line: &str) -> Vec<Response<'static>> {
        let (_, env) = Envelope::parse(line.as_bytes());
        let env = env.into_owned();
        assert!(!env.billing.usable);
        responses(line.as_bytes(), &env)
            .into_iter()
            .map(Response::into_owned)
            .collect()
    }

    #[test]
    fn the_envelope_reading_agrees_with_the_full_parse() {
        let usage = r#""usage":{"input_tokens":4,"output_tokens":7,"cache_creation":{"ephemeral_1h_input_tokens":2},"cache_creation_input_tokens":3}"#;
        let lines = [
            // the common shape, with escapes, a cost and nulls
            format!(r#"{{"type":"assistant","timestamp":"2025-07-20T05:57:17.385Z","requestId":"r\u0031","costUSD":0.25,"gitBranch":null,"message":{{"id":"m1","model":"claude-x",{usage}}}}}"#),
            // fields the full parse rejects: a number where a string goes, a string cost
            format!(r#"{{"type":"assistant","timestamp":"2025-07-20T05:57:17.385Z","requestId":5,"message":{{"id":"m1",{usage}}}}}"#),
            format!(r#"{{"type":"assistant","timestamp":"2025-07-20T05:57:17.385Z","costUSD":"1","message":{{"id":"m1",{usage}}}}}"#),
            format!(r#"{{"type":"assistant","timestamp":"2025-07-20T05:57:17.385Z","message":{{"id":["m1"],{usage}}}}}"#),
            format!(r#"{{"type":"assistant","timestamp":"2025-07-20T05:57:17.385Z","message":{{"id":"m1","model":7,{usage}}}}}"#),
            // a key twice, at the top and inside the message
            format!(r#"{{"type":"assistant","type":"assistant","timestamp":"2025-07-20T05:57:17.385Z","message":{{"id":"m1",{usage}}}}}"#),
            format!(r#"{{"type":"assistant","timestamp":"2025-07-20T05:57:17.385Z","message":{{"id":"m1",{usage},{usage}}}}}"#),
            // usage of the wrong shape; a message that is no object; a nested record
            r#"{"type":"assistant","timestamp":"2025-07-20T05:57:17.385Z","message":{"id":"m1","usage":{"input_tokens":"4"}}}"#.to_owned(),
            r#"{"type":"assistant","timestamp":"2025-07-20T05:57:17.385Z","message":"usage"}"#.to_owned(),
            format!(r#"{{"type":"assistant","timestamp":"2025-07-20T05:57:17.385Z","data":{{"message":{{"type":"assistant","message":{{"id":"m2",{usage}}}}}}},"message":{{"id":"m1",{usage}}}}}"#),
            // no billed response: synthetic, no time, usage null
            format!(r#"{{"type":"assistant","timestamp":"2025-07-20T05:57:17.385Z","message":{{"id":"m1","model":"<synthetic>",{usage}}}}}"#),
            format!(r#"{{"type":"assistant","message":{{"id":"m1",{usage}}}}}"#),
            r#"{"type":"assistant","timestamp":"2025-07-20T05:57:17.385Z","message":{"id":"m1","usage":null}}"#.to_owned(),
        ];
        for line in &lines {
            let (_, env) = Envelope::parse(line.as_bytes());
            let fast: Vec<_> = responses(line.as_bytes(), &env)
                .into_iter()
                .map(Response::into_owned)
                .collect();
            assert_eq!(fast, read_in_full(line), "{line}");
        }
        assert_eq!(read_in_full(&lines[0])[0].request_id.as_deref(), Some("r1"));
        assert_eq!(read_in_full(&lines[9]).len(), 2);
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

    fn part(
        id: Option<&'static str>,
        request: Option<&'static str>,
        output: i64,
        model: &'static str,
    ) -> Response<'static> {
        Response {
            message_id: id.map(Cow::Borrowed),
            request_id: request.map(Cow::Borrowed),
            output_tokens: output,
            model: Some(Cow::Borrowed(model)),
            ..Response::default()
        }
    }

    /// Lines (row, responses) of one session, for the fold tests.
    fn lines() -> Vec<(i64, Vec<Response<'static>>)> {
        vec![
            (1, vec![part(Some("m1"), Some("r1"), 3, "a")]),
            (2, vec![part(Some("m2"), None, 5, "a")]),
            (3, vec![part(Some("m1"), Some("r1"), 263, "b")]),
            (4, vec![part(Some("m1"), Some("r1"), 263, "c")]),
            (5, vec![part(Some("m1"), Some("r1"), 12, "d")]),
            (
                6,
                vec![
                    part(None, Some("r1"), 1, "a"),
                    part(None, Some("r1"), 1, "a"),
                ],
            ),
            (7, vec![part(Some("m1"), Some("r2"), 1, "a")]),
        ]
    }

    fn entries<'a>(fold: &'a Fold<'_>) -> Vec<(i64, Option<&'a str>, i64, Option<&'a str>)> {
        fold.responses()
            .iter()
            .map(|(row, r)| {
                (
                    *row,
                    r.message_id.as_deref(),
                    r.output_tokens,
                    r.model.as_deref(),
                )
            })
            .collect()
    }

    #[test]
    fn a_fold_keeps_one_entry_per_response_with_the_final_counts() {
        let mut fold = Fold::default();
        for (row, found) in lines() {
            fold.add(row, found);
        }
        assert_eq!(
            entries(&fold),
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
    fn absorbing_a_later_fold_is_adding_its_lines() {
        let mut whole = Fold::default();
        for (row, found) in lines() {
            whole.add(row, found);
        }
        for split in 0..=lines().len() {
            let (mut first, mut later) = (Fold::default(), Fold::default());
            for (i, (row, found)) in lines().into_iter().enumerate() {
                if i < split {
                    first.add(row, found);
                } else {
                    // The later fold counts its lines from 0, as the parsing thread does.
                    later.add(row - 1 - split as i64, found);
                }
            }
            first.absorb(later.into_owned(), |i| i + 1 + split as i64);
            assert_eq!(entries(&first), entries(&whole), "split at {split}");
        }
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
