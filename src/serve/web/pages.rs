//! The sessions and search pages, the login form, the download and the actions.

pub(crate) use super::html::clip;
use super::html::Html;
use super::render::thousands;
use super::{
    blocking_json, blocking_page, find_session, json_ok, page, same_origin_json, Nav, WebState,
};
use crate::backend::Db;
use crate::error::Error;
use crate::model::SessionRef;
use crate::query::{SessionFilter, SessionInfo};
use crate::search::SearchQuery;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use serde::Deserialize;

/// Sessions per page unless `limit` says otherwise.
const PAGE_SIZE: i64 = 50;

#[derive(Deserialize, Default)]
pub(crate) struct SessionsParams {
    project: Option<String>,
    tag: Option<String>,
    name: Option<String>,
    branch: Option<String>,
    since: Option<String>,
    until: Option<String>,
    page: Option<i64>,
    limit: Option<i64>,
}

fn nonempty(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A `since`/`until` value: a date from the form's date input, or anything
/// `sessiondb sessions --since` takes. `until` as a bare date means the end of that day.
fn time_value(text: &str, end_of_day: bool) -> Result<i64, Error> {
    let ms = crate::time::parse_time_filter(text).ok_or_else(|| {
        Error::Invalid(format!(
            "{text:?} is not a date (try 2026-01-31, 3d or 12h)"
        ))
    })?;
    let bare_date = text.len() == 10 && text.as_bytes().get(4) == Some(&b'-');
    Ok(if end_of_day && bare_date {
        ms + 86_400_000 - 1
    } else {
        ms
    })
}

/// "5 min ago" for a time `now - ms` ago.
pub(crate) fn relative_age(ms: i64, now: i64) -> String {
    let s = (now - ms).max(0) / 1000;
    match s {
        0..=59 => "just now".to_owned(),
        60..=3599 => format!("{} min ago", s / 60),
        3600..=86_399 => format!("{} h ago", s / 3600),
        86_400..=2_591_999 => format!("{} d ago", s / 86_400),
        2_592_000..=31_535_999 => format!("{} mo ago", s / 2_592_000),
        _ => format!("{} y ago", s / 31_536_000),
    }
}

/// A project's folder as a terminal prompt shows it: under this user's home `~/…`, under
/// another user's home (a session from another machine or account) `~name/…`, else whole.
pub(crate) fn short_path(path: &str, home: Option<&str>) -> String {
    if let Some(home) = home
        .map(|h| h.trim_end_matches('/'))
        .filter(|h| !h.is_empty())
    {
        if path == home {
            return "~".to_owned();
        }
        if let Some(rest) = path.strip_prefix(home).and_then(|r| r.strip_prefix('/')) {
            return format!("~/{rest}");
        }
    }
    for base in ["/home/", "/Users/"] {
        if let Some(rest) = path.strip_prefix(base) {
            let (user, below) = rest.split_once('/').unwrap_or((rest, ""));
            if !user.is_empty() {
                return if below.is_empty() {
                    format!("~{user}")
                } else {
                    format!("~{user}/{below}")
                };
            }
        }
    }
    path.to_owned()
}

/// The home folder the server runs under (for [`short_path`]).
pub(crate) fn home() -> Option<String> {
    std::env::var("HOME").ok()
}

/// A time as the pages write it: the relative age, the exact time (UTC) on hover; the
/// script rewrites the hover text in the reader's local time.
pub(crate) fn time_element(h: &mut Html, ms: i64, now: i64) {
    let exact = crate::time::format_ms(ms);
    h.raw("<time datetime=\"")
        .text(&exact)
        .raw("\" title=\"")
        .text(&exact)
        .raw("\" data-age=\"1\">")
        .text(&relative_age(ms, now))
        .raw("</time>");
}

/// `GET /`: the catalog, newest first, with filters and paging.
pub(crate) async fn sessions(
    State(state): State<WebState>,
    params: Result<Query<SessionsParams>, QueryRejection>,
) -> Response {
    let p = match params {
        Ok(Query(p)) => p,
        Err(e) => return super::bad_query(&e),
    };
    blocking_page(move || {
        let limit = p
            .limit
            .filter(|n| (1..=1000).contains(n))
            .unwrap_or(PAGE_SIZE);
        let page_no = p.page.filter(|n| *n > 0).unwrap_or(1);
        let project = nonempty(&p.project);
        let tag = nonempty(&p.tag);
        let name = nonempty(&p.name);
        let branch = nonempty(&p.branch);
        let since = nonempty(&p.since);
        let until = nonempty(&p.until);
        let db = state.db();
        // Read before the list: a write after this is announced to the page.
        let marker = db.change_marker().ok();
        let filter = SessionFilter {
            project: project.clone(),
            tag: tag.clone(),
            name: name.clone(),
            branch: branch.clone(),
            since: since.as_deref().map(|t| time_value(t, false)).transpose()?,
            until: until.as_deref().map(|t| time_value(t, true)).transpose()?,
            limit: Some(limit + 1),
            offset: Some((page_no - 1).saturating_mul(limit)),
            ..SessionFilter::default()
        };
        let mut list = db.list_sessions(&filter)?;
        let more = list.len() as i64 > limit;
        list.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        let projects = db.project_keys()?;
        let tags = db.tags()?;

        let mut h = Html::new();
        h.raw("<h1>Sessions</h1>");
        h.raw(
            "<form class=\"filters\" method=\"get\" action=\"/\" aria-label=\"Filter sessions\">",
        );
        project_select(&mut h, &projects, project.as_deref());
        text_input(&mut h, "Tag", "tag", tag.as_deref(), Some("tags"));
        h.raw("<datalist id=\"tags\">");
        for t in &tags {
            h.raw("<option value=\"").text(t).raw("\">");
        }
        h.raw("</datalist>");
        text_input(&mut h, "Name", "name", name.as_deref(), None);
        text_input(&mut h, "Branch", "branch", branch.as_deref(), None);
        h.raw("<label>From <input type=\"date\" name=\"since\" value=\"")
            .text(since.as_deref().unwrap_or(""))
            .raw("\"></label><label>To <input type=\"date\" name=\"until\" value=\"")
            .text(until.as_deref().unwrap_or(""))
            .raw(
                "\"></label><button type=\"submit\">Filter</button> <a href=\"/\">Clear</a></form>",
            );

        // The part of the page that follows the store (see `live`).
        h.raw("<div id=\"listing\" data-live=\"/events");
        if let Some(m) = &marker {
            h.raw("?since=").url(m);
        }
        h.raw("\">");
        if list.is_empty() {
            h.raw("<p class=\"empty\">No sessions match.</p>");
        } else {
            session_table(&mut h, &list, crate::time::now_ms());
        }
        // Paging links keep the filters.
        let mut base = Html::new();
        base.raw("/?");
        for (k, v) in [
            ("project", &project),
            ("tag", &tag),
            ("name", &name),
            ("branch", &branch),
            ("since", &since),
            ("until", &until),
        ] {
            if let Some(v) = v {
                base.text(k).raw("=").url(v).raw("&amp;");
            }
        }
        if p.limit.is_some() {
            base.raw("limit=").num(limit).raw("&amp;");
        }
        h.raw("<nav class=\"pager\" aria-label=\"Pages\">");
        if page_no > 1 {
            h.raw("<a rel=\"prev\" href=\"")
                .append(&base)
                .raw("page=")
                .num(page_no - 1)
                .raw("\">← Newer</a>");
        }
        h.raw("<span>Page ").num(page_no).raw("</span>");
        if more {
            h.raw("<a rel=\"next\" href=\"")
                .append(&base)
                .raw("page=")
                .num(page_no.saturating_add(1))
                .raw("\">Older →</a>");
        }
        h.raw("</nav></div>");
        Ok(page(StatusCode::OK, "Sessions", Nav::Sessions, &h))
    })
    .await
}

/// The filter forms' project menu: every stored project, `selected` marked.
pub(crate) fn project_select(h: &mut Html, projects: &[String], selected: Option<&str>) {
    h.raw("<label>Project <select name=\"project\"><option value=\"\">all</option>");
    for key in projects {
        h.raw("<option value=\"").text(key).raw("\"");
        if selected == Some(key.as_str()) {
            h.raw(" selected");
        }
        h.raw(">").text(key).raw("</option>");
    }
    h.raw("</select></label>");
}

fn text_input(
    h: &mut Html,
    label: &'static str,
    name: &'static str,
    value: Option<&str>,
    list: Option<&'static str>,
) {
    h.raw("<label>")
        .raw(label)
        .raw(" <input type=\"text\" name=\"")
        .raw(name)
        .raw("\" value=\"")
        .text(value.unwrap_or(""))
        .raw("\"");
    if let Some(list) = list {
        h.raw(" list=\"").raw(list).raw("\"");
    }
    h.raw("></label>");
}

/// A session written to less than this long ago is marked "live" (Claude Code writes a
/// line at least every few seconds while it works).
pub(crate) const LIVE_MS: i64 = 120_000;

fn session_table(h: &mut Html, list: &[SessionInfo], now: i64) {
    let home = home();
    h.raw("<table class=\"sessions\"><thead><tr><th scope=\"col\">Title</th><th scope=\"col\">Project</th>")
        .raw("<th scope=\"col\">Tag</th><th scope=\"col\">Branch</th><th scope=\"col\">Updated</th>")
        .raw("<th scope=\"col\" class=\"n\">Messages</th><th scope=\"col\" class=\"n\">Sub-agents</th>")
        .raw("<th scope=\"col\">Source</th></tr></thead><tbody>");
    for s in list {
        let title = s.title().unwrap_or(&s.session_id);
        h.raw("<tr><td class=\"title\"><a href=\"");
        super::session_href(h, &s.project, &s.session_id);
        h.raw("\">")
            .text(&clip(title, 160))
            .raw("</a><div class=\"sid\">")
            .text(&s.session_id)
            .raw("</div></td><td data-label=\"Project\" class=\"project\"><a href=\"/?project=")
            .url(&s.project)
            .raw("\" title=\"")
            .text(s.cwd.as_deref().unwrap_or(&s.project))
            .raw("\">")
            .text(
                &s.cwd
                    .as_deref()
                    .map_or_else(|| s.project.clone(), |c| short_path(c, home.as_deref())),
            )
            .raw("</a></td><td data-label=\"Tag\">");
        if let Some(tag) = s.tag.as_deref().filter(|t| !t.is_empty()) {
            h.raw("<a class=\"tag\" href=\"/?tag=")
                .url(tag)
                .raw("\">")
                .text(tag)
                .raw("</a>");
        }
        h.raw("</td><td data-label=\"Branch\">")
            .text(s.git_branch.as_deref().unwrap_or(""))
            .raw("</td><td data-label=\"Updated\">");
        time_element(h, s.last_modified, now);
        if now - s.last_modified < LIVE_MS {
            h.raw(
                " <span class=\"live-mark\" title=\"written in the last two minutes\">live</span>",
            );
        }
        h.raw("</td><td class=\"n\" data-label=\"Messages\">")
            .text(&thousands(s.message_count))
            .raw("</td><td class=\"n\" data-label=\"Sub-agents\">");
        if s.has_subagents {
            h.text(&thousands(s.subagent_count));
        }
        h.raw("</td><td data-label=\"Source\" class=\"src-")
            .text(&s.source_state)
            .raw("\">")
            .text(&s.source_state)
            .raw("</td></tr>");
    }
    h.raw("</tbody></table>");
}

#[derive(Deserialize, Default)]
pub(crate) struct SearchParams {
    q: Option<String>,
    project: Option<String>,
    tag: Option<String>,
    role: Option<String>,
    tools: Option<String>,
    limit: Option<i64>,
}

/// Marks around a hit's matched words inside a snippet: private-use characters, escaped
/// along with the text and only then turned into `<mark>`.
const MARK_OPEN: &str = "\u{E000}";
const MARK_CLOSE: &str = "\u{E001}";

/// `GET /search`: the form and, with `q`, the hits.
pub(crate) async fn search(
    State(state): State<WebState>,
    params: Result<Query<SearchParams>, QueryRejection>,
) -> Response {
    let p = match params {
        Ok(Query(p)) => p,
        Err(e) => return super::bad_query(&e),
    };
    blocking_page(move || {
        let q = nonempty(&p.q);
        let project = nonempty(&p.project);
        let tag = nonempty(&p.tag);
        let role = nonempty(&p.role).filter(|r| r == "user" || r == "assistant");
        let tools = p.tools.is_some();
        let projects = state.db().project_keys()?;
        let mut h = Html::new();
        h.raw("<h1>Search</h1><form class=\"filters\" method=\"get\" action=\"/search\" role=\"search\">")
            .raw("<label class=\"wide\">Words <input type=\"search\" name=\"q\" autofocus value=\"")
            .text(q.as_deref().unwrap_or(""))
            .raw("\"></label>");
        project_select(&mut h, &projects, project.as_deref());
        text_input(&mut h, "Tag", "tag", tag.as_deref(), None);
        h.raw("<label>Role <select name=\"role\">");
        for (v, label) in [("", "any"), ("user", "user"), ("assistant", "assistant")] {
            h.raw("<option value=\"").raw(v).raw("\"");
            if role.as_deref().unwrap_or("") == v {
                h.raw(" selected");
            }
            h.raw(">").raw(label).raw("</option>");
        }
        h.raw("</select></label><label class=\"check\"><input type=\"checkbox\" name=\"tools\" value=\"1\"");
        if tools {
            h.raw(" checked");
        }
        h.raw("> tool calls and results</label><button type=\"submit\">Search</button></form>");
        if let Some(text) = q {
            let query = SearchQuery {
                text,
                project: project.as_deref().map(|p| crate::paths::project_argument(p).0),
                tag,
                role,
                tools,
                limit: Some(p.limit.filter(|n| (1..=500).contains(n)).unwrap_or(100)),
                marks: Some((MARK_OPEN.to_owned(), MARK_CLOSE.to_owned())),
            };
            // As the API's search: a write that fails (a full disk) must not fail the read;
            // the queued lines are left out.
            let (hits, _caught_up) = state.db().search(&query)?;
            h.raw("<p class=\"count\">").num(hits.len()).raw(if hits.len() == 1 { " hit" } else { " hits" }).raw("</p>");
            h.raw("<ol class=\"hits\">");
            let now = crate::time::now_ms();
            for hit in &hits {
                h.raw("<li><a class=\"hit\" href=\"");
                super::session_href(&mut h, &hit.project, &hit.session_id);
                if let Some(agent) = &hit.agent_id {
                    h.raw("/agent/").url(agent);
                }
                if let Some(uuid) = &hit.uuid {
                    h.raw("#m-").url(uuid);
                }
                h.raw("\">").text(&clip(hit.title.as_deref().unwrap_or(&hit.session_id), 120)).raw("</a> <span class=\"meta\">")
                    .text(&hit.role);
                if let Some(agent) = &hit.agent_id {
                    h.raw(" · sub-agent ").text(agent);
                }
                if let Some(ts) = &hit.timestamp {
                    match crate::time::parse_iso8601_ms(ts) {
                        Some(ms) => {
                            h.raw(" · ");
                            time_element(&mut h, ms, now);
                        }
                        None => {
                            h.raw(" · <time>").text(ts).raw("</time>");
                        }
                    }
                }
                h.raw(" · ").text(&hit.project).raw("</span><p class=\"snippet\">");
                snippet(&mut h, &hit.snippet);
                h.raw("</p></li>");
            }
            h.raw("</ol>");
        }
        Ok(page(StatusCode::OK, "Search", Nav::Search, &h))
    })
    .await
}

/// Writes a snippet with its marks as `<mark>` (balanced even when the text itself holds
/// the mark characters).
fn snippet(h: &mut Html, text: &str) {
    let mut open = false;
    let mut rest = text;
    while let Some(i) = rest.find(['\u{E000}', '\u{E001}']) {
        h.text(&rest[..i]);
        let is_open = rest[i..].starts_with(MARK_OPEN);
        if is_open && !open {
            h.raw("<mark>");
            open = true;
        } else if !is_open && open {
            h.raw("</mark>");
            open = false;
        }
        rest = &rest[i + MARK_OPEN.len()..];
    }
    h.text(rest);
    if open {
        h.raw("</mark>");
    }
}

#[derive(Deserialize, Default)]
pub(crate) struct LoginParams {
    next: Option<String>,
}

/// `GET /login`: the token form (the script posts it and follows `next`).
pub(crate) async fn login_form(params: Result<Query<LoginParams>, QueryRejection>) -> Response {
    let next = params
        .ok()
        .and_then(|Query(p)| p.next)
        .filter(|n| crate::serve::auth::safe_next(n).is_some())
        .unwrap_or_else(|| "/".to_owned());
    let mut h = Html::new();
    h.raw("<h1>Log in</h1><form id=\"login\" class=\"login\" data-next=\"")
        .text(&next)
        .raw("\"><p>This server needs its token (the one given to <code>sessiondb serve</code>).</p>")
        .raw("<label>Token <input type=\"password\" name=\"token\" autocomplete=\"current-password\" required autofocus></label>")
        .raw("<button type=\"submit\">Log in</button><p class=\"error\" role=\"alert\" id=\"login-error\"></p></form>");
    page(StatusCode::OK, "Log in", Nav::None, &h)
}

/// `GET /session/P/S/download`: the main transcript as stored, as a `.jsonl` attachment,
/// sent as it is read ([`crate::serve::stream`]).
pub(crate) async fn download(
    State(state): State<WebState>,
    Path((project, session_id)): Path<(String, String)>,
) -> Response {
    super::heavy_stream(state.heavy(), move |sink| {
        let db = state.db();
        let session = find_session(db, &project, &session_id)?;
        if db.transcript_id(&session, None)?.is_none() {
            return Err(Error::NotFound(format!(
                "session {} has no main transcript (only subagent files)",
                session.session_id
            )));
        }
        sink.header(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-ndjson"),
        );
        // The file name is the session id, reduced to characters safe in a header.
        let name: String = session
            .session_id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .collect();
        if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}.jsonl\"")) {
            sink.header(header::CONTENT_DISPOSITION, v);
        }
        db.export_session(&session, sink, crate::export::OnDamage::Fail)?;
        Ok(())
    })
    .await
}

#[derive(Deserialize)]
struct RenameBody {
    title: String,
}

#[derive(Deserialize)]
struct TagBody {
    /// The new tag; null or absent clears it, an empty one is refused.
    tag: Option<String>,
}

#[derive(Deserialize)]
struct ForkBody {
    up_to: Option<String>,
    title: Option<String>,
}

fn parse<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, Error> {
    serde_json::from_slice(bytes).map_err(|e| Error::Invalid(format!("invalid JSON: {e}")))
}

/// Runs a page's action on the session its path names and answers JSON: a request another
/// site could have sent is refused first; the action runs on the blocking pool, and its
/// error becomes `{"error": …}`.
async fn session_action<F>(
    state: WebState,
    (project, session_id): (String, String),
    headers: &HeaderMap,
    action: F,
) -> Response
where
    F: FnOnce(&Db, &SessionRef) -> Result<serde_json::Value, Error> + Send + 'static,
{
    if let Err(r) = same_origin_json(headers) {
        return r;
    }
    blocking_json(move || {
        let session = find_session(state.db(), &project, &session_id)?;
        action(state.db(), &session).map(json_ok)
    })
    .await
}

/// `POST /session/P/S/rename {"title": …}`.
pub(crate) async fn rename(
    State(state): State<WebState>,
    Path(path): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    session_action(state, path, &headers, move |db, session| {
        let body: RenameBody = parse(&body)?;
        db.rename_session(session, &body.title)?;
        Ok(serde_json::json!({ "ok": true }))
    })
    .await
}

/// `POST /session/P/S/tag {"tag": …}` (null clears; an empty tag is refused, as the CLI
/// refuses it).
pub(crate) async fn tag(
    State(state): State<WebState>,
    Path(path): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    session_action(state, path, &headers, move |db, session| {
        let body: TagBody = parse(&body)?;
        // As the CLI: a tag is not empty (`tag S ""` is refused); null clears.
        if body.tag.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(Error::Invalid(
                "tag must be non-empty (Clear tag removes it)".to_owned(),
            ));
        }
        db.tag_session(session, body.tag.as_deref().map(str::trim))?;
        Ok(serde_json::json!({ "ok": true }))
    })
    .await
}

/// `POST /session/P/S/fork {"up_to": uuid?, "title": …?}`: answers the new session.
pub(crate) async fn fork(
    State(state): State<WebState>,
    Path(path): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    session_action(state, path, &headers, move |db, session| {
        let body: ForkBody = parse(&body)?;
        let forked = db.fork(
            session,
            &crate::fork::ForkOptions {
                up_to: body.up_to.filter(|u| !u.is_empty()),
                title: body.title.filter(|t| !t.trim().is_empty()),
                session_id: None,
            },
        )?;
        let mut href = Html::new();
        super::session_href(&mut href, &forked.project, &forked.session_id);
        Ok(serde_json::json!({
            "session_id": forked.session_id,
            "project": forked.project,
            "href": href.into_string(),
        }))
    })
    .await
}

/// `POST /session/P/S/delete {}`: removes the session from the store.
pub(crate) async fn delete(
    State(state): State<WebState>,
    Path(path): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    session_action(state, path, &headers, |db, session| {
        let report = db.delete_session(session)?;
        Ok(serde_json::json!({ "ok": true, "rows": report.rows }))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_mark_and_escape() {
        let mut h = Html::new();
        snippet(&mut h, "a \u{E000}<b>\u{E001} c \u{E001}\u{E000}d");
        assert_eq!(h.into_string(), "a <mark>&lt;b&gt;</mark> c <mark>d</mark>");
    }

    #[test]
    fn ages_read_naturally() {
        let now = 10_000_000_000;
        assert_eq!(relative_age(now - 5_000, now), "just now");
        assert_eq!(relative_age(now - 3 * 60_000, now), "3 min ago");
        assert_eq!(relative_age(now - 5 * 3_600_000, now), "5 h ago");
        assert_eq!(relative_age(now - 2 * 86_400_000, now), "2 d ago");
    }

    #[test]
    fn paths_are_shortened_as_a_prompt_does() {
        let home = Some("/home/ana");
        assert_eq!(short_path("/home/ana/work/x", home), "~/work/x");
        assert_eq!(short_path("/home/ana", home), "~");
        assert_eq!(short_path("/home/anabel/x", home), "~anabel/x");
        assert_eq!(short_path("/Users/soph/Work/cli", home), "~soph/Work/cli");
        assert_eq!(short_path("/Users/soph", None), "~soph");
        assert_eq!(short_path("/srv/app", home), "/srv/app");
        assert_eq!(short_path("C:\\src", home), "C:\\src");
    }
}
