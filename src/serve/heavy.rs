//! A bound on the heavy renders (issue 28, item 8): the session pages (transcript, resume
//! view, a sub-agent, one record, a tool's fold), the download and the API's `/v1/resume`.
//! Sixteen resume views of a 50 MB session at once took `serve` to 3.85 GB, and the
//! allocator kept most of it afterwards; at most [`limit`] of them now run at once, the
//! others wait their turn (their connections stay open), so the peak is a few renders'
//! worth whatever the burst. A streamed answer ([`super::stream`]) keeps its place until
//! its client has taken the last chunk. When the last heavy render ends, the memory they
//! freed is given back to the system ([`super::trim`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How many heavy renders run at once: the machine's cores, at least 2 and at most 8.
pub fn limit() -> usize {
    std::thread::available_parallelism()
        .map_or(2, std::num::NonZeroUsize::get)
        .clamp(2, 8)
}

/// The places of one server's heavy renders ([`crate::serve::http::Config::heavy`]). One
/// per server, not per process, so that a test can hold its places ([`Gate::try_hold`])
/// and see which routes wait for them.
#[derive(Debug)]
pub struct Gate {
    places: Arc<Semaphore>,
    /// Heavy renders running now.
    running: AtomicUsize,
    /// The most that ran at once.
    most: AtomicUsize,
}

impl Default for Gate {
    fn default() -> Self {
        Gate::new(limit())
    }
}

impl Gate {
    /// A gate of `places` places.
    pub fn new(places: usize) -> Gate {
        Gate {
            places: Arc::new(Semaphore::new(places)),
            running: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
        }
    }

    /// Runs `f` on the blocking pool once a place is free. The place is held by the work
    /// itself, not by the request: a client that goes away while its render runs does not
    /// free the place before the render ends.
    ///
    /// # Errors
    /// When the blocking task panicked or was cancelled.
    pub async fn run<T, F>(self: Arc<Self>, f: F) -> Result<T, tokio::task::JoinError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.start(f).await.await
    }

    /// Starts `f` on the blocking pool once a place is free, and answers its handle without
    /// waiting for it to end: a streamed answer ([`crate::serve::stream`]) is sent while its
    /// render runs. Dropped while it waits, it starts nothing.
    pub async fn start<T, F>(self: Arc<Self>, f: F) -> tokio::task::JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let permit = self.hold().await;
        tokio::task::spawn_blocking(move || {
            let _place = Place::take(self, permit);
            f()
        })
    }

    /// Waits for a place, kept until the permit is dropped.
    async fn hold(&self) -> OwnedSemaphorePermit {
        self.places
            .clone()
            .acquire_owned()
            .await
            .expect("the heavy-render gate is never closed")
    }

    /// Takes a free place, if there is one, and keeps it until the permit is dropped: a
    /// test holds every place with it to see which routes wait for one.
    pub fn try_hold(&self) -> Option<OwnedSemaphorePermit> {
        self.places.clone().try_acquire_owned().ok()
    }

    /// The most heavy renders that ran at once since the server started.
    pub fn most_at_once(&self) -> usize {
        self.most.load(Ordering::SeqCst)
    }
}

/// One place among the heavy renders, given back when dropped (a panic included).
struct Place {
    gate: Arc<Gate>,
    _permit: OwnedSemaphorePermit,
}

impl Place {
    fn take(gate: Arc<Gate>, permit: OwnedSemaphorePermit) -> Place {
        let now = gate.running.fetch_add(1, Ordering::SeqCst) + 1;
        gate.most.fetch_max(now, Ordering::SeqCst);
        Place {
            gate,
            _permit: permit,
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        if self.gate.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            // The burst is over: give the memory its renders freed back to the system.
            super::trim::release_free_memory();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn no_more_than_the_limit_run_at_once() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(64)
            .enable_all()
            .build()
            .expect("runtime");
        let gate = Arc::new(Gate::default());
        runtime.block_on(async {
            let renders: Vec<_> = (0..4 * limit())
                .map(|i| {
                    tokio::spawn(gate.clone().run(move || {
                        std::thread::sleep(Duration::from_millis(30));
                        i
                    }))
                })
                .collect();
            let mut done = 0;
            for r in renders {
                r.await.expect("task").expect("render");
                done += 1;
            }
            assert_eq!(done, 4 * limit());
        });
        assert_eq!(gate.most_at_once(), limit());
        assert_eq!(gate.running.load(Ordering::SeqCst), 0);
    }
}
