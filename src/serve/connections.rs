//! `serve`'s accept loop (hyper's HTTP/1 connections, written out here instead of
//! `axum::serve` for the limits a server on a shared machine needs):
//!
//! * **A connection limit**: at most [`Limits::max_connections`] connections, fewer when the
//!   open-file limit would not allow them. A connection beyond the limit closes the one that
//!   has been without a request in progress the longest (idle, or still sending its request
//!   head); when every connection has a request in progress, the new one is closed. So idle
//!   or trickling clients cannot lock a healthy one out, and requests in progress are never
//!   cut for room.
//! * **An idle timeout**: a connection without a request in progress and without a byte of
//!   the next one is closed after [`Limits::idle_timeout`].
//! * **A header-read timeout**: a request head must be complete within
//!   [`Limits::header_read_timeout`] of its first byte, else the connection is closed.
//! * **A body-read timeout**: a request body must have arrived within
//!   [`Limits::body_read_timeout`] of its head; reading it fails after that (408).
//! * **Shutdown**: the listener stops (connections the kernel had already accepted are still
//!   taken), connections without a request in progress close (one that has not sent a byte
//!   after [`SHUTDOWN_LINGER`], for a request sent just before the signal), requests in
//!   progress get [`Limits::shutdown_grace`] to finish (their connections then close);
//!   whatever still runs after that is cut. Handlers read a whole body before
//!   they touch the store and write in one transaction, so a cut request changed nothing.
//!
//! Every request passes [`Policy::check`] before the router.

use super::guard::Policy;
use super::response::{add_security_headers, ApiError};
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use axum::Router;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tokio::task::JoinSet;
use tokio::time::{sleep, sleep_until, Instant, Sleep};
use tower::ServiceExt;

/// Connection limits and timeouts; [`Limits::default`] has the values `sessiondb serve` uses.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The most connections open at once (lowered to fit the open-file limit). Default 1024.
    pub max_connections: usize,
    /// How long a connection may wait without a request in progress. Default 30 s.
    pub idle_timeout: Duration,
    /// How long a request head may take from its first byte. Default 10 s.
    pub header_read_timeout: Duration,
    /// How long a request body may take from the end of its head. Default 30 s.
    pub body_read_timeout: Duration,
    /// How long shutdown waits for requests in progress. Default 10 s.
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            idle_timeout: Duration::from_secs(30),
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// File descriptors kept for everything but connections: the database files of the reader
/// pool, the writer and the checkpointer, the listener, the runtime, standard streams.
const RESERVED_FILES: u64 = 64;

/// How long the loop waits after a failed accept (out of file descriptors: for the
/// connection closed to make room).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// How long shutdown waits for a request on a connection that has not sent a byte yet (one
/// sent just before the signal), and for connections the kernel accepted before it.
const SHUTDOWN_LINGER: Duration = Duration::from_millis(100);

/// How serving ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stopped {
    /// Connections with a request still in progress when the shutdown grace ran out.
    pub cut: usize,
}

/// The connection limit for `limits` under the process's open-file limit.
fn connection_limit(limits: &Limits) -> usize {
    let files = open_file_limit().unwrap_or(u64::MAX);
    let fit = usize::try_from(files.saturating_sub(RESERVED_FILES)).unwrap_or(usize::MAX);
    limits.max_connections.min(fit).max(1)
}

#[cfg(unix)]
fn open_file_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

#[cfg(not(unix))]
fn open_file_limit() -> Option<u64> {
    None
}

#[cfg(unix)]
fn out_of_files(e: &std::io::Error) -> bool {
    use rustix::io::Errno;
    matches!(Errno::from_io_error(e), Some(Errno::MFILE | Errno::NFILE))
}

#[cfg(not(unix))]
fn out_of_files(_: &std::io::Error) -> bool {
    false
}

/// Where a connection is between requests.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// No request in progress since `since`; `head_from` is when the first byte of the next
    /// head arrived.
    Idle {
        since: Instant,
        head_from: Option<Instant>,
    },
    /// A request is in the service (its body being read, the handler running).
    Busy,
}

/// One connection's state, shared by its task, its reads, its service and the accept loop.
struct Conn {
    phase: Mutex<Phase>,
    /// The accept loop chose it to make room.
    evict: AtomicBool,
    /// It has answered a request (hyper then closes it itself on a graceful shutdown once
    /// the answer is written; a connection that never had a request it would keep open).
    served: AtomicBool,
    /// Wakes the connection's task to look at its phase again.
    wake: Notify,
}

impl Conn {
    fn new() -> Conn {
        Conn {
            phase: Mutex::new(Phase::Idle {
                since: Instant::now(),
                head_from: None,
            }),
            evict: AtomicBool::new(false),
            served: AtomicBool::new(false),
            wake: Notify::new(),
        }
    }

    fn phase(&self) -> MutexGuard<'_, Phase> {
        self.phase
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn bytes_arrived(&self) {
        let mut phase = self.phase();
        if let Phase::Idle {
            head_from: from @ None,
            ..
        } = &mut *phase
        {
            *from = Some(Instant::now());
            drop(phase);
            self.wake.notify_one();
        }
    }

    /// Marks a request in progress until the returned guard drops.
    fn busy(self: &Arc<Self>) -> BusyGuard {
        *self.phase() = Phase::Busy;
        BusyGuard(self.clone())
    }

    /// When the connection times out, if nothing happens before (`None`: busy).
    fn deadline(&self, limits: &Limits) -> Option<Instant> {
        match *self.phase() {
            Phase::Idle {
                head_from: Some(t), ..
            } => Some(t + limits.header_read_timeout),
            Phase::Idle { since, .. } => Some(since + limits.idle_timeout),
            Phase::Busy => None,
        }
    }

    /// Never had a request, nor a byte of one.
    fn fresh(&self) -> bool {
        !self.served.load(Ordering::Relaxed)
            && matches!(
                *self.phase(),
                Phase::Idle {
                    head_from: None,
                    ..
                }
            )
    }

    /// Chosen to make room, with no request in progress.
    fn evicted(&self) -> bool {
        self.evict.load(Ordering::Relaxed) && matches!(*self.phase(), Phase::Idle { .. })
    }

    fn idle_since(&self) -> Option<Instant> {
        match *self.phase() {
            Phase::Idle { since, .. } => Some(since),
            Phase::Busy => None,
        }
    }
}

struct BusyGuard(Arc<Conn>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.served.store(true, Ordering::Relaxed);
        *self.0.phase() = Phase::Idle {
            since: Instant::now(),
            head_from: None,
        };
        self.0.wake.notify_one();
    }
}

/// The open connections, for the accept loop to choose one to close.
#[derive(Default)]
struct Registry {
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        self.conns
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Tells the connection without a request in progress for the longest time to close;
    /// false when there is none.
    fn evict_one(&self) -> bool {
        let conns = self.lock();
        let victim = conns
            .values()
            .filter(|c| !c.evict.load(Ordering::Relaxed))
            .filter_map(|c| c.idle_since().map(|since| (since, c)))
            .min_by_key(|(since, _)| *since);
        match victim {
            Some((_, conn)) => {
                conn.evict.store(true, Ordering::Relaxed);
                conn.wake.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Removes a connection from the registry when its task ends, however it ends.
struct Registered {
    registry: Arc<Registry>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.id);
    }
}

/// Serves `router` on `listener` under `policy` and `limits` until `shutdown` resolves,
/// then shuts down as the module docs say.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    policy: Arc<Policy>,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) -> Stopped {
    let limit = connection_limit(&limits);
    let grace = limits.shutdown_grace;
    let app = App {
        router,
        policy,
        limits: Arc::new(limits),
    };
    let registry = Arc::new(Registry::default());
    let (stop, stopping) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let mut start = Starter {
        registry: registry.clone(),
        app,
        stopping,
        next_id: 0,
    };
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let open = registry.lock().len();
                    if open >= limit && !registry.evict_one() {
                        // Every connection has a request in progress: no room.
                        drop(stream);
                        continue;
                    }
                    start.spawn(&mut tasks, stream);
                }
                Err(e) => {
                    if out_of_files(&e) {
                        registry.evict_one();
                    }
                    sleep(ACCEPT_BACKOFF).await;
                }
            },
        }
    }
    // Receivers see the change even when they start watching later.
    let _ = stop.send(true);
    // Connections the kernel completed before the signal are served like the others.
    let until = Instant::now() + SHUTDOWN_LINGER;
    while let Ok(Ok((stream, _))) = tokio::time::timeout_at(until, listener.accept()).await {
        start.spawn(&mut tasks, stream);
    }
    drop(listener);
    let grace = sleep(grace);
    tokio::pin!(grace);
    loop {
        tokio::select! {
            next = tasks.join_next() => if next.is_none() { break },
            () = &mut grace => break,
        }
    }
    let cut = tasks.len();
    tasks.shutdown().await;
    Stopped { cut }
}

/// Registers and spawns the task of each accepted connection.
struct Starter {
    registry: Arc<Registry>,
    app: App,
    stopping: watch::Receiver<bool>,
    next_id: u64,
}

impl Starter {
    fn spawn(&mut self, tasks: &mut JoinSet<()>, stream: TcpStream) {
        let Ok(local) = stream.local_addr() else {
            return;
        };
        self.next_id += 1;
        let conn = Arc::new(Conn::new());
        self.registry.lock().insert(self.next_id, conn.clone());
        let registered = Registered {
            registry: self.registry.clone(),
            id: self.next_id,
        };
        tasks.spawn(drive(
            stream,
            local,
            conn,
            registered,
            self.app.clone(),
            self.stopping.clone(),
        ));
    }
}

/// What every connection serves: the guard, then the router, under the limits; every
/// answer, the guard's refusals included, with the security headers.
#[derive(Clone)]
struct App {
    router: Router,
    policy: Arc<Policy>,
    limits: Arc<Limits>,
}

/// Runs one connection: hyper's HTTP/1 over `stream`, closed by the timeouts, an eviction or
/// shutdown whenever no request is in progress.
async fn drive(
    stream: TcpStream,
    local: SocketAddr,
    conn: Arc<Conn>,
    _registered: Registered,
    app: App,
    mut stopping: watch::Receiver<bool>,
) {
    let io = TokioIo::new(Tracked {
        stream,
        conn: conn.clone(),
    });
    let limits = app.limits.clone();
    let service = {
        let conn = conn.clone();
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let busy = conn.busy();
            let router = app.router.clone();
            let policy = app.policy.clone();
            let body_timeout = app.limits.body_read_timeout;
            async move {
                let _busy = busy;
                let (parts, body) = request.into_parts();
                let mut response = match policy.check(&parts, local) {
                    Err(refusal) => ApiError::new(refusal.status, refusal.message).into_response(),
                    Ok(()) => {
                        let body = Body::new(Deadline::new(body, body_timeout));
                        match router.oneshot(Request::from_parts(parts, body)).await {
                            Ok(response) => response,
                            Err(never) => match never {},
                        }
                    }
                };
                add_security_headers(response.headers_mut());
                Ok::<Response, Infallible>(response)
            }
        })
    };
    // The header-read timeout is ours (hyper's starts when a connection waits for a head,
    // idle or not); hyper needs no timer then.
    let connection = hyper::server::conn::http1::Builder::new()
        .header_read_timeout(None)
        .serve_connection(io, service);
    tokio::pin!(connection);
    let mut shutting_down = false;
    loop {
        if !shutting_down && *stopping.borrow_and_update() {
            shutting_down = true;
            // Hyper closes a connection between requests once its last answer is written,
            // and one with a request in progress after answering it.
            connection.as_mut().graceful_shutdown();
            if conn.fresh() {
                // A request sent just before the signal may not have been read yet.
                if tokio::time::timeout(SHUTDOWN_LINGER, connection.as_mut())
                    .await
                    .is_ok()
                    || conn.fresh()
                {
                    return;
                }
            }
        }
        let deadline = conn.deadline(&limits);
        if deadline.is_some_and(|d| d <= Instant::now()) || conn.evicted() {
            // No request in progress: dropping the connection closes it.
            return;
        }
        tokio::select! {
            _ = connection.as_mut() => return,
            () = conn.wake.notified() => {}
            () = sleep_until_some(deadline) => {}
            _ = stopping.changed(), if !shutting_down => {}
        }
    }
}

async fn sleep_until_some(deadline: Option<Instant>) {
    match deadline {
        Some(d) => sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// The connection's socket, noting when the bytes of a request head start to arrive.
struct Tracked {
    stream: TcpStream,
    conn: Arc<Conn>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.conn.bytes_arrived();
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// A request body that fails with [`BodyTimeout`] once its time is up.
struct Deadline {
    body: Incoming,
    timer: Pin<Box<Sleep>>,
    limit: Duration,
}

impl Deadline {
    fn new(body: Incoming, limit: Duration) -> Deadline {
        Deadline {
            body,
            timer: Box::pin(sleep(limit)),
            limit,
        }
    }
}

/// The error of a request body that did not arrive in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyTimeout(pub Duration);

impl std::fmt::Display for BodyTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the request body did not arrive within {} s",
            self.0.as_secs_f64()
        )
    }
}

impl std::error::Error for BodyTimeout {}

impl http_body::Body for Deadline {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        if self.timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(Box::new(BodyTimeout(self.limit)))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
