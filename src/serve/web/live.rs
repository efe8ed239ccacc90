//! Live pages: the sessions list and a session's page follow the store as it is written,
//! over server-sent events (`GET /events`, `GET /session/P/S/events`).
//!
//! Writes come from anywhere — this server's API, `capture` or `import` in another process,
//! another machine on a team store — so the store is asked, not told: while at least one
//! page listens, one task polls [`Db::change_marker`] every [`POLL`] (a single indexed
//! query on either engine) and wakes the listeners when it moves. Each listener then
//! checks what its page shows (the whole store for the list, the session's catalog entry
//! for a session page) and, when that changed, sends one `change` event; it sends at most
//! one event per [`GAP`], so a session written many times a second costs its readers one
//! refresh a second. Nothing polls while no page listens.
//!
//! The page's script answers an event by fetching the part of the page that changes (the
//! list, or the conversation as a fragment) and putting in what differs.

use super::{find_session, WebState};
use crate::backend::Db;
use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use serde::Deserialize;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// How often the store's change marker is read while a page listens.
const POLL: Duration = Duration::from_millis(400);
/// The shortest time between two events to one page.
const GAP: Duration = Duration::from_millis(1000);
/// A comment sent when nothing happened for this long, so that proxies and the browser keep
/// the stream open and a closed page is noticed.
const KEEPALIVE: Duration = Duration::from_secs(20);

/// The poller shared by every listening page.
pub(crate) struct Live {
    /// Bumped each time the change marker moves.
    changes: watch::Sender<u64>,
    /// Pages listening now.
    listeners: AtomicUsize,
    /// Whether the polling task runs.
    polling: AtomicBool,
    /// Set when the server shuts down: every stream ends at once.
    closing: watch::Sender<bool>,
}

impl Live {
    /// A poller with nobody listening yet.
    pub(crate) fn new() -> Live {
        Live {
            changes: watch::channel(0).0,
            listeners: AtomicUsize::new(0),
            polling: AtomicBool::new(false),
            closing: watch::channel(false).0,
        }
    }

    /// Ends every stream and the poller (the server is shutting down; a stream left open
    /// would hold its connection through the shutdown grace).
    pub(crate) fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Registers a listener (until the returned guard drops) and starts the poller if it
    /// does not run.
    fn listen(self: &Arc<Self>, db: &Arc<Db>) -> (Listener, watch::Receiver<u64>) {
        self.listeners.fetch_add(1, Ordering::SeqCst);
        let guard = Listener(self.clone());
        if !self.polling.swap(true, Ordering::SeqCst) {
            tokio::spawn(poll(self.clone(), db.clone()));
        }
        (guard, self.changes.subscribe())
    }
}

/// One listening page; unregisters when dropped.
struct Listener(Arc<Live>);

impl Drop for Listener {
    fn drop(&mut self) {
        self.0.listeners.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Reads the change marker every [`POLL`] while anyone listens; wakes them when it moves.
async fn poll(live: Arc<Live>, db: Arc<Db>) {
    let mut last: Option<String> = None;
    loop {
        if live.listeners.load(Ordering::SeqCst) == 0 {
            live.polling.store(false, Ordering::SeqCst);
            // A listener that came in between saw `polling` still set: keep going for it.
            if live.listeners.load(Ordering::SeqCst) == 0
                || live.polling.swap(true, Ordering::SeqCst)
            {
                return;
            }
        }
        let db2 = db.clone();
        if let Ok(Ok(marker)) = tokio::task::spawn_blocking(move || db2.change_marker()).await {
            if last.as_ref().is_some_and(|l| *l != marker) {
                live.changes.send_modify(|n| *n = n.wrapping_add(1));
            }
            last = Some(marker);
        }
        let mut closing = live.closing.subscribe();
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = closed(&mut closing) => return,
        }
    }
}

/// Resolves when the server shuts down.
async fn closed(closing: &mut watch::Receiver<bool>) {
    let _ = closing.wait_for(|c| *c).await;
}

/// What a page says it shows: the state it was rendered from.
#[derive(Deserialize, Default)]
pub(crate) struct LiveParams {
    since: Option<String>,
}

/// `GET /events[?since=MARKER]`: a `change` event whenever the store changes (for the
/// sessions list).
pub(crate) async fn store_events(
    State(state): State<WebState>,
    params: Result<Query<LiveParams>, QueryRejection>,
) -> Response {
    let since = params.ok().and_then(|Query(p)| p.since);
    events(state, since, |db| db.change_marker().ok())
}

/// `GET /session/P/S/events[?since=STATE]`: a `change` event whenever the session changes
/// (see [`session_state`]).
pub(crate) async fn session_events(
    State(state): State<WebState>,
    Path((project, session_id)): Path<(String, String)>,
    params: Result<Query<LiveParams>, QueryRejection>,
) -> Response {
    let since = params.ok().and_then(|Query(p)| p.since);
    events(state, since, move |db| {
        session_state(db, &project, &session_id)
    })
}

/// What a session page shows changes with: the session's catalog entry (its last change,
/// size, messages, sub-agents, title and tag); `None` when it is gone.
pub(crate) fn session_state(db: &Db, project: &str, session_id: &str) -> Option<String> {
    let session = find_session(db, project, session_id).ok()?;
    let i = db.session_info(&session, None).ok()?;
    let text = format!(
        "{}\u{0}{}\u{0}{}\u{0}{}\u{0}{:?}\u{0}{:?}",
        i.last_modified, i.file_size, i.message_count, i.subagent_count, i.custom_title, i.tag
    );
    // Short and safe in a URL: a hash of it.
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    Some(format!("{hash:016x}"))
}

/// The event stream: `state` is what the page shows, read again after each change of the
/// store; an event goes out when it differs from what the page last had (`since` at first).
fn events<F>(web: WebState, since: Option<String>, state: F) -> Response
where
    F: Fn(&Db) -> Option<String> + Send + Sync + 'static,
{
    let (sender, receiver) = mpsc::channel::<Bytes>(4);
    let live = web.live.clone();
    let db = web.db.clone();
    let state = Arc::new(state);
    tokio::spawn(async move {
        let (_listener, mut changes) = live.listen(&db);
        let mut closing = live.closing.subscribe();
        // The browser reconnects after this long when the stream breaks.
        if sender
            .send(Bytes::from_static(b"retry: 2000\n\n"))
            .await
            .is_err()
        {
            return;
        }
        let mut shown = since;
        // A change between the page's rendering and this stream is sent at once.
        let mut check = shown.is_some();
        loop {
            if check {
                let (db, state) = (db.clone(), state.clone());
                let now = tokio::task::spawn_blocking(move || state(&db))
                    .await
                    .ok()
                    .flatten();
                if now.is_some() && now != shown {
                    let event =
                        format!("event: change\ndata: {}\n\n", now.as_deref().unwrap_or(""));
                    if sender.send(Bytes::from(event)).await.is_err() {
                        return;
                    }
                    shown = now;
                    // At most one event per GAP.
                    tokio::select! {
                        () = tokio::time::sleep(GAP) => {}
                        () = closed(&mut closing) => return,
                    }
                } else if shown.is_none() {
                    shown = now;
                }
            }
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    check = true;
                }
                () = tokio::time::sleep(KEEPALIVE) => {
                    if sender.send(Bytes::from_static(b": still here\n\n")).await.is_err() {
                        return;
                    }
                    check = false;
                }
                () = closed(&mut closing) => return,
                () = sender.closed() => return,
            }
        }
    });
    let mut response = Body::new(Stream(receiver)).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A response body fed by a channel: ends when the sending task does.
struct Stream(mpsc::Receiver<Bytes>);

impl http_body::Body for Stream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|c| Ok(Frame::data(c))))
    }
}
