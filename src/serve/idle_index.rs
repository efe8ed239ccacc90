//! `serve` on a team store indexes the search queue while it is idle, so that the first
//! search after many appends does not pay for all of them (issue 17).
//!
//! One thread, one batch at a time ([`crate::pg::search_queue::index_some`]: at most a
//! catch-up batch of lines, in one short transaction of its own): it starts a batch only
//! when no request of this server has been in flight for [`IDLE`], and looks again before
//! each next batch, so a burst of appends finds at most one batch running. A batch skips
//! the sessions a writer holds and writes only search vectors; an append to a session the
//! batch is indexing waits for that one short transaction (the catch-up's lock order:
//! [`crate::pg::search_queue`]). A failed batch leaves its lines queued for the next
//! search, and the thread waits [`AFTER_ERROR`] before trying again.
//! The SQLite store's catch-up is one write transaction for the whole queue, which would
//! hold appends back: it is not run here.

use crate::backend::Db;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long no request may have been in flight before a batch starts.
pub const IDLE: Duration = Duration::from_secs(2);

/// How long after a failed batch the next one may start.
const AFTER_ERROR: Duration = Duration::from_secs(60);

/// How often an empty queue is looked at again when this server takes no requests (other
/// processes may append).
const RECHECK: Duration = Duration::from_secs(30);

/// Requests in flight, as the indexer sees them; cloned into the router's middleware.
#[derive(Clone, Default)]
pub struct Activity(Arc<Shared>);

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    in_flight: usize,
    /// When the last request ended (or began), or the indexer started.
    last: Option<Instant>,
    /// Requests that ended since the queue was last found empty.
    requests: u64,
    stop: bool,
}

impl Activity {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.0
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A request began; it ends when the guard is dropped.
    pub fn begin(&self) -> InFlight {
        let mut state = self.lock();
        state.in_flight += 1;
        state.last = Some(Instant::now());
        InFlight(self.clone())
    }
}

/// A request in flight (see [`Activity::begin`]).
pub struct InFlight(Activity);

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.in_flight -= 1;
        state.last = Some(Instant::now());
        state.requests += 1;
        self.0 .0.changed.notify_all();
    }
}

/// The indexing thread; [`IdleIndexer::stop`] ends it after the batch it may be running.
pub struct IdleIndexer {
    activity: Activity,
    thread: JoinHandle<()>,
}

impl IdleIndexer {
    /// Starts the thread for a team store; `None` for a SQLite store (see the module docs).
    ///
    /// # Errors
    /// Fails when the thread cannot start.
    pub fn start(store: &Arc<Db>, activity: &Activity) -> std::io::Result<Option<IdleIndexer>> {
        if !store.indexes_while_idle() {
            return Ok(None);
        }
        // Idle from the start: a queue other writers left is indexed too.
        activity.lock().last.get_or_insert_with(Instant::now);
        let store = store.clone();
        let watched = activity.clone();
        let thread = std::thread::Builder::new()
            .name("search-index".into())
            .spawn(move || run(&store, &watched))?;
        Ok(Some(IdleIndexer {
            activity: activity.clone(),
            thread,
        }))
    }

    /// Stops the thread and waits for it (at most the batch it is running).
    pub fn stop(self) {
        self.activity.lock().stop = true;
        self.activity.0.changed.notify_all();
        let _ = self.thread.join();
    }
}

/// The thread: waits for idleness, indexes a batch, and again, until the queue is empty;
/// then waits for this server's next request (or [`RECHECK`]).
fn run(store: &Db, activity: &Activity) {
    let mut not_before = Instant::now();
    let mut drained_at: Option<(Instant, u64)> = None;
    loop {
        {
            let mut state = activity.lock();
            loop {
                if state.stop {
                    return;
                }
                let now = Instant::now();
                let idle_since = state.last.map_or(now, |t| t + IDLE);
                let wait_until = match drained_at {
                    // Nothing queued when last looked: look again after this server's
                    // next request, or after a while for other writers.
                    Some((when, requests)) if state.requests == requests => {
                        (when + RECHECK).max(idle_since)
                    }
                    _ => idle_since,
                }
                .max(not_before);
                if state.in_flight == 0 && now >= wait_until {
                    break;
                }
                let timeout = if state.in_flight > 0 {
                    RECHECK
                } else {
                    wait_until.saturating_duration_since(now)
                };
                state = activity
                    .0
                    .changed
                    .wait_timeout(state, timeout.max(Duration::from_millis(10)))
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .0;
            }
        }
        let requests = activity.lock().requests;
        match store.index_idle_batch() {
            Ok(Some(_)) => drained_at = None,
            Ok(None) => drained_at = Some((Instant::now(), requests)),
            Err(e) => {
                eprintln!("sessiondb serve: indexing the search queue failed: {e}");
                not_before = Instant::now() + AFTER_ERROR;
            }
        }
    }
}
