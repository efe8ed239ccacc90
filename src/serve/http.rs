//! The HTTP/JSON API (axum on tokio), over either store ([`Db`]). Store work runs on tokio's
//! blocking pool, never on the async threads. Every request first passes
//! [`guard`](super::guard) (Host, cross-site, content type) and the connection limits of
//! [`connections`](super::connections), then the bearer token check (when a token is set,
//! in constant time), then its route.

use super::auth::{self, Auth};
use super::connections::{self, BodyTimeout, Limits, Stopped};
use super::guard::{AllowedHost, Policy};
use super::response::json_response;
pub use super::response::ApiError;
use super::{idle_index, web};
use crate::backend::Db;
use crate::error::Error;
use crate::model::SessionRef;
use crate::query::SessionFilter;
use crate::resume::{BadCliVersion, CliVersion, ResumeOptions};
use crate::search::SearchQuery;
use crate::streams::{self, StreamKey, SummaryPut, Watermark};
use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

/// The largest request body accepted by default: 64 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 64 << 20;

/// How the server runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The bearer token every request must carry (`Authorization: Bearer <token>`); `None`
    /// accepts any request (loopback only: the binary refuses other binds without a token).
    pub token: Option<String>,
    /// The largest request body, in bytes.
    pub body_limit: usize,
    /// Host names answered to besides the address connected to (`--allow-host`).
    pub allowed_hosts: Vec<AllowedHost>,
    /// Connection limits and timeouts.
    pub limits: Limits,
    /// The places of the renders that hold a whole session in memory ([`super::heavy`]).
    pub heavy: Arc<super::heavy::Gate>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            token: None,
            body_limit: DEFAULT_BODY_LIMIT,
            allowed_hosts: Vec::new(),
            limits: Limits::default(),
            heavy: Arc::default(),
        }
    }
}

#[derive(Clone)]
struct AppState {
    store: Arc<Db>,
    body_limit: usize,
    heavy: Arc<super::heavy::Gate>,
}

type ApiResult = std::result::Result<Response, ApiError>;

/// A 200 answer with the time the store work took, as `Server-Timing: store;dur=<ms>`.
fn timed(body: Vec<u8>, took: std::time::Duration) -> Response {
    let mut response = json_response(StatusCode::OK, body);
    let ms = took.as_secs_f64() * 1000.0;
    if let Ok(v) = HeaderValue::from_str(&format!("store;dur={ms:.3}")) {
        response.headers_mut().insert("server-timing", v);
    }
    response
}

/// The JSON the CLI prints for `--json`: pretty, with a final newline.
fn pretty<T: serde::Serialize>(value: &T) -> std::result::Result<Vec<u8>, ApiError> {
    let mut out = serde_json::to_vec_pretty(value).map_err(Error::from)?;
    out.push(b'\n');
    Ok(out)
}

/// The router: the SessionStore endpoints under `/v1/store/`, the read endpoints under `/v1/`,
/// behind the token check. [`run`] puts the request guard and the connection limits in
/// front of it: a route added here gets them without doing anything.
fn router(
    store: Arc<Db>,
    auth: Arc<Auth>,
    body_limit: usize,
    activity: idle_index::Activity,
    heavy: Arc<super::heavy::Gate>,
) -> (Router, web::WebState) {
    let state = AppState {
        store,
        body_limit,
        heavy: heavy.clone(),
    };
    let web_state = web::WebState::new(state.store.clone(), auth.clone(), heavy);
    let pages = web::router(web_state.clone());
    let router = Router::new()
        .route("/v1/health", get(health))
        .route("/v1/store/append", post(append))
        .route("/v1/store/load", post(load))
        .route("/v1/store/list_sessions", post(list_sessions))
        .route(
            "/v1/store/list_session_summaries",
            post(list_session_summaries),
        )
        .route("/v1/store/delete", post(delete))
        .route("/v1/store/list_subkeys", post(list_subkeys))
        .route("/v1/store/summary/pending", post(summary_pending))
        .route("/v1/store/summary/put", post(summary_put))
        .route("/v1/sessions", get(sessions))
        .route("/v1/resume", get(resume))
        .route("/v1/messages", get(messages))
        .route("/v1/search", get(search))
        .merge(pages)
        .merge(mcp_route(&state))
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "no such endpoint") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method not allowed here")
        })
        .layer(middleware::from_fn_with_state(auth, auth::authorize))
        .layer(middleware::from_fn_with_state(activity, in_flight))
        .with_state(state);
    (router, web_state)
}

/// The MCP endpoint (streamable HTTP) at `/mcp`: behind the same guard and token check as
/// the rest, taking the bearer token only (never the pages' cookie: see `auth::is_page`).
fn mcp_route(state: &AppState) -> Router<AppState> {
    #[cfg(feature = "mcp")]
    return Router::new().nest_service(
        super::auth::MCP_PATH,
        crate::mcp::http_service(
            state.store.clone(),
            crate::mcp::Options::default(),
            state.body_limit,
        ),
    );
    #[cfg(not(feature = "mcp"))]
    {
        let _ = state;
        Router::new()
    }
}

/// Counts the request as in flight while it runs, for the idle indexer.
async fn in_flight(
    State(activity): State<idle_index::Activity>,
    request: Request,
    next: Next,
) -> Response {
    let _running = activity.begin();
    next.run(request).await
}

/// How often the WAL is checkpointed while serving.
const CHECKPOINT_PERIOD: std::time::Duration = std::time::Duration::from_secs(1);

/// Serves the API on `listener` until `shutdown` resolves, then closes the listener and
/// lets requests in flight finish for up to [`Limits::shutdown_grace`] (an append that
/// started commits whole; one whose body had not fully arrived changes nothing) before
/// returning. On SQLite, WAL checkpoints run on a thread of their own meanwhile
/// ([`Checkpointer`]).
///
/// # Errors
/// Fails when the checkpoint thread cannot start or stop.
pub async fn run(
    listener: tokio::net::TcpListener,
    store: Arc<Db>,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<Stopped> {
    let checkpointer = store
        .start_upkeep(CHECKPOINT_PERIOD)
        .map_err(std::io::Error::other)?;
    let activity = idle_index::Activity::default();
    let indexer = idle_index::IdleIndexer::start(&store, &activity)?;
    let port = listener.local_addr()?.port();
    let auth = Arc::new(Auth::new(config.token.as_deref(), port));
    let (router, pages) = router(
        store.clone(),
        auth,
        config.body_limit,
        activity,
        config.heavy.clone(),
    );
    // The live pages' event streams end with the listener, not after the grace period.
    let shutdown = async move {
        shutdown.await;
        pages.close_live_pages();
    };
    let policy = Arc::new(Policy::new(config.allowed_hosts));
    let stopped = connections::serve(listener, router, policy, config.limits, shutdown).await;
    if let Some(indexer) = indexer {
        // At most the batch it is running.
        tokio::task::spawn_blocking(move || indexer.stop())
            .await
            .map_err(std::io::Error::other)?;
    }
    if let Some(checkpointer) = checkpointer {
        tokio::task::spawn_blocking(move || store.stop_upkeep(checkpointer))
            .await
            .map_err(std::io::Error::other)?
            .map_err(std::io::Error::other)?;
    } else {
        // A PostgreSQL connection closes by blocking on its own runtime: never on an async
        // thread (the caller keeps a reference too, dropped outside the runtime).
        tokio::task::spawn_blocking(move || drop(store))
            .await
            .map_err(std::io::Error::other)?;
    }
    Ok(stopped)
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}

/// Reads a body up to the limit.
async fn read_body(state: &AppState, body: Body) -> std::result::Result<Bytes, ApiError> {
    axum::body::to_bytes(body, state.body_limit)
        .await
        .map_err(|e| {
            if let Some(timeout) = caused_by::<BodyTimeout>(&e) {
                return ApiError::new(StatusCode::REQUEST_TIMEOUT, timeout.to_string());
            }
            if caused_by::<http_body_util::LengthLimitError>(&e).is_some() {
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!(
                        "request body is over the limit of {} bytes",
                        state.body_limit
                    ),
                )
            } else {
                ApiError::bad_request(format!("cannot read the request body: {e}"))
            }
        })
}

/// The first error of type `T` in `e`'s chain of sources.
fn caused_by<'a, T: std::error::Error + 'static>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(found) = e.downcast_ref::<T>() {
            return Some(found);
        }
        next = e.source();
    }
    None
}

fn parse<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> std::result::Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| ApiError::bad_request(format!("invalid JSON: {e}")))
}

/// Runs store work on the blocking pool.
async fn blocking<F>(f: F) -> ApiResult
where
    F: FnOnce() -> ApiResult + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(&e))?
}

/// [`blocking`] for work that holds a whole session in memory: one of [`super::heavy`]'s
/// bounded places.
async fn heavy<F>(gate: Arc<super::heavy::Gate>, f: F) -> ApiResult
where
    F: FnOnce() -> ApiResult + Send + 'static,
{
    gate.run(f).await.map_err(|e| ApiError::internal(&e))?
}

async fn health() -> Response {
    json_response(StatusCode::OK, br#"{"ok":true}"#.to_vec())
}

#[derive(Deserialize)]
struct AppendBody<'a> {
    key: StreamKey,
    #[serde(borrow)]
    entries: Vec<&'a RawValue>,
    /// Also answer what `summary/pending` would (main keys only), saving the adapter a
    /// request: `{appended, duplicates, mtime, pending}`.
    #[serde(default)]
    fold: bool,
}

async fn append(State(state): State<AppState>, body: Body) -> ApiResult {
    let bytes = read_body(&state, body).await?;
    blocking(move || {
        let started = Instant::now();
        let body: AppendBody<'_> = parse(&bytes)?;
        let outcome = streams::append(&*state.store, &body.key, &body.entries)?;
        let took = started.elapsed();
        let mut out = serde_json::to_vec(&outcome).map_err(Error::from)?;
        if body.fold && body.key.subpath.is_none() {
            let pending = streams::summary_pending(
                &*state.store,
                &body.key.project_key,
                &body.key.session_id,
            )?;
            out.pop();
            out.extend_from_slice(b",\"pending\":");
            match pending {
                Some(p) => out.extend_from_slice(&p),
                None => out.extend_from_slice(b"null"),
            }
            out.push(b'}');
        }
        Ok(timed(out, took))
    })
    .await
}

#[derive(Deserialize)]
struct KeyBody {
    key: StreamKey,
}

async fn load(State(state): State<AppState>, body: Body) -> ApiResult {
    let bytes = read_body(&state, body).await?;
    blocking(move || {
        let started = Instant::now();
        let body: KeyBody = parse(&bytes)?;
        let mut out = b"{\"entries\":".to_vec();
        match streams::load(&*state.store, &body.key)? {
            Some(entries) => out.extend_from_slice(&entries),
            None => out.extend_from_slice(b"null"),
        }
        out.push(b'}');
        Ok(timed(out, started.elapsed()))
    })
    .await
}

#[derive(Deserialize)]
struct ProjectBody {
    project_key: String,
}

async fn list_sessions(State(state): State<AppState>, body: Body) -> ApiResult {
    let bytes = read_body(&state, body).await?;
    blocking(move || {
        let body: ProjectBody = parse(&bytes)?;
        let sessions = streams::list_sessions(&*state.store, &body.project_key)?;
        let out = serde_json::to_vec(&serde_json::json!({ "sessions": sessions }))
            .map_err(Error::from)?;
        Ok(json_response(StatusCode::OK, out))
    })
    .await
}

async fn list_session_summaries(State(state): State<AppState>, body: Body) -> ApiResult {
    let bytes = read_body(&state, body).await?;
    blocking(move || {
        let body: ProjectBody = parse(&bytes)?;
        let mut out = b"{\"summaries\":".to_vec();
        out.extend_from_slice(&streams::list_session_summaries(
            &*state.store,
            &body.project_key,
        )?);
        out.push(b'}');
        Ok(json_response(StatusCode::OK, out))
    })
    .await
}

async fn delete(State(state): State<AppState>, body: Body) -> ApiResult {
    let bytes = read_body(&state, body).await?;
    blocking(move || {
        let body: KeyBody = parse(&bytes)?;
        let outcome = streams::delete(&*state.store, &body.key)?;
        let out = serde_json::to_vec(&outcome).map_err(Error::from)?;
        Ok(json_response(StatusCode::OK, out))
    })
    .await
}

#[derive(Deserialize)]
struct SessionKeyBody {
    key: SessionKey,
}

#[derive(Deserialize)]
struct SessionKey {
    project_key: String,
    session_id: String,
}

async fn list_subkeys(State(state): State<AppState>, body: Body) -> ApiResult {
    let bytes = read_body(&state, body).await?;
    blocking(move || {
        let body: SessionKeyBody = parse(&bytes)?;
        let subkeys =
            streams::list_subkeys(&*state.store, &body.key.project_key, &body.key.session_id)?;
        let out =
            serde_json::to_vec(&serde_json::json!({ "subkeys": subkeys })).map_err(Error::from)?;
        Ok(json_response(StatusCode::OK, out))
    })
    .await
}

async fn summary_pending(State(state): State<AppState>, body: Body) -> ApiResult {
    let bytes = read_body(&state, body).await?;
    blocking(move || {
        let body: SessionKeyBody = parse(&bytes)?;
        let mut out = b"{\"pending\":".to_vec();
        match streams::summary_pending(&*state.store, &body.key.project_key, &body.key.session_id)?
        {
            Some(p) => out.extend_from_slice(&p),
            None => out.extend_from_slice(b"null"),
        }
        out.push(b'}');
        Ok(json_response(StatusCode::OK, out))
    })
    .await
}

#[derive(Deserialize)]
struct SummaryPutBody<'a> {
    key: SessionKey,
    expect: Option<Watermark>,
    through: Watermark,
    mtime: i64,
    #[serde(borrow)]
    data: &'a RawValue,
}

async fn summary_put(State(state): State<AppState>, body: Body) -> ApiResult {
    let bytes = read_body(&state, body).await?;
    blocking(move || {
        let body: SummaryPutBody<'_> = parse(&bytes)?;
        if streams::summary_put(
            &*state.store,
            &body.key.project_key,
            &body.key.session_id,
            &SummaryPut {
                expect: body.expect,
                through: body.through,
                mtime: body.mtime,
                data: body.data,
            },
        )? {
            Ok(json_response(
                StatusCode::OK,
                br#"{"stored":true}"#.to_vec(),
            ))
        } else {
            Err(ApiError::new(
                StatusCode::CONFLICT,
                "the summary changed since it was read: fold again",
            ))
        }
    })
    .await
}

fn query_error(e: QueryRejection) -> ApiError {
    ApiError::bad_request(format!("bad query string: {}", e.body_text()))
}

/// `since` / `until`: an RFC 3339 time or date, epoch ms, or an age (`3d`, `12h`, `30m`,
/// `2w`, `45s`), as `sessiondb sessions` takes them.
fn time_param(text: &str) -> std::result::Result<i64, ApiError> {
    crate::time::parse_time_filter(text).ok_or_else(|| {
        ApiError::bad_request(format!(
            "{text:?} is not a time (try 2026-01-31, 3d or 12h)"
        ))
    })
}

#[derive(Deserialize)]
struct SessionsQuery {
    project: Option<String>,
    tag: Option<String>,
    name: Option<String>,
    branch: Option<String>,
    since: Option<String>,
    until: Option<String>,
    limit: Option<i64>,
    offset: Option<i64>,
    #[serde(default)]
    all: bool,
}

/// `GET /v1/sessions`: `sessiondb sessions --json` with the same filters.
async fn sessions(
    State(state): State<AppState>,
    q: std::result::Result<Query<SessionsQuery>, QueryRejection>,
) -> ApiResult {
    let Query(q) = q.map_err(query_error)?;
    blocking(move || {
        let (project, directory) = match q.project.as_deref().map(crate::paths::project_argument) {
            Some((p, d)) => (Some(p), d),
            None => (None, None),
        };
        let filter = SessionFilter {
            project,
            project_contains: None,
            directory,
            tag: q.tag,
            name: q.name,
            branch: q.branch,
            since: q.since.as_deref().map(time_param).transpose()?,
            until: q.until.as_deref().map(time_param).transpose()?,
            limit: q.limit,
            offset: q.offset,
            include_hidden: q.all,
            host: None,
        };
        let sessions = state.store.list_sessions(&filter)?;
        Ok(json_response(StatusCode::OK, pretty(&sessions)?))
    })
    .await
}

fn resolve(store: &Db, session: &str) -> std::result::Result<SessionRef, ApiError> {
    Ok(store.resolve_session(session)?)
}

#[derive(Deserialize)]
struct ResumeQuery {
    session: String,
    at: Option<String>,
    #[serde(default)]
    interactive: bool,
    #[serde(default)]
    continue_interrupted: bool,
    #[serde(default)]
    api: bool,
    model: Option<String>,
    cli_version: Option<String>,
}

/// `GET /v1/resume?session=S[&api=true][&model=M][&cli_version=V]`: `sessiondb resume S
/// --json` (the bundle), or with `api=true` `--api` (the provider `messages` array);
/// `model` is `--model`, `cli_version` `--cli-version` (400 when it is not `X.Y.Z`).
async fn resume(
    State(state): State<AppState>,
    q: std::result::Result<Query<ResumeQuery>, QueryRejection>,
) -> ApiResult {
    let Query(q) = q.map_err(query_error)?;
    let cli_version = match q.cli_version.as_deref().filter(|v| !v.trim().is_empty()) {
        Some(v) => v
            .parse()
            .map_err(|e: BadCliVersion| ApiError::bad_request(format!("cli_version: {e}")))?,
        None => CliVersion::default(),
    };
    heavy(state.heavy.clone(), move || {
        let session = resolve(&state.store, &q.session)?;
        let options = ResumeOptions {
            at: q.at,
            interactive: q.interactive,
            continue_interrupted: q.continue_interrupted,
            model: q.model.filter(|m| !m.trim().is_empty()),
            cli_version,
            ..ResumeOptions::default()
        };
        let body = if q.api {
            pretty(&state.store.resume_api_view(&session, &options)?)?
        } else {
            pretty(&state.store.resume(&session, &options)?)?
        };
        Ok(json_response(StatusCode::OK, body))
    })
    .await
}

#[derive(Deserialize)]
struct MessagesQuery {
    session: String,
    agent: Option<String>,
    limit: Option<i64>,
    #[serde(default)]
    offset: i64,
}

/// `GET /v1/messages?session=S[&agent=ID][&limit=N][&offset=N]`: `sessiondb messages --json`.
async fn messages(
    State(state): State<AppState>,
    q: std::result::Result<Query<MessagesQuery>, QueryRejection>,
) -> ApiResult {
    let Query(q) = q.map_err(query_error)?;
    blocking(move || {
        let session = resolve(&state.store, &q.session)?;
        let messages = match q.agent.as_deref() {
            Some(agent) => state
                .store
                .subagent_messages(&session, agent, q.limit, q.offset)?,
            None => state.store.session_messages(&session, q.limit, q.offset)?,
        };
        Ok(json_response(StatusCode::OK, pretty(&messages)?))
    })
    .await
}

#[derive(Deserialize)]
struct SearchParams {
    q: String,
    project: Option<String>,
    tag: Option<String>,
    role: Option<String>,
    #[serde(default)]
    tools: bool,
    limit: Option<i64>,
}

/// `GET /v1/search?q=TEXT[&project=P][&tag=T][&role=user|assistant][&tools=true][&limit=N]`:
/// `sessiondb search --json`.
async fn search(
    State(state): State<AppState>,
    q: std::result::Result<Query<SearchParams>, QueryRejection>,
) -> ApiResult {
    let Query(q) = q.map_err(query_error)?;
    if let Some(role) = q.role.as_deref() {
        if role != "user" && role != "assistant" {
            return Err(ApiError::bad_request(format!(
                "role {role:?} is not user or assistant"
            )));
        }
    }
    if q.q.trim().is_empty() {
        return Err(ApiError::bad_request("q (the words to find) is empty"));
    }
    blocking(move || {
        let query = SearchQuery {
            text: q.q,
            project: q
                .project
                .as_deref()
                .map(|p| crate::paths::project_argument(p).0),
            tag: q.tag,
            role: q.role,
            tools: q.tools,
            limit: q.limit,
            marks: Some(("**".to_owned(), "**".to_owned())),
        };
        // On SQLite, lines appended since the last search are still queued for the index. A
        // write that fails (a full disk) must not fail the read: the queued lines are left
        // out.
        let (hits, _caught_up) = state.store.search(&query)?;
        Ok(json_response(StatusCode::OK, pretty(&hits)?))
    })
    .await
}
