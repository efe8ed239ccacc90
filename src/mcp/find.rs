//! `find` (full-text search, or a session by id) and `list_sessions` (the catalog).

use super::args::{clip, Args, ToolError};
use super::page::{object, time, Page};
use super::Context;
use crate::query::{SessionFilter, SessionInfo};
use crate::search::{Narrowing, SearchQuery};
use serde_json::{json, Value};

/// `find`'s largest `limit`.
const MAX_HITS: i64 = 20;

/// At most this many hits are read for one answer: paging ends there.
const MAX_READ: i64 = 1000;

/// `find`.
pub fn find(cx: &Context<'_>, a: &Args<'_>) -> Result<Value, ToolError> {
    let spec = super::tools::spec("find", false).expect("find is listed");
    a.only(&spec.param_names())?;
    let query = a.required("query")?;
    let limit = a.limit("limit", 10, MAX_HITS)?;
    let offset = a.cursor()?;
    let role = a.text("role")?;
    if role.is_some_and(|r| r != "user" && r != "assistant") {
        return Err(ToolError::invalid("role must be user or assistant"));
    }
    let narrowing = Narrowing {
        branch: a.text("branch")?.map(str::to_owned),
        host: a.text("host")?.map(str::to_owned),
        since: a.time("since")?,
        until: a.time("until")?,
        main_only: !a.flag("agents")?,
        without_session: if a.flag("include_self")? {
            None
        } else {
            cx.caller.map(str::to_owned)
        },
    };
    if offset == 0 {
        if let Some(found) = by_id(cx, query)? {
            return Ok(found);
        }
    }
    let project = match (a.text("cwd")?, a.text("project")?) {
        (Some(cwd), _) => Some(crate::paths::project_argument(cwd).0),
        (None, Some(p)) => Some(crate::paths::project_argument(p).0),
        (None, None) => None,
    };
    // One hit more than the page tells whether there is a next one.
    let wanted = offset.saturating_add(limit).saturating_add(1).min(MAX_READ);
    let (kept, _stale) = cx.db.search_narrowed(
        &SearchQuery {
            text: query.to_owned(),
            project,
            tag: a.text("tag")?.map(str::to_owned),
            role: role.map(str::to_owned),
            tools: a.flag("tools")?,
            limit: Some(wanted),
            marks: None,
        },
        &narrowing,
    )?;
    let shown: Vec<_> = kept
        .iter()
        .skip(offset as usize)
        .take(limit as usize)
        .collect();
    let mut page = Page::new(cx.budget);
    let mut taken = 0;
    for h in &shown {
        let item = object([
            ("session", json!(h.session_id)),
            ("project", json!(h.project)),
            ("agent", json!(h.agent_id)),
            ("title", json!(h.title.as_deref().map(|t| clip(t, 120)))),
            ("uuid", json!(h.uuid)),
            ("role", json!(h.role)),
            ("time", json!(h.timestamp)),
            ("snippet", json!(clip(&h.snippet, 400))),
            ("score", json!((-h.rank * 100.0).round() / 100.0)),
        ]);
        if !page.push(item) {
            break;
        }
        taken += 1;
    }
    let more = taken < shown.len() || kept.len() as i64 > offset + limit;
    Ok(super::page::listing(
        "hits",
        page,
        more.then(|| offset + taken as i64),
    ))
}

/// A session named by id, id prefix or `PROJECT/SESSION` as the whole query: that session,
/// when the query looks like one; an ambiguous prefix is an error.
fn by_id(cx: &Context<'_>, query: &str) -> Result<Option<Value>, ToolError> {
    let id = query.rsplit('/').next().unwrap_or(query);
    // One word of 6 or more characters with a digit (a uuid's prefix always has one among
    // its first 6 characters but rarely): what a plain search word seldom is.
    let looks_like_id = id.len() >= 6
        && !query.contains(char::is_whitespace)
        && id.bytes().any(|b| b.is_ascii_digit());
    if !looks_like_id {
        return Ok(None);
    }
    match cx.db.resolve_session(query) {
        Ok(session) => {
            let info = cx.db.session_info(&session, None)?;
            Ok(Some(json!({ "session": session_item(&info, cx.caller) })))
        }
        Err(crate::error::Error::SessionNotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// A session as `find` and `list_sessions` show it.
pub fn session_item(s: &SessionInfo, caller: Option<&str>) -> Value {
    object([
        ("session", json!(s.session_id)),
        ("project", json!(s.project)),
        ("title", json!(s.summary.as_deref().map(|t| clip(t, 120)))),
        ("tag", json!(s.tag)),
        ("branch", json!(s.git_branch)),
        ("cwd", json!(s.cwd)),
        (
            "first_prompt",
            json!(s.first_prompt.as_deref().map(|t| clip(t, 200))),
        ),
        ("modified", time(s.last_modified)),
        ("messages", json!(s.message_count)),
        ("subagents", json!(s.subagent_count)),
        ("host", json!(s.origin_host)),
        ("current", json!(caller == Some(s.session_id.as_str()))),
    ])
}

/// `list_sessions`'s largest `limit`.
const MAX_SESSIONS: i64 = 50;

/// `list_sessions`.
pub fn list_sessions(cx: &Context<'_>, a: &Args<'_>) -> Result<Value, ToolError> {
    let spec = super::tools::spec("list_sessions", false).expect("listed");
    a.only(&spec.param_names())?;
    let limit = a.limit("limit", 20, MAX_SESSIONS)?;
    let offset = a.cursor()?;
    let mut filter = SessionFilter {
        tag: a.text("tag")?.map(str::to_owned),
        name: a.text("name")?.map(str::to_owned),
        branch: a.text("branch")?.map(str::to_owned),
        host: a.text("host")?.map(str::to_owned),
        since: a.time("since")?,
        until: a.time("until")?,
        limit: Some(limit + 1),
        offset: Some(offset),
        include_hidden: a.flag("all")?,
        ..SessionFilter::default()
    };
    if let Some(arg) = a.text("project")? {
        // As `sessions --project`: a stored folder (or a path whose folder is stored) names
        // one project; any other text is looked for in folder names and cwds.
        let (key, directory) = crate::paths::project_argument(arg);
        if cx.db.project_exists(&key)? {
            filter.project = Some(key);
            filter.directory = directory;
        } else {
            filter.project_contains = Some(arg.to_owned());
        }
    }
    let sessions = cx.db.list_sessions(&filter)?;
    let mut page = Page::new(cx.budget);
    let mut taken = 0;
    for s in sessions.iter().take(limit as usize) {
        if !page.push(session_item(s, cx.caller)) {
            break;
        }
        taken += 1;
    }
    let more = sessions.len() > taken;
    Ok(super::page::listing(
        "sessions",
        page,
        more.then(|| offset + taken as i64),
    ))
}
