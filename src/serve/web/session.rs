//! The session pages: the conversation in two views — the transcript (every stored record,
//! in file order) and what the model sees on resume (the repaired chain, repair additions
//! marked) — beside a panel with the restored state and the actions; a sub-agent's
//! conversation, one whole record, and the fragments the page's folds are filled from.
//! The conversation itself is drawn by [`super::render`].

use super::conversation::Outline;
use super::html::Html;
use super::pages::{clip, home, short_path, time_element, LIVE_MS};
use super::render::{thousands, Rec, Renderer, CUT_RECORD};
use super::usage::SessionUsage;
use super::{
    find_session, heavy_page, heavy_stream, page, page_start, session_href, Nav, WebState, PAGE_END,
};
use crate::backend::Db;
use crate::error::Error;
use crate::model::SessionRef;
use crate::query::SessionInfo;
use crate::resume::{ResumeOptions, Resumed};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashSet;

#[derive(Deserialize, Default)]
pub(crate) struct ViewParams {
    view: Option<String>,
    fragment: Option<String>,
}

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
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
    if params.view.as_deref() == Some("resume") {
        resume_page(state, project, session_id).await
    } else {
        transcript_page(state, project, session_id, params.fragment.is_some()).await
    }
}

/// The transcript view (every stored record), or with `fragment` the bare conversation the
/// page's script puts in place when the session grows: written as its rows are read
/// ([`super::conversation`]).
async fn transcript_page(
    state: WebState,
    project: String,
    session_id: String,
    fragment: bool,
) -> Response {
    heavy_stream(state.heavy(), move |sink| {
        let db = state.db();
        let session = find_session(db, &project, &session_id)?;
        // Read before the transcript: a write after this is announced to the page.
        let live_state = super::live::session_state(db, &project, &session_id);
        let info = db.session_info(&session, None).ok();
        let agents = stored_agents(db, &session)?;
        let outline = Outline::read(db, &session)?;
        sink.header(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        if fragment {
            let mut h = Html::new();
            outline.write(db, &session, &agents, &mut h, &mut |piece| {
                sink.write(piece.as_bytes())
            })?;
            return sink.write(h.take().as_bytes());
        }
        // The resume is built for the panel, and dropped before the conversation is read.
        let resumed = db.resume(&session, &ResumeOptions::default());
        let usage = SessionUsage::read(db, &session)?;
        let title = title_of(&session, info.as_ref());
        let mut h = page_start(&title, Nav::None);
        head(&mut h, &session, info.as_ref(), &title, false);
        panel(
            &mut h,
            &session,
            info.as_ref(),
            resumed.as_ref().ok(),
            &agents,
            &usage,
        );
        drop(resumed);
        h.raw("<section class=\"thread\" aria-labelledby=\"title\"");
        // The script follows the session's growth from here (server-sent events).
        h.raw(" data-live=\"");
        session_href(&mut h, &session.project, &session.session_id);
        h.raw("/events");
        if let Some(state) = &live_state {
            h.raw("?since=").url(state);
        }
        h.raw("\">");
        toggles(&mut h);
        outline.write(db, &session, &agents, &mut h, &mut |piece| {
            sink.write(piece.as_bytes())
        })?;
        h.raw("</section></div>").raw(PAGE_END);
        sink.write(h.take().as_bytes())
    })
    .await
}

/// What the model sees on resume: the repaired chain, built whole (it is the resume's
/// result), in one of the bounded places.
async fn resume_page(state: WebState, project: String, session_id: String) -> Response {
    heavy_page(state.heavy(), move || {
        let db = state.db();
        let session = find_session(db, &project, &session_id)?;
        let info = db.session_info(&session, None).ok();
        let agents = stored_agents(db, &session)?;
        let resumed = db.resume(&session, &ResumeOptions::default());
        let records: Vec<Rec> = match &resumed {
            Ok(r) => r
                .messages
                .iter()
                .map(|m| Rec {
                    synthetic: m.get("synthetic").and_then(Value::as_bool) == Some(true),
                    value: Some(m.clone()),
                    raw: None,
                    ordinal: None,
                    damaged: false,
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        let title = title_of(&session, info.as_ref());
        let mut h = Html::new();
        head(&mut h, &session, info.as_ref(), &title, true);
        let mut body = Html::new();
        let mut renderer = Renderer::new(&session, None, &records, agents.clone());
        body.raw("<p class=\"explain\">The conversation as <code>claude --resume</code> sends it to the model: the chain to the last message, repaired. Records the repair pass added are marked <span class=\"badge\">added on resume</span>.</p>");
        match &resumed {
            Ok(r) => repairs(&mut body, r),
            Err(e) => {
                body.raw("<p class=\"error\">Cannot resume: ").text(&e.to_string()).raw("</p>");
            }
        }
        renderer.all(&mut body);
        let usage = SessionUsage::read(db, &session)?;
        panel(&mut h, &session, info.as_ref(), resumed.as_ref().ok(), &agents, &usage);
        h.raw("<section class=\"thread\" aria-labelledby=\"title\">");
        toggles(&mut h);
        h.append(&body).raw("</section></div>");
        Ok(page(StatusCode::OK, &title, Nav::None, &h))
    })
    .await
}

/// A session's title on its page: its custom title, else its summary, else its id.
fn title_of(session: &SessionRef, info: Option<&SessionInfo>) -> String {
    info.and_then(|i| i.custom_title.clone().or_else(|| i.summary.clone()))
        .unwrap_or_else(|| session.session_id.clone())
}

/// The session page's head: title, where and when, the two views' links; opens the grid.
fn head(
    h: &mut Html,
    session: &SessionRef,
    info: Option<&SessionInfo>,
    title: &str,
    resume_view: bool,
) {
    let now = crate::time::now_ms();
    h.raw("<div class=\"session-head\"><h1 id=\"title\">")
        .text(&clip(title, 200))
        .raw("</h1><p class=\"meta\">");
    match info.and_then(|i| i.cwd.as_deref()) {
        Some(cwd) => {
            h.raw("<span class=\"project\" title=\"")
                .text(cwd)
                .raw(" (")
                .text(&session.project)
                .raw(")\">")
                .text(&short_path(cwd, home().as_deref()))
                .raw("</span>");
        }
        None => {
            h.text(&session.project);
        }
    }
    h.raw(" · <code>").text(&session.session_id).raw("</code>");
    if let Some(i) = info {
        h.raw(" · ")
            .text(&thousands(i.message_count))
            .raw(" messages · updated ");
        time_element(h, i.last_modified, now);
        if now - i.last_modified < LIVE_MS {
            h.raw(
                " <span class=\"live-mark\" title=\"written in the last two minutes\">live</span>",
            );
        }
        // A team store records which machine (and account) imported or first wrote the
        // session; a SQLite file has only this machine's.
        if let Some(host) = &i.origin_host {
            h.raw("<span class=\"origin\"> · from <code>")
                .text(host)
                .raw("</code>");
            if let Some(user) = &i.origin_user {
                h.raw(" (").text(user).raw(")");
            }
            h.raw("</span>");
        }
    }
    h.raw("</p><nav class=\"views\" aria-label=\"View\"><a href=\"");
    session_href(h, &session.project, &session.session_id);
    h.raw("\"");
    if !resume_view {
        h.raw(" aria-current=\"page\"");
    }
    h.raw(">Transcript</a><a href=\"");
    session_href(h, &session.project, &session.session_id);
    h.raw("?view=resume\"");
    if resume_view {
        h.raw(" aria-current=\"page\"");
    }
    h.raw(">What the model sees on resume</a></nav></div><div class=\"session-grid\">");
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

/// The switches that show or hide thinking, tool calls and bookkeeping (hidden until the
/// script, which works them, shows them).
pub(crate) fn toggles(h: &mut Html) {
    h.raw("<div class=\"toggles\" hidden aria-label=\"Show\">");
    for (name, label) in [
        ("thinking", "Thinking"),
        ("tools", "Tool calls"),
        ("meta", "Bookkeeping records"),
    ] {
        h.raw("<label><input type=\"checkbox\" checked data-toggle=\"")
            .raw(name)
            .raw("\"> ")
            .raw(label)
            .raw("</label>");
    }
    h.raw("</div>");
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
    usage: &SessionUsage,
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
    // The session's usage, from the projection (the numbers `sessiondb stats` adds up).
    usage.write(h);
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
    heavy_stream(state.heavy(), move |sink| {
        let db = state.db();
        let session = find_session(db, &project, &session_id)?;
        let outline = Outline::read_agent(db, &session, &agent)?;
        let agents = stored_agents(db, &session)?;
        sink.header(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        let mut h = Html::new();
        if fragment {
            outline.write(db, &session, &agents, &mut h, &mut |piece| {
                sink.write(piece.as_bytes())
            })?;
            return sink.write(h.take().as_bytes());
        }
        // The head shows the conversation's totals: a first rendering, thrown away, counts
        // them (a piece at a time, as the second).
        let total = outline.write(db, &session, &agents, &mut h, &mut |_| Ok(()))?;
        let mut h = page_start(&format!("Sub-agent {agent}"), Nav::None);
        h.raw("<div class=\"session-head\"><h1 id=\"title\">Sub-agent <code>")
            .text(&agent)
            .raw("</code></h1><p class=\"meta\">of <a href=\"");
        session_href(&mut h, &session.project, &session.session_id);
        h.raw("\">")
            .text(&session.session_id)
            .raw("</a> · ")
            .text(&thousands(outline.len() as i64))
            .raw(" records · ");
        total.write(&mut h);
        h.raw("</p></div><section class=\"thread\" aria-labelledby=\"title\">");
        toggles(&mut h);
        outline.write(db, &session, &agents, &mut h, &mut |piece| {
            sink.write(piece.as_bytes())
        })?;
        h.raw("</section>").raw(PAGE_END);
        sink.write(h.take().as_bytes())
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
    heavy_page(state.heavy(), move || {
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
    heavy_page(state.heavy(), move || {
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
                    if records[0].damaged {
                        h.raw("<p class=\"damaged\">This line")
                            .raw(super::render::DAMAGED)
                            .raw("</p>");
                    }
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
        let damaged = line.damaged;
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
        if damaged {
            h.raw("<p class=\"damaged\">This line")
                .raw(super::render::DAMAGED)
                .raw("</p>");
        }
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
