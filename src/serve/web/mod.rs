//! The web viewer: server-rendered pages beside the JSON API, on the same port.
//!
//! * `GET /` sessions (the catalog, filtered and paged), `GET /search`, `GET /session/P/S`
//!   (transcript or resume view), `GET /session/P/S/agent/A` (a sub-agent), `GET
//!   /session/P/S/record/N` (one whole record; `?fragment=1`: what its fold shows), `GET
//!   /session/P/S/tool/N?id=T` (a tool call's input and result, for its fold), `GET
//!   /session/P/S/download` (`.jsonl`), `GET /usage` (cost and tokens over time, [`usage`]);
//! * actions, `POST` with a JSON body from the page's script: `…/rename`, `…/tag`,
//!   `…/fork`, `…/delete`; `POST /login` sets the login cookie ([`auth`]);
//! * `/assets/…`: the stylesheet and script, embedded in the binary.
//!
//! Every string from a transcript goes through [`html::Html::text`] (escaped) or
//! [`markdown::render`] (sanitised). Every answer carries a strict Content-Security-Policy
//! ([`super::response::add_security_headers`]): scripts only from `/assets/app.js`, no inline script or style,
//! no frames.

mod chart;
mod conversation;
pub mod html;
mod live;
pub mod markdown;
mod pages;
mod render;
mod session;
mod usage;

pub(crate) use super::auth::same_origin_json;
use super::auth::{self, Auth};
pub use super::response::CSP;
use super::response::{client_message, internal, status_of};
pub(crate) use super::response::{json_error, json_ok};
use crate::backend::Db;
use crate::error::Error;
use crate::model::SessionRef;
use crate::serve::stream::Sink;
use axum::extract::RawQuery;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use html::Html;
use std::sync::{Arc, LazyLock};

const APP_CSS: &str = include_str!("assets/app.css");
const APP_JS: &str = include_str!("assets/app.js");
const FAVICON: &str = include_str!("assets/favicon.svg");

/// The address the pages link an embedded asset by: `PATH?v=VERSION`, the version a hash of
/// its content. An answer to that exact address never changes, so the browser keeps it
/// (`immutable`) and a page load fetches nothing but the page itself; a binary with other
/// content links another address.
fn versioned(path: &str, body: &str) -> String {
    format!("{path}?v={}", content_version(body))
}

/// FNV-1a of the content: stable across builds and platforms, enough to tell two apart.
fn content_version(body: &str) -> String {
    let hash = body.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

static APP_CSS_HREF: LazyLock<String> = LazyLock::new(|| versioned("/assets/app.css", APP_CSS));
static APP_JS_HREF: LazyLock<String> = LazyLock::new(|| versioned("/assets/app.js", APP_JS));
static FAVICON_HREF: LazyLock<String> = LazyLock::new(|| versioned("/favicon.ico", FAVICON));

/// An embedded asset: cached for good when asked for by its current versioned address
/// ([`versioned`]), else revalidated.
fn asset(content_type: &'static str, body: &'static str, query: Option<&str>) -> Response {
    let current = query
        .and_then(|q| q.strip_prefix("v="))
        .is_some_and(|v| v == content_version(body));
    let mut response = body.into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if current {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        }),
    );
    response
}

/// What the pages need.
#[derive(Clone)]
pub struct WebState {
    /// The store, of either kind: the pages read and change it only through [`Db`].
    db: Arc<Db>,
    /// The token check and login sessions ([`auth`]).
    auth: Arc<Auth>,
    /// What tells the live pages that the store changed.
    live: Arc<live::Live>,
    /// The places of the heavy renders ([`crate::serve::heavy`]).
    heavy: Arc<crate::serve::heavy::Gate>,
}

impl axum::extract::FromRef<WebState> for Arc<Auth> {
    fn from_ref(state: &WebState) -> Arc<Auth> {
        state.auth.clone()
    }
}

impl WebState {
    /// The pages' state over `db`, logging in with `auth`, its heavy renders taking places
    /// at `heavy`.
    pub fn new(db: Arc<Db>, auth: Arc<Auth>, heavy: Arc<crate::serve::heavy::Gate>) -> WebState {
        WebState {
            db,
            auth,
            live: Arc::new(live::Live::new()),
            heavy,
        }
    }

    /// The places of the heavy renders.
    pub(crate) fn heavy(&self) -> Arc<crate::serve::heavy::Gate> {
        self.heavy.clone()
    }

    /// Ends the live pages' event streams (on shutdown, so that they do not hold their
    /// connections through the grace period).
    pub fn close_live_pages(&self) {
        self.live.close();
    }

    /// The store the pages read.
    pub(crate) fn db(&self) -> &Db {
        &self.db
    }
}

/// The pages' routes, to merge into the API's router (which adds authorization and the
/// security headers around both).
pub fn router<S: Clone + Send + Sync + 'static>(state: WebState) -> Router<S> {
    Router::new()
        .route("/", get(pages::sessions))
        .route("/search", get(pages::search))
        .route("/usage", get(usage::usage_page))
        .route("/events", get(live::store_events))
        .route("/login", get(pages::login_form).post(auth::login))
        .route("/session/{project}/{session}", get(session::session_page))
        .route(
            "/session/{project}/{session}/agent/{agent}",
            get(session::agent_page),
        )
        .route(
            "/session/{project}/{session}/record/{ordinal}",
            get(session::record_page),
        )
        .route(
            "/session/{project}/{session}/tool/{ordinal}",
            get(session::tool_fragment),
        )
        .route(
            "/session/{project}/{session}/events",
            get(live::session_events),
        )
        .route(
            "/session/{project}/{session}/download",
            get(pages::download),
        )
        .route("/session/{project}/{session}/rename", post(pages::rename))
        .route("/session/{project}/{session}/tag", post(pages::tag))
        .route("/session/{project}/{session}/fork", post(pages::fork))
        .route("/session/{project}/{session}/delete", post(pages::delete))
        .route(
            "/assets/app.css",
            get(|RawQuery(q): RawQuery| async move {
                asset("text/css; charset=utf-8", APP_CSS, q.as_deref())
            }),
        )
        .route(
            "/assets/app.js",
            get(|RawQuery(q): RawQuery| async move {
                asset("text/javascript; charset=utf-8", APP_JS, q.as_deref())
            }),
        )
        .route(
            "/favicon.ico",
            get(|RawQuery(q): RawQuery| async move {
                asset("image/svg+xml", FAVICON, q.as_deref())
            }),
        )
        .with_state(state)
}

/// A whole page: the frame (header, navigation, main) around `body`.
pub(crate) fn page(status: StatusCode, title: &str, nav: Nav, body: &Html) -> Response {
    let mut h = page_start(title, nav);
    h.append(body).raw(PAGE_END);
    let mut response = (status, h.into_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

/// What closes a page's frame ([`page_start`]).
pub(crate) const PAGE_END: &str = "</main></body></html>\n";

/// The frame of a page up to its body (a streamed page writes it, its body, then
/// [`PAGE_END`]).
pub(crate) fn page_start(title: &str, nav: Nav) -> Html {
    let mut h = Html::new();
    h.raw("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        .raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        .raw("<meta name=\"color-scheme\" content=\"light dark\">")
        .raw("<title>")
        .text(title)
        .raw(" · sessiondb</title>")
        .raw("<link rel=\"icon\" href=\"")
        .raw(FAVICON_HREF.as_str())
        .raw("\"><link rel=\"stylesheet\" href=\"")
        .raw(APP_CSS_HREF.as_str())
        .raw("\"><script src=\"")
        .raw(APP_JS_HREF.as_str())
        .raw("\" defer></script></head><body>")
        .raw("<a class=\"skip\" href=\"#main\">Skip to content</a>")
        .raw("<header class=\"top\"><nav aria-label=\"Main\"><a class=\"brand\" href=\"/\">sessiondb</a>");
    for (which, href, label) in [
        (Nav::Sessions, "/", "Sessions"),
        (Nav::Search, "/search", "Search"),
        (Nav::Usage, "/usage", "Usage"),
    ] {
        h.raw("<a href=\"").raw(href).raw("\"");
        if which == nav {
            h.raw(" aria-current=\"page\"");
        }
        h.raw(">").raw(label).raw("</a>");
    }
    h.raw("<form class=\"quick\" action=\"/search\" method=\"get\" role=\"search\">")
        .raw("<input type=\"search\" name=\"q\" placeholder=\"Search (/)\" aria-label=\"Search all sessions\" id=\"quick-search\">")
        .raw("</form></nav></header><main id=\"main\" tabindex=\"-1\">");
    h
}

/// Which navigation entry a page belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nav {
    Sessions,
    Search,
    Usage,
    None,
}

/// An error page (HTML).
pub(crate) fn error_page(status: StatusCode, message: &str) -> Response {
    let mut h = Html::new();
    h.raw("<h1>")
        .num(status.as_u16())
        .raw(" ")
        .text(status.canonical_reason().unwrap_or(""))
        .raw("</h1><p class=\"error\">")
        .text(message)
        .raw("</p><p><a href=\"/\">Back to the sessions</a></p>");
    page(status, "Error", Nav::None, &h)
}

/// The error page for a query string that does not parse.
pub(crate) fn bad_query(e: &axum::extract::rejection::QueryRejection) -> Response {
    error_page(
        StatusCode::BAD_REQUEST,
        &format!("bad query string: {}", e.body_text()),
    )
}

/// Runs store work on the blocking pool; a library error becomes an error page.
pub(crate) async fn blocking_page<F>(f: F) -> Response
where
    F: FnOnce() -> Result<Response, Error> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let status = status_of(&e);
            error_page(status, &client_message(status, &e))
        }
        Err(e) => error_page(StatusCode::INTERNAL_SERVER_ERROR, &internal(&e)),
    }
}

/// [`blocking_page`] for a render that holds a whole session in memory: it waits for one of
/// [`crate::serve::heavy`]'s bounded places.
pub(crate) async fn heavy_page<F>(gate: Arc<crate::serve::heavy::Gate>, f: F) -> Response
where
    F: FnOnce() -> Result<Response, Error> + Send + 'static,
{
    match gate.run(f).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let status = status_of(&e);
            error_page(status, &client_message(status, &e))
        }
        Err(e) => error_page(StatusCode::INTERNAL_SERVER_ERROR, &internal(&e)),
    }
}

/// [`heavy_page`] for an answer written as it is made ([`crate::serve::stream`]): `f`
/// writes it into the sink, in one of the bounded places. An error before its first chunk
/// is an error page; after it, the transfer is cut.
pub(crate) async fn heavy_stream<F>(gate: Arc<crate::serve::heavy::Gate>, f: F) -> Response
where
    F: FnOnce(&mut Sink) -> Result<(), Error> + Send + 'static,
{
    let runtime = tokio::runtime::Handle::current();
    let (answer, answered) = tokio::sync::oneshot::channel();
    let render = gate
        .start(move || {
            let mut sink = Sink::new(runtime, answer);
            let outcome = f(&mut sink);
            sink.end(outcome);
        })
        .await;
    match answered.await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let status = status_of(&e);
            error_page(status, &client_message(status, &e))
        }
        // The render panicked before its first chunk.
        Err(_) => {
            let why = match render.await {
                Err(e) => e.to_string(),
                Ok(()) => "the render ended without an answer".to_owned(),
            };
            error_page(StatusCode::INTERNAL_SERVER_ERROR, &internal(&why))
        }
    }
}

/// Runs store work on the blocking pool; a library error becomes `{"error": …}`.
pub(crate) async fn blocking_json<F>(f: F) -> Response
where
    F: FnOnce() -> Result<Response, Error> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let status = status_of(&e);
            json_error(status, &client_message(status, &e))
        }
        Err(e) => json_error(StatusCode::INTERNAL_SERVER_ERROR, &internal(&e)),
    }
}

/// The session a page's path names: exactly this project and session id.
pub(crate) fn find_session(db: &Db, project: &str, session_id: &str) -> Result<SessionRef, Error> {
    db.find_exact_session(project, session_id)
}

/// The path of a session's page.
pub(crate) fn session_href(h: &mut Html, project: &str, session_id: &str) {
    h.raw("/session/").url(project).raw("/").url(session_id);
}
