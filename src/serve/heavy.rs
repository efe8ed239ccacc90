//! A bound on the renders that hold a whole session in memory (issue 28, item 8): the
//! session pages (transcript, resume view, a sub-agent, one record, a tool's fold), the
//! download and the API's `/v1/resume`. Sixteen resume views of a 50 MB session at once
//! took `serve` to 3.85 GB, and the allocator kept most of it afterwards; at most
//! [`limit`] of them now run at once, the others wait their turn (their connections stay
//! open), so the peak is a few renders' worth whatever the burst.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;
use tokio::sync::Semaphore;

/// How many heavy renders run at once: the machine's cores, at least 2 and at most 8.
pub fn limit() -> usize {
    std::thread::available_parallelism()
        .map_or(2, std::num::NonZeroUsize::get)
        .clamp(2, 8)
}

static GATE: LazyLock<Semaphore> = LazyLock::new(|| Semaphore::new(limit()));

/// Heavy renders running now (for tests and the log).
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// The most that ran at once since the process started.
static MOST: AtomicUsize = AtomicUsize::new(0);

/// Runs `f` on the blocking pool once a place among the [`limit`] heavy renders is free.
/// The place is held by the work itself, not by the request: a client that goes away
/// while its render runs does not free the place before the render ends.
///
/// # Errors
/// When the blocking task panicked or was cancelled.
pub async fn run<T, F>(f: F) -> Result<T, tokio::task::JoinError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let permit = GATE
        .acquire()
        .await
        .expect("the heavy-render gate is never closed");
    permit.forget();
    tokio::task::spawn_blocking(move || {
        let _place = Place::take();
        f()
    })
    .await
}

/// One place among the heavy renders, given back when dropped (a panic included).
struct Place;

impl Place {
    fn take() -> Place {
        let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
        MOST.fetch_max(now, Ordering::SeqCst);
        Place
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        GATE.add_permits(1);
    }
}

/// The most heavy renders that ran at once since the process started.
pub fn most_at_once() -> usize {
    MOST.load(Ordering::SeqCst)
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
        runtime.block_on(async {
            let renders: Vec<_> = (0..4 * limit())
                .map(|i| {
                    tokio::spawn(run(move || {
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
        assert_eq!(most_at_once(), limit());
        assert_eq!(RUNNING.load(Ordering::SeqCst), 0);
    }
}
