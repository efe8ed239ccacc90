//! The conversation rendered for reading: records paired (a tool call with its result and
//! the sub-agent it started), an assistant's turn as one card (its streamed records merged),
//! bookkeeping and system records folded into one line per run, token usage totalled.
//! Which records go together is decided first, by [`plan`]; tool calls are drawn by
//! [`tools`]; the pages that use this are in `super::session`.

pub(super) mod cuts;
mod diff;
mod draw;
mod plan;
mod tools;
mod usage;

use plan::{links, Item, Link, Part};
use usage::short_time;
pub(super) use usage::Usage;

use super::html::clip;
use super::html::Html;
use super::markdown;
use super::session_href;
use crate::model::SessionRef;
use crate::query::StoredLine;
pub(crate) use draw::thousands;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Characters of a text, tool input or output shown before it is cut (the rest is one
/// click away on the record's own page).
pub(super) const CUT: usize = 10_000;
/// What opens and closes a conversation's records on the page.
pub(super) const CONVERSATION_START: &str = "<div class=\"conversation\">";
pub(super) const CONVERSATION_END: &str = "</div>";
/// Characters of a bookkeeping record (progress, snapshots, …) shown in its fold.
pub(super) const CUT_RECORD: usize = 1_000;

/// One record to render: its parsed JSON (or why it has none), where it is stored,
/// whether the resume's repair pass added it, and whether it no longer matches its checksum.
pub(super) struct Rec {
    pub(super) value: Option<Value>,
    pub(super) raw: Option<Vec<u8>>,
    pub(super) ordinal: Option<i64>,
    pub(super) synthetic: bool,
    pub(super) damaged: bool,
}

impl Rec {
    /// A stored line. A damaged one is shown as its bytes, marked, never read as a message
    /// (issue 28, item 18): download, resume and the API refuse it.
    pub(super) fn from_line(line: StoredLine) -> Rec {
        let value = if line.damaged {
            None
        } else {
            serde_json::from_slice::<Value>(&line.raw)
                .ok()
                .filter(Value::is_object)
        };
        let raw = if value.is_some() {
            None
        } else {
            Some(line.raw)
        };
        Rec {
            value,
            raw,
            ordinal: Some(line.ordinal),
            synthetic: false,
            damaged: line.damaged,
        }
    }
}

/// What the pages say about a line that fails its checksum, and how to repair it.
pub(super) const DAMAGED: &str = " does not match its checksum: its bytes were damaged in \
    the database after it was stored. <code>sessiondb check --repair</code> reads it again \
    from its source file, when that file still holds it; download, resume and the API \
    refuse the session until then.";

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Renders a list of records: pairs each tool call with its result and the sub-agent it
/// started, totals the token usage.
pub(super) struct Renderer<'a> {
    session: &'a SessionRef,
    /// `Some(agent)` when rendering a sub-agent's transcript (record links point there).
    agent: Option<&'a str>,
    /// Whether messages get a "Fork here" button (the main transcript only).
    forkable: bool,
    /// Whether the bulky folds (tool calls with their results, bookkeeping and system
    /// records) are written empty, with the address the script fills them from when they
    /// are opened ([`tool_fragment`], [`record_page`]'s fragment). Only stored lines can be
    /// read back by ordinal, so the resume view's records are always written whole.
    pub(super) lazy: bool,
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
    pub(super) fn new(
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
            links(v, |link| match link {
                Link::Message(id) => {
                    last_of_message.insert(id.to_owned(), i);
                }
                Link::Call(id) => {
                    calls.insert(id.to_owned());
                }
                Link::Result(id, b) => {
                    results.entry(id.to_owned()).or_insert((i, b));
                }
            });
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
    pub(super) fn record_fold_body(&self, h: &mut Html, i: usize, v: &Value) {
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
    pub(super) fn all(&mut self, h: &mut Html) -> Usage {
        h.raw(CONVERSATION_START);
        let total = self.items(h);
        h.raw(CONVERSATION_END);
        total
    }

    /// Writes every record without the conversation's frame ([`CONVERSATION_START`],
    /// [`CONVERSATION_END`]): one piece of a conversation written piece by piece
    /// ([`cuts`]); answers the token totals.
    pub(super) fn items(&mut self, h: &mut Html) -> Usage {
        let mut total = Usage::default();
        for item in self.plan() {
            match item {
                Item::Card(parts) => self.card(h, &parts, &mut total),
                Item::Run(run) => self.run(h, &run, &mut total),
                Item::One(i) => self.record(h, i, &mut total),
            }
        }
        total
    }

    /// A run of bookkeeping and system records: one line naming what it holds, each record
    /// folded inside.
    fn run(&mut self, h: &mut Html, run: &[usize], total: &mut Usage) {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for &i in run {
            let v = self.records[i].value.as_ref();
            let kind = match v.map(|v| (s(v, "type").unwrap_or("(no type)"), s(v, "subtype"))) {
                Some(("system", Some(sub))) => format!("system · {sub}"),
                Some((kind, _)) => kind.to_owned(),
                None => "(bad line)".to_owned(),
            };
            match counts.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, n)) => *n += 1,
                None => counts.push((kind, 1)),
            }
        }
        h.raw("<details class=\"meta-run\"><summary><span class=\"kind\">")
            .num(run.len())
            .raw(" records</span> ");
        for (n, (kind, count)) in counts.iter().enumerate() {
            if n > 0 {
                h.raw(" · ");
            }
            h.text(kind);
            if *count > 1 {
                h.raw(" ×").num(*count);
            }
        }
        if let Some(v) = run.first().and_then(|i| self.records[*i].value.as_ref()) {
            h.raw(" ");
            Self::time(h, v);
        }
        h.raw("</summary><div class=\"run-body\">");
        for &i in run {
            self.record(h, i, total);
        }
        h.raw("</div></details>");
    }

    fn record(&mut self, h: &mut Html, i: usize, total: &mut Usage) {
        let rec = &self.records[i];
        let Some(v) = &rec.value else {
            let raw = rec.raw.as_deref().unwrap_or(b"");
            h.raw(if rec.damaged {
                "<div class=\"event bad damaged\"><span class=\"kind\">Line "
            } else {
                "<div class=\"event bad\"><span class=\"kind\">Line "
            })
            .num(rec.ordinal.unwrap_or(0) + 1)
            .raw(if rec.damaged {
                DAMAGED
            } else {
                " is not a JSON object (or is nested too deeply to read)"
            })
            .raw("</span><pre>");
            self.cut_text(h, &String::from_utf8_lossy(raw), CUT_RECORD, rec.ordinal);
            h.raw("</pre></div>");
            return;
        };
        let kind = s(v, "type").unwrap_or("");
        match kind {
            "user" | "assistant" => self.card(h, &[Part::Rec(i)], total),
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

    /// One message card: a user's message, or an assistant's turn of one or more records
    /// (`parts`, with the runs of bookkeeping between them). The card's header is its first
    /// record's, its usage the sum of its API messages'; each record keeps its anchor and its
    /// "Fork here".
    fn card(&mut self, h: &mut Html, parts: &[Part], total: &mut Usage) {
        let recs: Vec<usize> = parts
            .iter()
            .filter_map(|p| match p {
                Part::Rec(i) => Some(*i),
                Part::Run(_) => None,
            })
            .collect();
        let Some(&first) = recs.first() else {
            return;
        };
        let records = self.records;
        let Some(v) = records[first].value.as_ref() else {
            return;
        };
        let rec = &records[first];
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
        if let Some(model) = recs.iter().find_map(|i| {
            records[*i]
                .value
                .as_ref()?
                .pointer("/message/model")?
                .as_str()
        }) {
            h.raw("<span class=\"model\">").text(model).raw("</span>");
        }
        if role == "assistant" {
            // Each API message's usage is counted once, at its last record.
            let mut turn = Usage::default();
            for &i in &recs {
                let Some(r) = records[i].value.as_ref() else {
                    continue;
                };
                let turn_end = r
                    .pointer("/message/id")
                    .and_then(Value::as_str)
                    .and_then(|id| self.last_of_message.get(id))
                    .is_none_or(|at| *at == i);
                if let Some(u) = r.pointer("/message/usage").filter(|_| turn_end) {
                    turn.add(&Usage::of(u));
                }
            }
            if turn.turns > 0 {
                total.add(&turn);
                h.raw("<span class=\"usage\" title=\"tokens: input · output · cache read / cache write\">");
                turn.write(h);
                h.raw("</span>");
            }
        }
        if let Some(uuid) = s(v, "uuid") {
            h.raw("<a class=\"perma\" href=\"#m-")
                .url(uuid)
                .raw("\" aria-label=\"Link to this message\">#</a>");
        }
        self.fork_button(h, first);
        h.raw("</header><div class=\"body\">");
        for part in parts {
            match part {
                Part::Rec(i) if *i == first => self.message_body(h, *i, v),
                Part::Rec(i) => {
                    let Some(pv) = records[*i].value.as_ref() else {
                        continue;
                    };
                    h.raw("<div class=\"part\"");
                    self.anchor(h, pv);
                    h.raw(">");
                    // Every record of a turn stays a point to fork at.
                    self.fork_button(h, *i);
                    self.message_body(h, *i, pv);
                    h.raw("</div>");
                }
                Part::Run(run) => self.run(h, run, total),
            }
        }
        h.raw("</div></article>");
    }

    /// "Fork here" (a fork up to record `i`), on the main transcript's stored records.
    fn fork_button(&self, h: &mut Html, i: usize) {
        let rec = &self.records[i];
        let uuid = rec.value.as_ref().and_then(|v| s(v, "uuid"));
        if let Some(uuid) = uuid.filter(|_| self.forkable && !rec.synthetic) {
            h.raw("<button type=\"button\" class=\"fork\" data-up-to=\"")
                .text(uuid)
                .raw("\">Fork here</button>");
        }
    }

    /// A message record's content (text, thinking, tool calls, images, …).
    fn message_body(&mut self, h: &mut Html, i: usize, v: &Value) {
        let ordinal = self.records[i].ordinal;
        let compact = v.get("isCompactSummary").and_then(Value::as_bool) == Some(true);
        let api_error = v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true);
        if compact {
            h.raw("<details class=\"summary\"><summary>Summary the conversation continued from</summary>");
        }
        match v.pointer("/message/content") {
            Some(Value::String(t)) => self.markdown(h, t, ordinal),
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    self.block(h, i, b);
                }
            }
            Some(other) => {
                h.raw("<pre>");
                self.json(h, other, CUT, ordinal);
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
    pub(super) fn cut_text(&self, h: &mut Html, text: &str, max: usize, ordinal: Option<i64>) {
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
            Some("image") => draw::image(h, b),
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
                    .filter(|e| e.as_object().is_none_or(|o| !o.is_empty()))
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

#[cfg(test)]
mod tests;
