//! Tool calls rendered for people: each call's fold line (name and hint) and its body — an
//! `Edit` as a diff, a `Bash` call as a terminal, a `Read` as the numbered excerpt, lists,
//! checklists and links — from the call's input, its result block and the result record's
//! `toolUseResult`. Unknown tools (and anything not of the expected shape) fall back to the
//! input as pretty JSON and the result as text. Everything from the transcript is escaped
//! text; the only links are `http(s)` URLs, with `rel="noopener noreferrer"`.

use super::diff;
use super::draw::{diff_table, file_line, image, link, thousands};
use super::{s, Renderer, CUT, CUT_RECORD};
use crate::serve::web::html::clip;
use crate::serve::web::html::Html;
use crate::serve::web::markdown::safe_link;
use serde_json::Value;

/// Lines of a written file shown before the rest is folded behind "Show all".
const FILE_LINES: usize = 40;

/// What a call's body knows: its input, its result block and the result record.
struct Call<'v> {
    name: &'v str,
    input: &'v Value,
    /// The `tool_result` block, when the call has one.
    result: Option<&'v Value>,
    /// The result record's `toolUseResult` (Claude Code's structured account of the call).
    extra: Option<&'v Value>,
    is_error: bool,
    ordinal: Option<i64>,
    result_ordinal: Option<i64>,
}

impl Call<'_> {
    /// The result's text: a string content, or its text parts joined.
    fn result_text(&self) -> Option<String> {
        match self.result?.get("content")? {
            Value::String(t) => Some(t.clone()),
            Value::Array(parts) => {
                let texts: Vec<&str> = parts.iter().filter_map(|p| s(p, "text")).collect();
                (!texts.is_empty()).then(|| texts.join("\n"))
            }
            _ => None,
        }
    }

    fn extra_str(&self, key: &str) -> Option<&str> {
        self.extra.and_then(|e| s(e, key))
    }
}

impl Renderer<'_> {
    pub(super) fn tool_use(&mut self, h: &mut Html, i: usize, b: &Value) {
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
                && result.is_none_or(|(at, _)| records[at].ordinal.is_some())
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
        if let Some(hint) = tool_hint(name, input) {
            h.raw(" <code>").text(&clip(&hint, 120)).raw("</code>");
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
    /// goes here), rendered for the tool it is.
    pub(crate) fn tool_body(&self, h: &mut Html, i: usize, b: &Value, anchor: Option<&Value>) {
        let id = s(b, "id").unwrap_or("");
        let found = self.results.get(id).copied();
        let result_rec = found.map(|(at, _)| &self.records[at]);
        let call = Call {
            name: s(b, "name").unwrap_or(""),
            input: b.get("input").unwrap_or(&Value::Null),
            result: found.map(|(_, r)| r),
            extra: result_rec
                .and_then(|r| r.value.as_ref())
                .and_then(|v| v.get("toolUseResult")),
            is_error: found
                .and_then(|(_, r)| r.get("is_error"))
                .and_then(Value::as_bool)
                == Some(true),
            ordinal: self.records[i].ordinal,
            result_ordinal: result_rec.and_then(|r| r.ordinal),
        };
        // The input, as the tool's own view where there is one.
        h.raw("<div class=\"tin\">");
        let known = self.input_view(h, &call);
        if !known {
            h.raw("<h4>Input</h4><pre>");
            self.json(h, call.input, CUT, call.ordinal);
            h.raw("</pre>");
        }
        h.raw("</div>");
        if let Some((at, r)) = found {
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
            // A failed call's result is its error message (a shell's has its exit status).
            let viewed = if call.is_error {
                call.name == "Bash" && self.failed_command(h, &call)
            } else {
                self.result_view(h, &call)
            };
            if !viewed {
                self.tool_result(h, at, r);
            }
            h.raw("</div>");
        }
        if known {
            h.raw("<details class=\"raw\"><summary>Input as JSON</summary><pre>");
            self.json(h, call.input, CUT, call.ordinal);
            h.raw("</pre></details>");
        }
    }

    /// The tool's own view of its input; `false` when it has none (or the input is not of
    /// the shape the tool takes).
    fn input_view(&self, h: &mut Html, c: &Call<'_>) -> bool {
        let input = c.input;
        match c.name {
            "Edit" => {
                let (Some(path), Some(old), Some(new)) = (
                    s(input, "file_path"),
                    s(input, "old_string"),
                    s(input, "new_string"),
                ) else {
                    return false;
                };
                file_line(h, path);
                if input.get("replace_all").and_then(Value::as_bool) == Some(true) {
                    h.raw(" <span class=\"badge\">every occurrence</span>");
                }
                h.raw("</p>");
                // Claude Code's own patch has the file's line numbers; else compare the strings.
                let patch = c
                    .extra
                    .filter(|e| s(e, "filePath") == Some(path))
                    .and_then(|e| e.get("structuredPatch"))
                    .and_then(diff::structured_patch);
                match patch {
                    Some(hunks) => diff_table(h, &hunks),
                    None => diff_table(h, &diff::hunks(&diff::lines(old, new))),
                }
                true
            }
            "MultiEdit" => {
                let (Some(path), Some(edits)) = (
                    s(input, "file_path"),
                    input.get("edits").and_then(Value::as_array),
                ) else {
                    return false;
                };
                file_line(h, path);
                h.raw(" · ").num(edits.len()).raw(if edits.len() == 1 {
                    " edit</p>"
                } else {
                    " edits</p>"
                });
                let patch = c
                    .extra
                    .filter(|e| s(e, "filePath") == Some(path))
                    .and_then(|e| e.get("structuredPatch"))
                    .and_then(diff::structured_patch);
                if let Some(hunks) = patch {
                    diff_table(h, &hunks);
                    return true;
                }
                for e in edits {
                    let (Some(old), Some(new)) = (s(e, "old_string"), s(e, "new_string")) else {
                        h.raw("<pre>");
                        self.json(h, e, CUT_RECORD, c.ordinal);
                        h.raw("</pre>");
                        continue;
                    };
                    diff_table(h, &diff::hunks(&diff::lines(old, new)));
                }
                true
            }
            "Write" => {
                let (Some(path), Some(content)) = (s(input, "file_path"), s(input, "content"))
                else {
                    return false;
                };
                file_line(h, path);
                let lines = content.lines().count();
                h.raw(" · ")
                    .text(&thousands(lines as i64))
                    .raw(if lines == 1 { " line" } else { " lines" })
                    .raw(" · ")
                    .text(&thousands(content.len() as i64))
                    .raw(" bytes</p>");
                self.numbered(
                    h,
                    content
                        .split('\n')
                        .enumerate()
                        .map(|(n, l)| (n as u64 + 1, l)),
                    c.ordinal,
                );
                true
            }
            "Bash" => {
                let Some(command) = s(input, "command") else {
                    return false;
                };
                if let Some(d) = s(input, "description") {
                    h.raw("<p class=\"caption\">").text(d).raw("</p>");
                }
                h.raw(
                    "<pre class=\"term cmd\"><span class=\"prompt\" aria-hidden=\"true\">$ </span>",
                );
                self.cut_text(h, command, CUT, c.ordinal);
                h.raw("</pre>");
                if input.get("run_in_background").and_then(Value::as_bool) == Some(true) {
                    h.raw("<p class=\"note\">Run in the background</p>");
                }
                true
            }
            "Read" => {
                let Some(path) = s(input, "file_path") else {
                    return false;
                };
                file_line(h, path);
                let offset = input.get("offset").and_then(Value::as_i64);
                let limit = input.get("limit").and_then(Value::as_i64);
                match (offset, limit) {
                    (Some(o), Some(l)) => {
                        h.raw(" · lines ").num(o).raw("–").num(o + l - 1);
                    }
                    (Some(o), None) => {
                        h.raw(" · from line ").num(o);
                    }
                    (None, Some(l)) => {
                        h.raw(" · first ").num(l).raw(" lines");
                    }
                    (None, None) => {}
                }
                h.raw("</p>");
                true
            }
            "Grep" | "Glob" => {
                let Some(pattern) = s(input, "pattern") else {
                    return false;
                };
                h.raw("<p class=\"file\"><code>")
                    .text(pattern)
                    .raw("</code>");
                for key in ["path", "glob", "type", "output_mode"] {
                    if let Some(v) = s(input, key) {
                        h.raw(" · ").text(key).raw(" <code>").text(v).raw("</code>");
                    }
                }
                h.raw("</p>");
                true
            }
            "TodoWrite" => {
                let Some(todos) = input.get("todos").and_then(Value::as_array) else {
                    return false;
                };
                h.raw("<ul class=\"todos\">");
                for t in todos {
                    let (class, mark, label) = match s(t, "status") {
                        Some("completed") => ("done", "☑", "done"),
                        Some("in_progress") => ("doing", "◐", "in progress"),
                        _ => ("todo", "☐", "to do"),
                    };
                    h.raw("<li class=\"")
                        .raw(class)
                        .raw("\"><span class=\"box\" role=\"img\" aria-label=\"")
                        .raw(label)
                        .raw("\">")
                        .raw(mark)
                        .raw("</span> ")
                        .text(s(t, "content").unwrap_or(""))
                        .raw("</li>");
                }
                h.raw("</ul>");
                true
            }
            "WebFetch" => {
                let Some(url) = s(input, "url") else {
                    return false;
                };
                h.raw("<p class=\"file\">");
                link(h, url, url);
                h.raw("</p>");
                if let Some(p) = s(input, "prompt") {
                    h.raw("<p class=\"caption\">")
                        .text(&clip(p, 500))
                        .raw("</p>");
                }
                true
            }
            "WebSearch" => {
                let Some(query) = s(input, "query") else {
                    return false;
                };
                h.raw("<p class=\"file\">Search <code>")
                    .text(query)
                    .raw("</code></p>");
                true
            }
            "Task" | "Agent" => {
                let Some(prompt) = s(input, "prompt") else {
                    return false;
                };
                h.raw("<p class=\"caption\">");
                if let Some(t) = s(input, "subagent_type") {
                    h.raw("<span class=\"badge\">").text(t).raw("</span> ");
                }
                h.text(s(input, "description").unwrap_or("")).raw("</p>");
                h.raw("<pre class=\"prompt-text\">");
                self.cut_text(h, prompt, CUT, c.ordinal);
                h.raw("</pre>");
                true
            }
            _ => false,
        }
    }

    /// The tool's own view of a successful result; `false` to show the result as text.
    fn result_view(&self, h: &mut Html, c: &Call<'_>) -> bool {
        let extra = c.extra.filter(|e| e.is_object());
        match c.name {
            "Bash" | "BashOutput" => {
                let (Some(out), Some(err)) = (c.extra_str("stdout"), c.extra_str("stderr")) else {
                    return false;
                };
                self.terminal_output(h, c, out, err);
                true
            }
            "Read" => {
                // The excerpt with the file's line numbers: from the record, else from the
                // numbered text Claude Code sent the model (`     3→text`).
                if let Some(file) = extra.and_then(|e| e.get("file")) {
                    if let (Some(content), Some(start)) = (
                        s(file, "content"),
                        file.get("startLine").and_then(Value::as_u64),
                    ) {
                        if let Some(total) = file.get("totalLines").and_then(Value::as_i64) {
                            h.raw("<p class=\"note\">")
                                .text(&thousands(total))
                                .raw(" lines in the file</p>");
                        }
                        self.numbered(
                            h,
                            content
                                .split('\n')
                                .enumerate()
                                .map(|(n, l)| (start + n as u64, l)),
                            c.result_ordinal,
                        );
                        return true;
                    }
                }
                let Some(text) = c.result_text() else {
                    return false;
                };
                let parsed: Option<Vec<(u64, &str)>> = text
                    .lines()
                    .filter(|l| !l.is_empty())
                    .map(numbered_line)
                    .collect();
                match parsed.filter(|p| !p.is_empty()) {
                    Some(lines) => {
                        self.numbered(h, lines.into_iter(), c.result_ordinal);
                        true
                    }
                    None => false,
                }
            }
            "Grep" | "Glob" => {
                let Some(files) = extra
                    .and_then(|e| e.get("filenames"))
                    .and_then(Value::as_array)
                else {
                    return false;
                };
                // In content mode the matched lines are the answer, not the file list.
                if let Some(content) = c.extra_str("content").filter(|t| !t.is_empty()) {
                    h.raw("<pre>");
                    self.cut_text(h, content, CUT, c.result_ordinal);
                    h.raw("</pre>");
                    return true;
                }
                h.raw("<p class=\"note\">")
                    .text(&thousands(files.len() as i64))
                    .raw(if files.len() == 1 { " file" } else { " files" });
                if extra
                    .and_then(|e| e.get("truncated"))
                    .and_then(Value::as_bool)
                    == Some(true)
                {
                    h.raw(" (cut by the tool)");
                }
                h.raw("</p><ul class=\"files\">");
                for f in files.iter().filter_map(Value::as_str).take(500) {
                    h.raw("<li><code>").text(f).raw("</code></li>");
                }
                h.raw("</ul>");
                if files.len() > 500 {
                    h.raw("<p class=\"cut\">… ")
                        .num(files.len() - 500)
                        .raw(" more files.</p>");
                }
                true
            }
            "WebSearch" => {
                let links = search_links(c);
                if links.is_empty() {
                    return false;
                }
                h.raw("<ol class=\"links\">");
                for (title, url) in &links {
                    h.raw("<li>");
                    link(h, url, if title.is_empty() { url } else { title });
                    h.raw(" <span class=\"url\">")
                        .text(&clip(url, 100))
                        .raw("</span></li>");
                }
                h.raw("</ol>");
                self.folded_output(h, c);
                true
            }
            "Task" | "Agent" => {
                let Some(text) = c.result_text() else {
                    return false;
                };
                // A sub-agent's answer is Markdown, as an assistant's text is (sanitised).
                self.markdown(h, &text, c.result_ordinal);
                true
            }
            "Edit" | "MultiEdit" | "Write" | "TodoWrite" => {
                // The view above already shows what changed; the confirmation is one line.
                let Some(text) = c.result_text() else {
                    return false;
                };
                let first = text.lines().next().unwrap_or("");
                h.raw("<p class=\"note\">")
                    .text(&clip(first, 200))
                    .raw("</p>");
                if text.lines().nth(1).is_some() {
                    self.folded_output(h, c);
                }
                true
            }
            _ => false,
        }
    }

    /// A failed shell command: `Exit code N` and the output after it, as a terminal.
    fn failed_command(&self, h: &mut Html, c: &Call<'_>) -> bool {
        let Some(text) = c.result_text() else {
            return false;
        };
        let Some(rest) = text.strip_prefix("Exit code ") else {
            return false;
        };
        let digits = rest
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'-')
            .count();
        let Ok(code) = rest[..digits].parse::<i64>() else {
            return false;
        };
        let output = rest[digits..].strip_prefix('\n').unwrap_or(&rest[digits..]);
        if !output.is_empty() {
            h.raw("<pre class=\"term out\">");
            self.cut_text(h, output, CUT, c.result_ordinal);
            h.raw("</pre>");
        }
        h.raw("<p class=\"exit error\">exit ").num(code).raw("</p>");
        true
    }

    /// The whole result text, folded (for views that show the gist above it).
    fn folded_output(&self, h: &mut Html, c: &Call<'_>) {
        if let Some(text) = c.result_text() {
            h.raw("<details class=\"raw\"><summary>Full output</summary><pre>");
            self.cut_text(h, &text, CUT, c.result_ordinal);
            h.raw("</pre></details>");
        }
    }

    /// A shell command's output: stdout, stderr apart, the exit status and interruption.
    fn terminal_output(&self, h: &mut Html, c: &Call<'_>, out: &str, err: &str) {
        let extra = c.extra.unwrap_or(&Value::Null);
        if out.is_empty() && err.is_empty() {
            h.raw("<p class=\"note\">(no output)</p>");
        }
        if !out.is_empty() {
            h.raw("<pre class=\"term out\">");
            self.cut_text(h, out, CUT, c.result_ordinal);
            h.raw("</pre>");
        }
        if !err.is_empty() {
            h.raw("<pre class=\"term err\" aria-label=\"standard error\">");
            self.cut_text(h, err, CUT, c.result_ordinal);
            h.raw("</pre>");
        }
        let mut status = Vec::new();
        if let Some(code) = extra.get("exitCode").and_then(Value::as_i64) {
            status.push(format!("exit {code}"));
        }
        if extra.get("interrupted").and_then(Value::as_bool) == Some(true) {
            status.push("interrupted".to_owned());
        }
        if let Some(t) = s(extra, "returnCodeInterpretation") {
            status.push(t.to_owned());
        }
        if let Some(id) = s(extra, "backgroundTaskId").or_else(|| s(extra, "shellId")) {
            status.push(format!("background shell {id}"));
        }
        if !status.is_empty() {
            h.raw("<p class=\"exit\">")
                .text(&status.join(" · "))
                .raw("</p>");
        }
    }

    /// Lines with their numbers in a gutter, cut after [`FILE_LINES`] lines (the rest in a
    /// fold) and [`CUT`] characters.
    fn numbered<'l>(
        &self,
        h: &mut Html,
        lines: impl Iterator<Item = (u64, &'l str)>,
        ordinal: Option<i64>,
    ) {
        let lines: Vec<(u64, &str)> = lines.collect();
        // A trailing newline is not a line of its own.
        let n = match lines.last() {
            Some((_, "")) if lines.len() > 1 => lines.len() - 1,
            _ => lines.len(),
        };
        let mut chars = 0;
        let mut write = |h: &mut Html, part: &[(u64, &str)]| -> bool {
            for (no, text) in part {
                chars += text.len();
                if chars > CUT {
                    return false;
                }
                h.raw("<span class=\"ln\" aria-hidden=\"true\">")
                    .num(no)
                    .raw("</span>")
                    .text(text)
                    .raw("\n");
            }
            true
        };
        h.raw("<pre class=\"code\">");
        let mut whole = write(h, &lines[..n.min(FILE_LINES)]);
        h.raw("</pre>");
        if whole && n > FILE_LINES {
            h.raw("<details class=\"more-lines\"><summary>Show all ")
                .text(&thousands(n as i64))
                .raw(" lines</summary><pre class=\"code\">");
            whole = write(h, &lines[FILE_LINES..n]);
            h.raw("</pre></details>");
        }
        if !whole {
            h.raw("<p class=\"cut\">… cut here.");
            if let Some(o) = ordinal {
                h.raw(" <a href=\"");
                self.record_link(h, o);
                h.raw("\">Show all</a>");
            }
            h.raw("</p>");
        }
    }

    pub(super) fn subagent(&self, h: &mut Html, agent: &str, description: Option<&str>) {
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

    /// A result as the tool returned it: text, images, anything else as JSON.
    pub(super) fn tool_result(&self, h: &mut Html, i: usize, r: &Value) {
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
}

/// `     12→text` (Claude Code's numbered excerpt; older versions put a tab after the
/// number) → `(12, "text")`.
fn numbered_line(line: &str) -> Option<(u64, &str)> {
    let t = line.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let no = t[..digits].parse().ok()?;
    let rest = &t[digits..];
    let text = rest.strip_prefix('→').or_else(|| rest.strip_prefix('\t'))?;
    Some((no, text))
}

/// The title and URL of each web search hit: from the record's `results`, else from the
/// `Links: [...]` JSON in the text the model got.
fn search_links(c: &Call<'_>) -> Vec<(String, String)> {
    let pair = |v: &Value| {
        let url = s(v, "url")?;
        safe_link(url).then(|| (s(v, "title").unwrap_or("").to_owned(), url.to_owned()))
    };
    let mut links: Vec<(String, String)> = c
        .extra
        .and_then(|e| e.get("results"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("content").and_then(Value::as_array))
        .flatten()
        .filter_map(pair)
        .collect();
    if links.is_empty() {
        if let Some(text) = c.result_text() {
            for line in text.lines() {
                if let Some(json) = line.strip_prefix("Links: ") {
                    if let Ok(Value::Array(items)) = serde_json::from_str::<Value>(json) {
                        links.extend(items.iter().filter_map(pair));
                    }
                }
            }
        }
    }
    links
}

/// The short hint a tool call's fold line shows: its command, path, pattern, ….
fn tool_hint(name: &str, input: &Value) -> Option<String> {
    if name == "TodoWrite" {
        let todos = input.get("todos").and_then(Value::as_array)?;
        let done = todos
            .iter()
            .filter(|t| s(t, "status") == Some("completed"))
            .count();
        return Some(format!("{done} of {} done", todos.len()));
    }
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
    .map(|t| t.lines().next().unwrap_or("").to_owned())
}
