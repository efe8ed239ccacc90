//! The session page: the conversation rendered for reading, in two views — the transcript
//! (every stored record, in file order) and what the model sees on resume (the repaired
//! chain, repair additions marked) — beside a panel with the restored state and the
//! actions. Also a sub-agent's conversation and one whole record.

use super::html::Html;
use super::markdown;
use super::pages::{clip, relative_age};
use super::{blocking_page, find_session, page, session_href, Nav, WebState};
use crate::backend::Db;
use crate::error::Error;
use crate::model::SessionRef;
use crate::query::StoredLine;
use crate::resume::{ResumeOptions, Resumed};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Characters of a text, tool input or output shown before it is cut (the rest is one
/// click away on the record's own page).
const CUT: usize = 10_000;
/// Characters of a bookkeeping record (progress, snapshots, …) shown in its fold.
const CUT_RECORD: usize = 1_000;

#[derive(Deserialize, Default)]
pub(crate) struct ViewParams {
    view: Option<String>,
    fragment: Option<String>,
}

/// One record to render: its parsed JSON (or why it has none), where it is stored, and
/// whether the resume's repair pass added it.
struct Rec {
    value: Option<Value>,
    raw: Option<Vec<u8>>,
    ordinal: Option<i64>,
    synthetic: bool,
}

impl Rec {
    fn from_line(line: StoredLine) -> Rec {
        match serde_json::from_slice::<Value>(&line.raw) {
            Ok(v) if v.is_object() => Rec {
                value: Some(v),
                raw: None,
                ordinal: Some(line.ordinal),
                synthetic: false,
            },
            _ => Rec {
                value: None,
                raw: Some(line.raw),
                ordinal: Some(line.ordinal),
                synthetic: false,
            },
        }
    }
}

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Renders a list of records: pairs each tool call with its result and the sub-agent it
/// started, totals the token usage.
struct Renderer<'a> {
    session: &'a SessionRef,
    /// `Some(agent)` when rendering a sub-agent's transcript (record links point there).
    agent: Option<&'a str>,
    /// Whether messages get a "Fork here" button (the main transcript only).
    forkable: bool,
    /// Whether the bulky folds (tool calls with their results, bookkeeping and system
    /// records) are written empty, with the address the script fills them from when they
    /// are opened ([`tool_fragment`], [`record_page`]'s fragment). Only stored lines can be
    /// read back by ordinal, so the resume view's records are always written whole.
    lazy: bool,
    /// tool_use id → (record index, block) of its result.
    results: HashMap<String, (usize, &'a Value)>,
    /// Indices of records whose whole content is results shown beside their calls.
    absorbed: HashSet<usize>,
    /// Result records whose anchor was already written (beside the first call it answers).
    anchored: HashSet<usize>,
    /// Stored sub-agent ids of the session.
    agents: HashSet<String>,
    /// message id → index of its last record (where the turn's usage is shown).
    last_of_message: HashMap<String, usize>,
    records: &'a [Rec],
}

impl<'a> Renderer<'a> {
    fn new(
        session: &'a SessionRef,
        agent: Option<&'a str>,
        records: &'a [Rec],
        agents: HashSet<String>,
    ) -> Self {
        let mut results = HashMap::new();
        let mut absorbed = HashSet::new();
        let mut calls = HashSet::new();
        let mut last_of_message = HashMap::new();
        for (i, rec) in records.iter().enumerate() {
            let Some(v) = &rec.value else { continue };
            if let Some(id) = v.pointer("/message/id").and_then(Value::as_str) {
                last_of_message.insert(id.to_owned(), i);
            }
            if let Some(blocks) = v.pointer("/message/content").and_then(Value::as_array) {
                for b in blocks {
                    match s(b, "type") {
                        Some("tool_use") => {
                            if let Some(id) = s(b, "id") {
                                calls.insert(id.to_owned());
                            }
                        }
                        Some("tool_result") => {
                            if let Some(id) = s(b, "tool_use_id") {
                                results.entry(id.to_owned()).or_insert((i, b));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        results.retain(|id, _| calls.contains(id));
        for (i, rec) in records.iter().enumerate() {
            let Some(blocks) = rec
                .value
                .as_ref()
                .and_then(|v| v.pointer("/message/content"))
                .and_then(Value::as_array)
            else {
                continue;
            };
            let all_paired = !blocks.is_empty()
                && blocks.iter().all(|b| {
                    s(b, "type") == Some("tool_result")
                        && s(b, "tool_use_id")
                            .is_some_and(|id| results.get(id).is_some_and(|(at, _)| *at == i))
                });
            if all_paired {
                absorbed.insert(i);
            }
        }
        Renderer {
            session,
            agent,
            forkable: agent.is_none(),
            lazy: false,
            results,
            absorbed,
            anchored: HashSet::new(),
            agents,
            last_of_message,
            records,
        }
    }

    fn base(&self, h: &mut Html) {
        session_href(h, &self.session.project, &self.session.session_id);
    }

    fn record_link(&self, h: &mut Html, ordinal: i64) {
        self.base(h);
        h.raw("/record/").num(ordinal);
        if let Some(agent) = self.agent {
            h.raw("?agent=").url(agent);
        }
    }

    /// ` data-src="…"` on a fold that is written empty and loaded when opened.
    fn fold_src(&self, h: &mut Html, src: impl FnOnce(&Self, &mut Html)) {
        h.raw(" data-src=\"");
        src(self, h);
        h.raw("\"");
    }

    /// What an empty fold holds until the script fills it: a link to the whole line (which
    /// is also all a browser without script gets).
    fn lazy_body(&self, h: &mut Html, class: &'static str, ordinal: i64, anchor: Option<&Value>) {
        h.raw("<div class=\"").raw(class).raw("\"");
        if let Some(v) = anchor {
            self.anchor(h, v);
        }
        h.raw("><a class=\"lazy-link\" href=\"");
        self.record_link(h, ordinal);
        h.raw("\">Line ").num(ordinal + 1).raw("</a></div>");
    }

    /// The body of a folded bookkeeping or system record: its JSON, cut, or (lazily) the
    /// place it is loaded into.
    fn record_fold_body(&self, h: &mut Html, i: usize, v: &Value) {
        let ordinal = self.records[i].ordinal;
        match ordinal.filter(|_| self.lazy) {
            Some(o) => self.lazy_body(h, "lazy", o, None),
            None => {
                h.raw("<pre>");
                self.json(h, v, CUT_RECORD, ordinal);
                h.raw("</pre>");
            }
        }
    }

    /// ` data-src` of a folded record, when it is loaded lazily.
    fn record_fold_src(&self, h: &mut Html, i: usize) {
        if let Some(o) = self.records[i].ordinal.filter(|_| self.lazy) {
            self.fold_src(h, |r, h| {
                r.record_link(h, o);
                h.raw(if r.agent.is_some() {
                    "&amp;fragment=1"
                } else {
                    "?fragment=1"
                });
            });
        }
    }

    /// Writes every record; answers the token totals.
    fn all(&mut self, h: &mut Html) -> Usage {
        let mut total = Usage::default();
        h.raw("<div class=\"conversation\">");
        for i in 0..self.records.len() {
            if self.absorbed.contains(&i) {
                continue;
            }
            self.record(h, i, &mut total);
        }
        h.raw("</div>");
        total
    }

    fn record(&mut self, h: &mut Html, i: usize, total: &mut Usage) {
        let rec = &self.records[i];
        let Some(v) = &rec.value else {
            let raw = rec.raw.as_deref().unwrap_or(b"");
            h.raw("<div class=\"event bad\"><span class=\"kind\">Line ")
                .num(rec.ordinal.unwrap_or(0) + 1)
                .raw(" is not a JSON object (or is nested too deeply to read)</span><pre>");
            self.cut_text(h, &String::from_utf8_lossy(raw), CUT_RECORD, rec.ordinal);
            h.raw("</pre></div>");
            return;
        };
        let kind = s(v, "type").unwrap_or("");
        match kind {
            "user" | "assistant" => self.message(h, i, v, total),
            "system" => self.system(h, i, v),
            _ => self.bookkeeping(h, i, v),
        }
    }

    fn anchor(&self, h: &mut Html, v: &Value) {
        if let Some(uuid) = s(v, "uuid") {
            h.raw(" id=\"m-").text(uuid).raw("\"");
        }
    }

    fn time(h: &mut Html, v: &Value) {
        if let Some(ts) = s(v, "timestamp") {
            h.raw("<time datetime=\"")
                .text(ts)
                .raw("\">")
                .text(&short_time(ts))
                .raw("</time>");
        }
    }

    fn message(&mut self, h: &mut Html, i: usize, v: &Value, total: &mut Usage) {
        let rec = &self.records[i];
        let role = s(v, "type").unwrap_or("user");
        let content = v.pointer("/message/content");
        let text_of_first = match content {
            Some(Value::String(t)) => Some(t.as_str()),
            Some(Value::Array(a)) => a.iter().find_map(|b| s(b, "text")),
            _ => None,
        };
        let api_error = v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true);
        let interrupted = role == "user"
            && text_of_first.is_some_and(|t| t.starts_with("[Request interrupted by user"));
        let compact = v.get("isCompactSummary").and_then(Value::as_bool) == Some(true);
        let meta = v.get("isMeta").and_then(Value::as_bool) == Some(true);
        let sidechain =
            v.get("isSidechain").and_then(Value::as_bool) == Some(true) && self.agent.is_none();
        h.raw("<article class=\"msg ").raw(if role == "assistant" {
            "assistant"
        } else {
            "user"
        });
        for (on, class) in [
            (api_error, " api-error"),
            (interrupted, " interrupted"),
            (compact, " compact-summary"),
            (meta, " meta"),
            (rec.synthetic, " synthetic"),
            (sidechain, " sidechain"),
        ] {
            if on {
                h.raw(class);
            }
        }
        h.raw("\"");
        self.anchor(h, v);
        h.raw(" tabindex=\"-1\"><header><span class=\"role\">")
            .raw(if role == "assistant" {
                "Assistant"
            } else {
                "User"
            })
            .raw("</span>");
        for (on, label) in [
            (api_error, "API error"),
            (interrupted, "Interrupted"),
            (compact, "Compaction summary"),
            (meta, "meta"),
            (rec.synthetic, "added on resume"),
            (sidechain, "sidechain"),
        ] {
            if on {
                h.raw("<span class=\"badge\">").raw(label).raw("</span>");
            }
        }
        Self::time(h, v);
        if let Some(model) = v.pointer("/message/model").and_then(Value::as_str) {
            h.raw("<span class=\"model\">").text(model).raw("</span>");
        }
        let turn_end = v
            .pointer("/message/id")
            .and_then(Value::as_str)
            .and_then(|id| self.last_of_message.get(id))
            .map_or(true, |last| *last == i);
        if role == "assistant" && turn_end {
            if let Some(u) = v.pointer("/message/usage").map(Usage::of) {
                total.add(&u);
                h.raw("<span class=\"usage\" title=\"input · output · cache read · cache write\">");
                u.write(h);
                h.raw("</span>");
            }
        }
        if let Some(uuid) = s(v, "uuid") {
            h.raw("<a class=\"perma\" href=\"#m-")
                .url(uuid)
                .raw("\" aria-label=\"Link to this message\">#</a>");
            if self.forkable && !rec.synthetic {
                h.raw("<button type=\"button\" class=\"fork\" data-up-to=\"")
                    .text(uuid)
                    .raw("\">Fork here</button>");
            }
        }
        h.raw("</header><div class=\"body\">");
        if compact {
            h.raw("<details class=\"summary\"><summary>Summary the conversation continued from</summary>");
        }
        match content {
            Some(Value::String(t)) => self.markdown(h, t, rec.ordinal),
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    self.block(h, i, b);
                }
            }
            Some(other) => {
                h.raw("<pre>");
                self.json(h, other, CUT, rec.ordinal);
                h.raw("</pre>");
            }
            None => {}
        }
        if compact {
            h.raw("</details>");
        }
        if api_error {
            if let Some(status) = v.get("apiErrorStatus") {
                h.raw("<p class=\"note\">Status ")
                    .text(&status.to_string())
                    .raw("</p>");
            }
        }
        h.raw("</div></article>");
    }

    fn markdown(&self, h: &mut Html, text: &str, ordinal: Option<i64>) {
        h.raw("<div class=\"md\">");
        if text.len() > CUT {
            h.trusted(&markdown::render(&clip(text, CUT)));
            self.more(h, text.chars().count().saturating_sub(CUT), ordinal);
        } else {
            h.trusted(&markdown::render(text));
        }
        h.raw("</div>");
    }

    /// "… N more characters. Show all" under a cut text.
    fn more(&self, h: &mut Html, more: usize, ordinal: Option<i64>) {
        h.raw("<p class=\"cut\">… ")
            .num(more)
            .raw(" more characters.");
        if let Some(o) = ordinal {
            h.raw(" <a href=\"");
            self.record_link(h, o);
            h.raw("\">Show all</a>");
        }
        h.raw("</p>");
    }

    /// Escaped text, cut at `max` characters with the way to see all.
    fn cut_text(&self, h: &mut Html, text: &str, max: usize, ordinal: Option<i64>) {
        match text.char_indices().nth(max) {
            Some((at, _)) => {
                h.text(&text[..at]);
                h.raw("</pre>");
                self.more(h, text[at..].chars().count(), ordinal);
                h.raw("<pre hidden>");
            }
            None => {
                h.text(text);
            }
        }
    }

    fn json(&self, h: &mut Html, v: &Value, max: usize, ordinal: Option<i64>) {
        let text = serde_json::to_string_pretty(v).unwrap_or_default();
        self.cut_text(h, &text, max, ordinal);
    }

    fn block(&mut self, h: &mut Html, i: usize, b: &Value) {
        let ordinal = self.records[i].ordinal;
        match s(b, "type") {
            Some("text") => self.markdown(h, s(b, "text").unwrap_or(""), ordinal),
            Some("thinking") => {
                h.raw("<details class=\"thinking\"><summary>Thinking</summary>");
                self.markdown(h, s(b, "thinking").unwrap_or(""), ordinal);
                h.raw("</details>");
            }
            Some("redacted_thinking") => {
                h.raw("<p class=\"note\">Thinking (redacted)</p>");
            }
            Some("tool_use") => self.tool_use(h, i, b),
            Some("tool_result") => {
                h.raw("<div class=\"tool orphan\"><h3>Tool result</h3>");
                self.tool_result(h, i, b);
                h.raw("</div>");
            }
            Some("image") => image(h, b),
            Some(other) => {
                h.raw("<details class=\"rec\"><summary>")
                    .text(other)
                    .raw(" block</summary><pre>");
                self.json(h, b, CUT_RECORD, ordinal);
                h.raw("</pre></details>");
            }
            None => {
                h.raw("<pre>");
                self.json(h, b, CUT_RECORD, ordinal);
                h.raw("</pre>");
            }
        }
    }

    fn tool_use(&mut self, h: &mut Html, i: usize, b: &Value) {
        let records = self.records;
        let ordinal = records[i].ordinal;
        let name = s(b, "name").unwrap_or("tool");
        let id = s(b, "id").unwrap_or("");
        let input = b.get("input").unwrap_or(&Value::Null);
        let result = self.results.get(id).copied();
        let is_error = result
            .and_then(|(_, r)| r.get("is_error"))
            .and_then(Value::as_bool)
            == Some(true);
        // Loaded when opened: the call's line and its result's line are both stored lines.
        let lazy = ordinal.filter(|_| {
            self.lazy
                && !id.is_empty()
                && result.map_or(true, |(at, _)| records[at].ordinal.is_some())
        });
        h.raw("<details class=\"tool");
        if is_error {
            h.raw(" error");
        }
        h.raw("\"");
        if let Some(o) = lazy {
            self.fold_src(h, |r, h| {
                r.base(h);
                h.raw("/tool/").num(o).raw("?id=").url(id);
                if let Some(at) = result.and_then(|(at, _)| records[at].ordinal) {
                    h.raw("&amp;result=").num(at);
                }
                if let Some(agent) = r.agent {
                    h.raw("&amp;agent=").url(agent);
                }
            });
        }
        h.raw("><summary><span class=\"tname\">")
            .text(name)
            .raw("</span>");
        if let Some(hint) = tool_hint(input) {
            h.raw(" <code>").text(&clip(hint, 120)).raw("</code>");
        }
        let added = result.is_some_and(|(at, _)| records[at].synthetic);
        if result.is_none() {
            h.raw(" <span class=\"badge\">no result</span>");
        } else if is_error {
            h.raw(" <span class=\"badge\">error</span>");
        }
        if added {
            h.raw(" <span class=\"badge\">result added on resume</span>");
        }
        h.raw("</summary>");
        // The result record's anchor (`#m-<uuid>`, where search hits link) stays in the page
        // when the result itself is loaded later.
        let anchor = result
            .map(|(at, _)| at)
            .filter(|at| self.absorbed.contains(at) && self.anchored.insert(*at))
            .and_then(|at| records[at].value.as_ref());
        match lazy {
            Some(o) => self.lazy_body(h, "tool-body lazy", o, anchor),
            None => self.tool_body(h, i, b, anchor),
        }
        // A sub-agent started by this call, expandable in place.
        let agent_id = result
            .and_then(|(at, _)| records[at].value.as_ref())
            .and_then(|v| v.pointer("/toolUseResult/agentId"))
            .and_then(Value::as_str);
        if let Some(agent) = agent_id.filter(|a| self.agents.contains(*a)) {
            self.subagent(h, agent, s(input, "description"));
        }
        h.raw("</details>");
    }

    /// A tool call's input and its result (`anchor`: the result record, when its anchor
    /// goes here).
    fn tool_body(&self, h: &mut Html, i: usize, b: &Value, anchor: Option<&Value>) {
        let ordinal = self.records[i].ordinal;
        let id = s(b, "id").unwrap_or("");
        let input = b.get("input").unwrap_or(&Value::Null);
        h.raw("<div class=\"tin\"><h4>Input</h4><pre>");
        self.json(h, input, CUT, ordinal);
        h.raw("</pre></div>");
        if let Some((at, r)) = self.results.get(id).copied() {
            let result_rec = &self.records[at];
            h.raw(if result_rec.synthetic {
                "<div class=\"tres synthetic\""
            } else {
                "<div class=\"tres\""
            });
            if let Some(v) = anchor {
                self.anchor(h, v);
            }
            h.raw("><h4>Result");
            if let Some(v) = &result_rec.value {
                h.raw(" ");
                Self::time(h, v);
            }
            h.raw("</h4>");
            self.tool_result(h, at, r);
            h.raw("</div>");
        }
    }

    fn subagent(&self, h: &mut Html, agent: &str, description: Option<&str>) {
        h.raw("<details class=\"subagent\" data-src=\"");
        self.base(h);
        h.raw("/agent/")
            .url(agent)
            .raw("?fragment=1\"><summary>Sub-agent <code>")
            .text(agent)
            .raw("</code>");
        if let Some(d) = description {
            h.raw(" — ").text(&clip(d, 120));
        }
        h.raw("</summary><p><a href=\"");
        self.base(h);
        h.raw("/agent/").url(agent).raw("\">Open the sub-agent's conversation</a></p><div class=\"agent-body lazy\" aria-live=\"polite\"></div></details>");
    }

    fn tool_result(&self, h: &mut Html, i: usize, r: &Value) {
        let ordinal = self.records[i].ordinal;
        match r.get("content") {
            Some(Value::String(t)) => {
                h.raw("<pre>");
                self.cut_text(h, t, CUT, ordinal);
                h.raw("</pre>");
            }
            Some(Value::Array(parts)) => {
                for p in parts {
                    match s(p, "type") {
                        Some("text") => {
                            h.raw("<pre>");
                            self.cut_text(h, s(p, "text").unwrap_or(""), CUT, ordinal);
                            h.raw("</pre>");
                        }
                        Some("image") => image(h, p),
                        _ => {
                            h.raw("<pre>");
                            self.json(h, p, CUT_RECORD, ordinal);
                            h.raw("</pre>");
                        }
                    }
                }
            }
            Some(other) => {
                h.raw("<pre>");
                self.json(h, other, CUT, ordinal);
                h.raw("</pre>");
            }
            None => {
                h.raw("<p class=\"note\">(no content)</p>");
            }
        }
    }

    fn system(&mut self, h: &mut Html, i: usize, v: &Value) {
        let subtype = s(v, "subtype").unwrap_or("");
        let ordinal = self.records[i].ordinal;
        match subtype {
            "compact_boundary" | "microcompact_boundary" => {
                h.raw("<div class=\"boundary\" role=\"separator\"");
                self.anchor(h, v);
                h.raw("><span>").raw(if subtype == "compact_boundary" {
                    "Conversation compacted"
                } else {
                    "Tool results cleared (microcompact)"
                });
                if let Some(m) = v
                    .get("compactMetadata")
                    .or_else(|| v.get("microcompactMetadata"))
                {
                    if let Some(t) = s(m, "trigger") {
                        h.raw(" · ").text(t);
                    }
                    if let Some(n) = m.get("preTokens").and_then(Value::as_i64) {
                        h.raw(" · ").num(n).raw(" tokens before");
                    }
                }
                h.raw(" ");
                Self::time(h, v);
                h.raw("</span></div>");
            }
            "api_error" => {
                h.raw("<div class=\"event api-error\"");
                self.anchor(h, v);
                h.raw("><span class=\"kind\">API error</span> ");
                Self::time(h, v);
                if let Some(n) = v.get("retryAttempt").and_then(Value::as_i64) {
                    h.raw(" · retry ").num(n);
                    if let Some(m) = v.get("maxRetries").and_then(Value::as_i64) {
                        h.raw(" of ").num(m);
                    }
                }
                if let Some(t) = s(v, "content") {
                    h.raw("<pre>");
                    self.cut_text(h, t, CUT_RECORD, ordinal);
                    h.raw("</pre>");
                } else if let Some(e) = v
                    .get("error")
                    .filter(|e| e.as_object().map_or(true, |o| !o.is_empty()))
                {
                    h.raw("<pre>");
                    self.json(h, e, CUT_RECORD, ordinal);
                    h.raw("</pre>");
                }
                h.raw("</div>");
            }
            _ => {
                h.raw("<details class=\"event system\"");
                self.anchor(h, v);
                self.record_fold_src(h, i);
                h.raw("><summary><span class=\"kind\">system · ")
                    .text(subtype)
                    .raw("</span> ");
                if let Some(t) = s(v, "content") {
                    h.text(&clip(t, 160)).raw(" ");
                }
                Self::time(h, v);
                h.raw("</summary>");
                self.record_fold_body(h, i, v);
                h.raw("</details>");
            }
        }
    }

    /// Records that are not conversation: titles, tags, snapshots, progress, ….
    fn bookkeeping(&self, h: &mut Html, i: usize, v: &Value) {
        let kind = s(v, "type").unwrap_or("(no type)");
        h.raw("<details class=\"rec\"");
        self.anchor(h, v);
        self.record_fold_src(h, i);
        h.raw("><summary><span class=\"kind\">")
            .text(kind)
            .raw("</span>");
        let value = [
            "customTitle",
            "tag",
            "aiTitle",
            "summary",
            "agentName",
            "lastPrompt",
            "mode",
            "permissionMode",
            "prUrl",
        ]
        .iter()
        .find_map(|k| s(v, k));
        if let Some(value) = value {
            h.raw(" ").text(&clip(value, 160));
        }
        h.raw(" ");
        Self::time(h, v);
        h.raw("</summary>");
        self.record_fold_body(h, i, v);
        h.raw("</details>");
    }
}

/// The short hint a tool call's summary line shows: its command, path, pattern, ….
fn tool_hint(input: &Value) -> Option<&str> {
    [
        "command",
        "file_path",
        "path",
        "pattern",
        "url",
        "query",
        "description",
        "prompt",
        "notebook_path",
    ]
    .iter()
    .find_map(|k| s(input, k))
}

/// An image block, shown inline when it is base64 data of a raster type.
fn image(h: &mut Html, b: &Value) {
    let source = b.get("source").unwrap_or(&Value::Null);
    let media = s(source, "media_type").unwrap_or("");
    let data = s(source, "data").unwrap_or("");
    let raster = matches!(
        media,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    );
    let base64 = !data.is_empty()
        && data
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='));
    if s(source, "type") == Some("base64") && raster && base64 {
        h.raw("<figure class=\"image\"><img alt=\"Image from the transcript\" loading=\"lazy\" src=\"data:")
            .text(media)
            .raw(";base64,")
            .text(data)
            .raw("\"></figure>");
    } else {
        h.raw("<p class=\"note\">Image (")
            .text(if media.is_empty() { "not shown" } else { media })
            .raw(")</p>");
    }
}

/// `2026-01-28T23:05:14.408Z` → `2026-01-28 23:05:14`.
fn short_time(ts: &str) -> String {
    let t = ts.replacen('T', " ", 1);
    match t.find('.') {
        Some(dot) if dot > 10 => t[..dot].to_owned(),
        _ => t.trim_end_matches('Z').to_owned(),
    }
}

/// Token usage of a turn (or totals).
#[derive(Default, Clone, Copy)]
struct Usage {
    input: i64,
    output: i64,
    cache_read: i64,
    cache_write: i64,
    turns: i64,
}

impl Usage {
    fn of(u: &Value) -> Usage {
        let n = |k: &str| u.get(k).and_then(Value::as_i64).unwrap_or(0);
        Usage {
            input: n("input_tokens"),
            output: n("output_tokens"),
            cache_read: n("cache_read_input_tokens"),
            cache_write: n("cache_creation_input_tokens"),
            turns: 1,
        }
    }

    fn add(&mut self, u: &Usage) {
        self.input += u.input;
        self.output += u.output;
        self.cache_read += u.cache_read;
        self.cache_write += u.cache_write;
        self.turns += u.turns;
    }

    fn write(&self, h: &mut Html) {
        h.raw("in ").num(self.input).raw(" · out ").num(self.output);
        if self.cache_read > 0 || self.cache_write > 0 {
            h.raw(" · cache ")
                .num(self.cache_read)
                .raw("/")
                .num(self.cache_write);
        }
    }
}

fn stored_agents(db: &Db, session: &SessionRef) -> Result<HashSet<String>, Error> {
    Ok(db.list_subagents(session)?.into_iter().collect())
}

/// `GET /session/P/S[?view=resume]`.
pub(crate) async fn page_handler(
    state: WebState,
    project: String,
    session_id: String,
    params: ViewParams,
) -> Response {
    blocking_page(move || {
        let resume_view = params.view.as_deref() == Some("resume");
        let db = state.db();
        let session = find_session(db, &project, &session_id)?;
        let info = db.session_info(&session, None).ok();
        let agents = stored_agents(db, &session)?;
        let lines = if resume_view {
            Vec::new()
        } else {
            db.transcript_lines(&session, None)?.unwrap_or_default()
        };
        let resumed = db.resume(&session, &ResumeOptions::default());
        let records: Vec<Rec> = if resume_view {
            match &resumed {
                Ok(r) => r
                    .messages
                    .iter()
                    .map(|m| Rec {
                        synthetic: m.get("synthetic").and_then(Value::as_bool) == Some(true),
                        value: Some(m.clone()),
                        raw: None,
                        ordinal: None,
                    })
                    .collect(),
                Err(_) => Vec::new(),
            }
        } else {
            lines.into_iter().map(Rec::from_line).collect()
        };

        let title = info
            .as_ref()
            .and_then(|i| i.custom_title.clone().or_else(|| i.summary.clone()))
            .unwrap_or_else(|| session.session_id.clone());
        let mut h = Html::new();
        h.raw("<div class=\"session-head\"><h1 id=\"title\">").text(&clip(&title, 200)).raw("</h1><p class=\"meta\">")
            .text(&session.project)
            .raw(" · <code>")
            .text(&session.session_id)
            .raw("</code>");
        if let Some(i) = &info {
            h.raw(" · ").num(i.message_count).raw(" messages · updated <time datetime=\"")
                .text(&crate::time::format_ms(i.last_modified))
                .raw("\" title=\"")
                .text(&crate::time::format_ms(i.last_modified))
                .raw("\">")
                .text(&relative_age(i.last_modified, crate::time::now_ms()))
                .raw("</time>");
            // A team store records which machine (and account) imported or first wrote the
            // session; a SQLite file has only this machine's.
            if let Some(host) = &i.origin_host {
                h.raw("<span class=\"origin\"> · from <code>").text(host).raw("</code>");
                if let Some(user) = &i.origin_user {
                    h.raw(" (").text(user).raw(")");
                }
                h.raw("</span>");
            }
        }
        h.raw("</p><nav class=\"views\" aria-label=\"View\"><a href=\"");
        session_href(&mut h, &session.project, &session.session_id);
        h.raw("\"");
        if !resume_view {
            h.raw(" aria-current=\"page\"");
        }
        h.raw(">Transcript</a><a href=\"");
        session_href(&mut h, &session.project, &session.session_id);
        h.raw("?view=resume\"");
        if resume_view {
            h.raw(" aria-current=\"page\"");
        }
        h.raw(">What the model sees on resume</a></nav></div><div class=\"session-grid\">");

        let mut body = Html::new();
        let mut renderer = Renderer::new(&session, None, &records, agents.clone());
        renderer.lazy = !resume_view;
        if resume_view {
            body.raw("<p class=\"explain\">The conversation as <code>claude --resume</code> sends it to the model: the chain to the last message, repaired. Records the repair pass added are marked <span class=\"badge\">added on resume</span>.</p>");
            match &resumed {
                Ok(r) => repairs(&mut body, r),
                Err(e) => {
                    body.raw("<p class=\"error\">Cannot resume: ").text(&e.to_string()).raw("</p>");
                }
            }
        }
        let total = renderer.all(&mut body);
        panel(&mut h, &session, info.as_ref(), resumed.as_ref().ok(), &agents, &total);
        h.raw("<section class=\"thread\" aria-labelledby=\"title\">").append(&body).raw("</section></div>");
        Ok(page(StatusCode::OK, &title, Nav::None, &h))
    })
    .await
}

/// Axum entry point of [`page_handler`].
pub(crate) async fn session_page(
    State(state): State<WebState>,
    Path((project, session_id)): Path<(String, String)>,
    params: Result<Query<ViewParams>, QueryRejection>,
) -> Response {
    let params = match params {
        Ok(Query(p)) => p,
        Err(e) => return super::bad_query(&e),
    };
    page_handler(state, project, session_id, params).await
}

fn repairs(h: &mut Html, r: &Resumed) {
    if r.repairs.is_empty() {
        h.raw("<p class=\"note\">The repair pass changed nothing.</p>");
        return;
    }
    h.raw("<details class=\"repairs\" open><summary>Repairs (")
        .num(r.repairs.len())
        .raw(")</summary><ul>");
    for rep in &r.repairs {
        let kind = serde_json::to_value(rep.kind).ok();
        h.raw("<li><code>")
            .text(kind.as_ref().and_then(Value::as_str).unwrap_or(""))
            .raw("</code> ");
        if let Some(u) = &rep.uuid {
            h.raw("<a href=\"#m-")
                .url(u)
                .raw("\">")
                .text(u)
                .raw("</a> ");
        }
        h.text(&rep.detail).raw("</li>");
    }
    h.raw("</ul></details>");
}

/// The side panel: the restored state, the sub-agents, the totals and the actions.
fn panel(
    h: &mut Html,
    session: &SessionRef,
    info: Option<&crate::query::SessionInfo>,
    resumed: Option<&Resumed>,
    agents: &HashSet<String>,
    total: &Usage,
) {
    let mut base = Html::new();
    session_href(&mut base, &session.project, &session.session_id);
    h.raw("<aside class=\"panel\" aria-label=\"Session state and actions\">");
    // Actions.
    h.raw("<section><h2>Actions</h2>");
    h.raw("<form class=\"act\" data-action=\"rename\" data-url=\"")
        .append(&base)
        .raw("/rename\"><label>Title <input name=\"title\" required value=\"")
        .text(info.and_then(|i| i.custom_title.as_deref()).unwrap_or(""))
        .raw("\"></label><button type=\"submit\">Rename</button></form>");
    h.raw("<form class=\"act\" data-action=\"tag\" data-url=\"").append(&base).raw("/tag\"><label>Tag <input name=\"tag\" value=\"")
        .text(info.and_then(|i| i.tag.as_deref()).unwrap_or(""))
        .raw("\"></label><button type=\"submit\">Tag</button><button type=\"button\" class=\"clear-tag\">Clear tag</button></form>");
    h.raw("<p class=\"buttons\"><button type=\"button\" class=\"fork\" data-up-to=\"\">Fork the session</button> ")
        .raw("<a class=\"button\" download href=\"").append(&base).raw("/download\">Download .jsonl</a> ")
        .raw("<button type=\"button\" class=\"delete danger\" data-url=\"").append(&base).raw("/delete\" data-name=\"")
        .text(&session.session_id)
        .raw("\">Delete…</button></p>");
    h.raw("<p class=\"status\" role=\"status\" id=\"action-status\"></p>");
    for (label, cmd) in [
        ("Launch", format!("sessiondb launch {}", session.session_id)),
        ("Resume", format!("claude --resume {}", session.session_id)),
    ] {
        h.raw("<div class=\"cmd\"><span>")
            .raw(label)
            .raw("</span><code>")
            .text(&cmd)
            .raw("</code><button type=\"button\" class=\"copy\" data-copy=\"")
            .text(&cmd)
            .raw("\">Copy</button></div>");
    }
    h.raw("</section>");
    // Totals.
    h.raw("<section><h2>Tokens</h2><p class=\"usage total\">");
    total.write(h);
    h.raw("<br>")
        .num(total.turns)
        .raw(" model turns</p></section>");
    // Restored state.
    h.raw("<section class=\"state\"><h2>Restored state</h2>");
    match resumed {
        None => {
            h.raw("<p class=\"note\">The session cannot be resumed.</p>");
        }
        Some(r) => {
            h.raw("<dl><dt>Write target</dt><dd><code>")
                .text(&r.write_target.session_id)
                .raw("</code>");
            if r.write_target.fork {
                h.raw(" (fork)");
            }
            h.raw("</dd><dt>Last message</dt><dd>");
            match &r.leaf_uuid {
                Some(l) => {
                    h.raw("<a href=\"#m-")
                        .url(l)
                        .raw("\"><code>")
                        .text(&clip(l, 13))
                        .raw("</code></a>");
                }
                None => {
                    h.raw("none");
                }
            }
            h.raw("</dd><dt>Interruption</dt><dd>")
                .text(
                    serde_json::to_value(r.interruption)
                        .ok()
                        .as_ref()
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                )
                .raw("</dd>");
            for (k, v) in &r.metadata {
                h.raw("<dt>").text(k).raw("</dt><dd>");
                match v {
                    Value::String(t) => h.text(&clip(t, 300)),
                    other => h.text(&clip(&other.to_string(), 300)),
                };
                h.raw("</dd>");
            }
            h.raw("<dt>File-history snapshots</dt><dd>")
                .num(r.file_history.len())
                .raw("</dd>")
                .raw("<dt>Content replacements</dt><dd>")
                .num(r.content_replacements.len())
                .raw("</dd></dl>");
            if !r.file_history.is_empty() {
                h.raw("<details><summary>Snapshots</summary><ul>");
                for snap in &r.file_history {
                    let id = s(snap, "messageId").unwrap_or("");
                    let files = snap
                        .pointer("/snapshot/trackedFileBackups")
                        .and_then(Value::as_object)
                        .map_or(0, serde_json::Map::len);
                    h.raw("<li><code>")
                        .text(&clip(id, 13))
                        .raw("</code> · ")
                        .num(files)
                        .raw(" files</li>");
                }
                h.raw("</ul></details>");
            }
            if !r.content_replacements.is_empty() {
                h.raw("<details><summary>Replacements</summary><pre>");
                h.text(&clip(
                    &serde_json::to_string_pretty(&r.content_replacements).unwrap_or_default(),
                    CUT_RECORD,
                ));
                h.raw("</pre></details>");
            }
        }
    }
    h.raw("</section>");
    // Sub-agents.
    let mut listed: Vec<(String, Option<String>)> = match resumed {
        Some(r) => r
            .subagents
            .iter()
            .filter_map(|a| {
                a.agent_id
                    .clone()
                    .map(|id| (id, a.description.clone().or(a.agent_type.clone())))
            })
            .collect(),
        None => agents.iter().map(|a| (a.clone(), None)).collect(),
    };
    listed.sort();
    listed.dedup_by(|a, b| a.0 == b.0);
    if !listed.is_empty() {
        h.raw("<section><h2>Sub-agents (")
            .num(listed.len())
            .raw(")</h2><ul class=\"agents\">");
        for (id, what) in &listed {
            h.raw("<li><a href=\"")
                .append(&base)
                .raw("/agent/")
                .url(id)
                .raw("\"><code>")
                .text(id)
                .raw("</code></a>");
            if let Some(w) = what {
                h.raw(" ").text(&clip(w, 80));
            }
            h.raw("</li>");
        }
        h.raw("</ul></section>");
    }
    h.raw("</aside>");
}

/// `GET /session/P/S/agent/A[?fragment=1]`: a sub-agent's conversation (whole page, or the
/// bare conversation the session page inserts in place).
pub(crate) async fn agent_page(
    State(state): State<WebState>,
    Path((project, session_id, agent)): Path<(String, String, String)>,
    params: Result<Query<ViewParams>, QueryRejection>,
) -> Response {
    let fragment = match params {
        Ok(Query(p)) => p.fragment.is_some(),
        Err(e) => return super::bad_query(&e),
    };
    blocking_page(move || {
        let db = state.db();
        let session = find_session(db, &project, &session_id)?;
        let lines = db
            .transcript_lines(&session, Some(&agent))?
            .ok_or_else(|| {
                Error::NotFound(format!("no sub-agent {agent} in session {session_id}"))
            })?;
        let agents = stored_agents(db, &session)?;
        let records: Vec<Rec> = lines.into_iter().map(Rec::from_line).collect();
        let mut body = Html::new();
        let mut renderer = Renderer::new(&session, Some(&agent), &records, agents);
        renderer.lazy = true;
        let total = renderer.all(&mut body);
        if fragment {
            return Ok(fragment_answer(body));
        }
        let mut h = Html::new();
        h.raw("<div class=\"session-head\"><h1 id=\"title\">Sub-agent <code>")
            .text(&agent)
            .raw("</code></h1><p class=\"meta\">of <a href=\"");
        session_href(&mut h, &session.project, &session.session_id);
        h.raw("\">")
            .text(&session.session_id)
            .raw("</a> · ")
            .num(records.len())
            .raw(" records · ");
        total.write(&mut h);
        h.raw("</p></div><section class=\"thread\" aria-labelledby=\"title\">")
            .append(&body)
            .raw("</section>");
        Ok(page(
            StatusCode::OK,
            &format!("Sub-agent {agent}"),
            Nav::None,
            &h,
        ))
    })
    .await
}

#[derive(Deserialize, Default)]
pub(crate) struct RecordParams {
    agent: Option<String>,
    /// Which part of a long record to show (1-based).
    part: Option<usize>,
    /// Send the stored line itself, as a download.
    raw: Option<String>,
    /// Send only what a folded record shows (its JSON, cut), for the session page's script.
    fragment: Option<String>,
}

/// A piece of HTML that the session page's script puts into a fold.
fn fragment_answer(body: Html) -> Response {
    let mut response = body.into_string().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

#[derive(Deserialize)]
pub(crate) struct ToolParams {
    /// The `tool_use` block's id.
    id: String,
    /// The line holding its result, when it has one.
    result: Option<i64>,
    agent: Option<String>,
}

/// `GET /session/P/S/tool/N?id=T[&result=M][&agent=A]`: the input of the tool call `T` in
/// line `N` and its result from line `M`, as the session page shows them when the call's
/// fold is opened. Reads two lines, not the transcript.
pub(crate) async fn tool_fragment(
    State(state): State<WebState>,
    Path((project, session_id, ordinal)): Path<(String, String, i64)>,
    params: Result<Query<ToolParams>, QueryRejection>,
) -> Response {
    let params = match params {
        Ok(Query(p)) => p,
        Err(e) => return super::bad_query(&e),
    };
    blocking_page(move || {
        let db = state.db();
        let session = find_session(db, &project, &session_id)?;
        let agent = params.agent.as_deref();
        let mut records = vec![Rec::from_line(
            db.transcript_line(&session, agent, ordinal)?,
        )];
        if let Some(at) = params.result {
            records.push(Rec::from_line(db.transcript_line(&session, agent, at)?));
        }
        let block = records[0]
            .value
            .as_ref()
            .and_then(|v| v.pointer("/message/content"))
            .and_then(Value::as_array)
            .and_then(|blocks| {
                blocks.iter().find(|b| {
                    s(b, "type") == Some("tool_use") && s(b, "id") == Some(params.id.as_str())
                })
            })
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "no tool call {} in line {}",
                    params.id,
                    ordinal + 1
                ))
            })?;
        let renderer = Renderer::new(&session, params.agent.as_deref(), &records, HashSet::new());
        let mut h = Html::new();
        renderer.tool_body(&mut h, 0, block, None);
        Ok(fragment_answer(h))
    })
    .await
}

/// Characters of a record shown per part of its page: a browser lays out a few hundred
/// kilobytes of text at once quickly, ten megabytes not (a minute here).
const PART: usize = 200_000;

/// `GET /session/P/S/record/N[?agent=A][&part=K][&raw=1]`: one stored line, whole (the
/// "show all" of a cut output), pretty-printed when it is JSON, in parts of [`PART`]
/// characters; with `raw` the line as stored, as a download.
pub(crate) async fn record_page(
    State(state): State<WebState>,
    Path((project, session_id, ordinal)): Path<(String, String, i64)>,
    params: Result<Query<RecordParams>, QueryRejection>,
) -> Response {
    let params = match params {
        Ok(Query(p)) => p,
        Err(e) => return super::bad_query(&e),
    };
    blocking_page(move || {
        let agent = params.agent;
        let session = find_session(state.db(), &project, &session_id)?;
        let line = state
            .db()
            .transcript_line(&session, agent.as_deref(), ordinal)?;
        if params.fragment.is_some() {
            let records = [Rec::from_line(line)];
            let renderer = Renderer::new(&session, agent.as_deref(), &records, HashSet::new());
            let mut h = Html::new();
            match &records[0].value {
                Some(v) => renderer.record_fold_body(&mut h, 0, v),
                None => {
                    h.raw("<pre>");
                    let raw = records[0].raw.as_deref().unwrap_or(b"");
                    renderer.cut_text(
                        &mut h,
                        &String::from_utf8_lossy(raw),
                        CUT_RECORD,
                        Some(ordinal),
                    );
                    h.raw("</pre>");
                }
            }
            return Ok(fragment_answer(h));
        }
        let raw = line.raw;
        if params.raw.is_some() {
            let mut response = raw.into_response();
            let h = response.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            );
            if let Ok(v) = HeaderValue::from_str(&format!(
                "attachment; filename=\"line-{}.json\"",
                ordinal + 1
            )) {
                h.insert(header::CONTENT_DISPOSITION, v);
            }
            return Ok(response);
        }
        let text = match serde_json::from_slice::<Value>(&raw) {
            Ok(v) => serde_json::to_string_pretty(&v).unwrap_or_default(),
            Err(_) => String::from_utf8_lossy(&raw).into_owned(),
        };
        // Part boundaries, in bytes, every PART characters.
        let mut starts = vec![0];
        for (n, (i, _)) in text.char_indices().enumerate() {
            if n > 0 && n % PART == 0 {
                starts.push(i);
            }
        }
        let parts = starts.len();
        let part = params.part.unwrap_or(1).clamp(1, parts);
        let from = starts[part - 1];
        let to = starts.get(part).copied().unwrap_or(text.len());
        let mut link = Html::new();
        session_href(&mut link, &session.project, &session.session_id);
        link.raw("/record/").num(ordinal).raw("?");
        if let Some(a) = &agent {
            link.raw("agent=").url(a).raw("&amp;");
        }
        let mut h = Html::new();
        h.raw("<h1>Line ")
            .num(ordinal + 1)
            .raw("</h1><p class=\"meta\"><a href=\"");
        session_href(&mut h, &session.project, &session.session_id);
        if let Some(a) = &agent {
            h.raw("/agent/").url(a);
        }
        h.raw("\">Back to the conversation</a> · ")
            .num(raw.len())
            .raw(" bytes · <a download href=\"")
            .append(&link)
            .raw("raw=1\">Download the line</a></p>");
        let pager = |h: &mut Html| {
            if parts > 1 {
                h.raw("<nav class=\"pager\" aria-label=\"Parts\">");
                if part > 1 {
                    h.raw("<a rel=\"prev\" href=\"")
                        .append(&link)
                        .raw("part=")
                        .num(part - 1)
                        .raw("\">← Part ")
                        .num(part - 1)
                        .raw("</a>");
                }
                h.raw("<span class=\"part\">Part ")
                    .num(part)
                    .raw(" of ")
                    .num(parts)
                    .raw("</span>");
                if part < parts {
                    h.raw("<a rel=\"next\" href=\"")
                        .append(&link)
                        .raw("part=")
                        .num(part + 1)
                        .raw("\">Part ")
                        .num(part + 1)
                        .raw(" →</a>");
                }
                h.raw("</nav>");
            }
        };
        pager(&mut h);
        h.raw("<pre class=\"whole\">")
            .text(&text[from..to])
            .raw("</pre>");
        pager(&mut h);
        Ok(page(
            StatusCode::OK,
            &format!("Line {}", ordinal + 1),
            Nav::None,
            &h,
        ))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(lines: &[&str]) -> String {
        render_with(lines, false)
    }

    fn render_with(lines: &[&str], lazy: bool) -> String {
        let session = SessionRef {
            key: 1,
            project: "p".into(),
            session_id: "s".into(),
        };
        let records: Vec<Rec> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                Rec::from_line(StoredLine {
                    ordinal: i as i64,
                    raw: l.as_bytes().to_vec(),
                })
            })
            .collect();
        let mut h = Html::new();
        let mut renderer =
            Renderer::new(&session, None, &records, HashSet::from(["a1".to_owned()]));
        renderer.lazy = lazy;
        renderer.all(&mut h);
        h.into_string()
    }

    #[test]
    fn lazy_folds_leave_out_calls_and_records_but_keep_anchors() {
        let lines = [
            r#"{"type":"assistant","uuid":"a","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t 1","name":"Task","input":{"description":"look for secrets"}}]}}"#,
            r#"{"type":"user","uuid":"r","toolUseResult":{"agentId":"a1"},"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t 1","content":"the result text"}]}}"#,
            r#"{"type":"progress","uuid":"p","data":{"hook":"the progress payload"}}"#,
            r#"{"type":"system","subtype":"hook","uuid":"y","content":"ran","detail":"the system payload"}"#,
        ];
        let out = render_with(&lines, true);
        for gone in [
            "the result text",
            "the progress payload",
            "the system payload",
            "<div class=\"tin\">",
        ] {
            assert!(!out.contains(gone), "{gone} in {out}");
        }
        for kept in [
            "<details class=\"tool\" data-src=\"/session/p/s/tool/0?id=t%201&amp;result=1\">",
            "<div class=\"tool-body lazy\" id=\"m-r\"><a class=\"lazy-link\" href=\"/session/p/s/record/0\">Line 1</a></div>",
            "<code>look for secrets</code>",
            "class=\"subagent\"",
            "<details class=\"rec\" id=\"m-p\" data-src=\"/session/p/s/record/2?fragment=1\">",
            "data-src=\"/session/p/s/record/3?fragment=1\"",
        ] {
            assert!(out.contains(kept), "{kept} missing from {out}");
        }
        // Written whole when not lazy (the resume view), the same folds hold everything.
        let whole = render_with(&lines, false);
        assert!(whole.contains("the result text") && whole.contains("the progress payload"));
        assert!(!whole.contains("data-src=\"/session/p/s/tool/"), "{whole}");
    }

    #[test]
    fn hostile_strings_stay_text() {
        let out = render(&[
            r#"{"type":"user","uuid":"u\"><script>alert(1)</script>","message":{"role":"user","content":"<img src=x onerror=alert(1)> [x](javascript:alert(1))"}}"#,
            r#"{"type":"assistant","uuid":"a","message":{"role":"assistant","model":"<b>m</b>","content":[{"type":"tool_use","id":"t1","name":"<svg onload=alert(1)>","input":{"command":"</pre><script>x</script>"}}]}}"#,
            r#"{"type":"user","uuid":"r","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"</pre><iframe src=javascript:alert(1)>"}]}}"#,
            r#"{"type":"<i>weird</i>","customTitle":"<script>t</script>"}"#,
            r#"not json <script>"#,
        ]);
        for bad in [
            "<script",
            "<img",
            "<svg",
            "<iframe",
            "<b>",
            "<i>",
            "href=\"javascript",
            "onerror=alert(1)>",
        ] {
            assert!(!out.contains(bad), "{bad} in {out}");
        }
    }

    #[test]
    fn results_sit_beside_their_calls() {
        let out = render(&[
            r#"{"type":"assistant","uuid":"a","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Task","input":{"description":"look"}}],"usage":{"input_tokens":3,"output_tokens":4}}}"#,
            r#"{"type":"user","uuid":"r","toolUseResult":{"agentId":"a1"},"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]}}"#,
        ]);
        assert_eq!(out.matches("<article").count(), 1, "{out}");
        assert!(out.contains("<div class=\"tres\" id=\"m-r\">"), "{out}");
        assert!(out.contains("class=\"subagent\""), "{out}");
        assert!(out.contains("in 3 · out 4"), "{out}");
    }

    #[test]
    fn long_outputs_are_cut() {
        let big = "x".repeat(CUT + 5);
        let line = format!(
            r#"{{"type":"user","uuid":"u","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"z","content":"{big}"}}]}}}}"#
        );
        let out = render(&[&line]);
        assert!(out.contains("5 more characters."), "cut notice missing");
        assert!(
            out.contains("/session/p/s/record/0"),
            "show-all link missing"
        );
        assert!(out.len() < CUT + 5_000);
    }

    #[test]
    fn boundaries_and_errors_are_marked() {
        let out = render(&[
            r#"{"type":"system","subtype":"compact_boundary","uuid":"b","compactMetadata":{"trigger":"auto","preTokens":5}}"#,
            r#"{"type":"assistant","uuid":"e","isApiErrorMessage":true,"message":{"role":"assistant","content":[{"type":"text","text":"overloaded"}]}}"#,
            r#"{"type":"user","uuid":"i","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}"#,
        ]);
        assert!(
            out.contains("Conversation compacted · auto · 5 tokens before"),
            "{out}"
        );
        assert!(out.contains("msg assistant api-error"), "{out}");
        assert!(out.contains("msg user interrupted"), "{out}");
    }
}
