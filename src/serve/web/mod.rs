//! The web viewer: server-rendered pages beside the JSON API, on the same port.
//!
//! * `GET /` sessions (the catalog, filtered and paged), `GET /search`, `GET /session/P/S`
//!   (transcript or resume view), `GET /session/P/S/agent/A` (a sub-agent), `GET
//!   /session/P/S/record/N` (one whole record; `?fragment=1`: what its fold shows), `GET
//!   /session/P/S/tool/N?id=T` (a tool call's input and result, for its fold), `GET
//!   /session/P/S/download` (`.jsonl`);
//! * actions, `POST` with a JSON body from the page's script: `…/rename`, `…/tag`,
//!   `…/fork`, `…/delete`; `POST /login` sets the token cookie;
//! * `/assets/…`: the stylesheet and script, embedded in the binary.
//!
//! Every string from a transcript goes through [`html::Html::text`] (escaped) or
//! [`markdown::render`] (sanitised). Every answer carries a strict Content-Security-Policy
//! ([`add_security_headers`]): scripts only from `/assets/app.js`, no inline script or style,
//! no frames.

pub mod html;
mod live;
pub mod markdown;
mod pages;
mod render;
mod session;

use crate::backend::Db;
use crate::error::Error;
use crate::model::SessionRef;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use html::Html;
use std::sync::{Arc, LazyLock};

/// The name of the cookie that carries the token for the pages.
pub const TOKEN_COOKIE: &str = "sessiondb_token";

/// The Content-Security-Policy of every answer: nothing but this server's own script,
/// stylesheet and images (plus `data:` images from transcripts), no frames, no plugins.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; \
     frame-ancestors 'none'";

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
    /// The token, when the server has one.
    pub token: Option<Arc<[u8]>>,
    /// What tells the live pages that the store changed.
    live: Arc<live::Live>,
}

impl WebState {
    /// The pages' state over `db`.
    pub fn new(db: Arc<Db>, token: Option<Arc<[u8]>>) -> WebState {
        WebState {
            db,
            token,
            live: Arc::new(live::Live::new()),
        }
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
        .route("/events", get(live::store_events))
        .route("/login", get(pages::login_form).post(login))
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

/// Paths anyone may fetch without the token: the login form and the assets it uses.
pub fn is_public(path: &str) -> bool {
    path == "/login" || path.starts_with("/assets/") || path == "/favicon.ico"
}

/// Whether `path` belongs to the pages (which take the token from the cookie too) rather
/// than the API (bearer header only).
pub fn is_page(path: &str) -> bool {
    !path.starts_with("/v1/")
}

/// The token the request's cookie carries, if any.
pub fn cookie_token(headers: &HeaderMap) -> Option<&[u8]> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .flat_map(|v| v.as_bytes().split(|b| *b == b';'))
        .find_map(|pair| {
            let pair = pair.trim_ascii();
            pair.strip_prefix(TOKEN_COOKIE.as_bytes())
                .and_then(|rest| rest.strip_prefix(b"="))
        })
}

/// The answer to a page request without a valid token: a GET is sent to the login form
/// (coming back afterwards), anything else gets 401.
pub fn unauthorized(method: &Method, path_and_query: &str) -> Response {
    if method == Method::GET {
        let target = format!("/login?next={}", html::url_part(path_and_query));
        let mut response = StatusCode::SEE_OTHER.into_response();
        if let Ok(v) = HeaderValue::from_str(&target) {
            response.headers_mut().insert(header::LOCATION, v);
        }
        response
    } else {
        json_error(
            StatusCode::UNAUTHORIZED,
            "missing or wrong token: log in again",
        )
    }
}

/// Adds the security headers to an answer. The connection's service calls it on every
/// answer it sends — pages, API, assets, errors, 404s and the request guard's refusals —
/// so that no answer, present or future, goes out without them.
pub fn add_security_headers(h: &mut HeaderMap) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

#[derive(serde::Deserialize)]
struct LoginBody {
    token: String,
}

/// `POST /login {"token": …}`: checks the token and sets the HttpOnly, SameSite=Strict
/// cookie the pages are read with.
async fn login(
    State(state): State<WebState>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if let Err(r) = same_origin_json(&headers) {
        return r;
    }
    let Ok(body) = serde_json::from_slice::<LoginBody>(&body) else {
        return json_error(StatusCode::BAD_REQUEST, "send {\"token\": \"…\"}");
    };
    let Some(expected) = &state.token else {
        return json_ok(serde_json::json!({ "ok": true }));
    };
    if !crate::serve::http::same_token(body.token.as_bytes(), expected)
        || body
            .token
            .bytes()
            .any(|b| !(0x21..0x7f).contains(&b) || b == b';')
    {
        return json_error(StatusCode::UNAUTHORIZED, "wrong token");
    }
    let mut response = json_ok(serde_json::json!({ "ok": true }));
    let cookie = format!(
        "{TOKEN_COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
        body.token
    );
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    response
}

/// Refuses a write that a page of another site could have sent: the body must be declared
/// `application/json` (which a cross-site form cannot send without a CORS preflight this
/// server never grants), `Sec-Fetch-Site` must not be `cross-site`, and an `Origin` must
/// match `Host`. (The server's own layer checks the same for every route; the pages keep
/// their own check so that their safety never depends on the order of layers.)
#[allow(clippy::result_large_err)]
pub(crate) fn same_origin_json(headers: &HeaderMap) -> Result<(), Response> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(json_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "actions take Content-Type: application/json",
        ));
    }
    if headers
        .get("sec-fetch-site")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"cross-site"))
    {
        return Err(json_error(
            StatusCode::FORBIDDEN,
            "cross-site request refused",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = headers.get(header::HOST).map(HeaderValue::as_bytes);
        let origin = origin.as_bytes();
        let host_part = origin
            .strip_prefix(b"http://")
            .or_else(|| origin.strip_prefix(b"https://"));
        if host.is_none() || host_part != host {
            return Err(json_error(
                StatusCode::FORBIDDEN,
                "cross-origin request refused",
            ));
        }
    }
    Ok(())
}

pub(crate) fn json_ok(value: serde_json::Value) -> Response {
    let mut response = value.to_string().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

pub(crate) fn json_error(status: StatusCode, message: &str) -> Response {
    let mut response = json_ok(serde_json::json!({ "error": message }));
    *response.status_mut() = status;
    response
}

/// A whole page: the frame (header, navigation, main) around `body`.
pub(crate) fn page(status: StatusCode, title: &str, nav: Nav, body: &Html) -> Response {
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
    ] {
        h.raw("<a href=\"").raw(href).raw("\"");
        if which == nav {
            h.raw(" aria-current=\"page\"");
        }
        h.raw(">").raw(label).raw("</a>");
    }
    h.raw("<form class=\"quick\" action=\"/search\" method=\"get\" role=\"search\">")
        .raw("<input type=\"search\" name=\"q\" placeholder=\"Search (/)\" aria-label=\"Search all sessions\" id=\"quick-search\">")
        .raw("</form></nav></header><main id=\"main\" tabindex=\"-1\">")
        .append(body)
        .raw("</main></body></html>\n");
    let mut response = (status, h.into_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

/// Which navigation entry a page belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nav {
    Sessions,
    Search,
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

/// The HTTP status for a library error.
pub(crate) fn status_of(e: &Error) -> StatusCode {
    match e {
        Error::Invalid(_) => StatusCode::BAD_REQUEST,
        Error::SessionNotFound(_) | Error::NotFound(_) => StatusCode::NOT_FOUND,
        Error::AmbiguousSession { .. } => StatusCode::CONFLICT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Runs store work on the blocking pool; a library error becomes an error page.
pub(crate) async fn blocking_page<F>(f: F) -> Response
where
    F: FnOnce() -> Result<Response, Error> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => error_page(status_of(&e), &e.to_string()),
        Err(e) => error_page(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// Runs store work on the blocking pool; a library error becomes `{"error": …}`.
pub(crate) async fn blocking_json<F>(f: F) -> Response
where
    F: FnOnce() -> Result<Response, Error> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => json_error(status_of(&e), &e.to_string()),
        Err(e) => json_error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
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
