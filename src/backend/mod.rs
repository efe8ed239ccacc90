//! One library API over the two stores: [`Db`] is a SQLite file ([`Store`]) or a
//! PostgreSQL team store (`PgStore`), chosen by the target's form (`postgres://` or
//! `postgresql://` is a team store; anything else a file). Each method is a store verb;
//! callers never branch on the backend, and neither does this folder: a store is an
//! [`engine::Engine`], and the verbs are written once over it.
//!
//! This file holds [`Db`], opening by path or URL, the read dispatches ([`Db::read`] and
//! [`Db::lookup`], over the ports of `port.rs`) and what only one engine has (upkeep, a
//! team store's connections, closing at exit). The engines answer in `sqlite.rs` and
//! `pg.rs`; the verbs sit beside this file by responsibility, each an `impl Db` block:
//! finding and listing sessions (`lookup.rs`), reading what a session holds (`read.rs`),
//! search (`search.rs`), changing the store (`write.rs`), and the SessionStore protocol's
//! transactions (`streams.rs`).

mod engine;
mod lookup;
#[cfg(feature = "postgres")]
mod pg;
mod port;
mod read;
mod search;
mod sqlite;
mod streams;
mod write;

use crate::checkpoint::Checkpointer;
use crate::error::Result;
use crate::pg::url::is_postgres_url;
#[cfg(feature = "postgres")]
use crate::pg::PgStore;
use crate::store::Store;
use engine::{Engine, Once};
use port::{Lookups, ReadTx};
use std::time::Duration;

/// An open store of either kind.
pub struct Db {
    engine: Box<dyn Engine>,
}

impl Db {
    /// Opens `target`, creating it when it is a file that does not exist yet (a team
    /// store's database must exist; its tables are created).
    ///
    /// # Errors
    /// As [`Store::open`] or `PgStore::connect`.
    pub fn open(target: &str) -> Result<Db> {
        if is_postgres_url(target) {
            return Db::connect_team_store(target);
        }
        Ok(Store::open(target)?.into())
    }

    /// Opens an existing store for a verb that only reads (see [`Store::open_read`]).
    ///
    /// # Errors
    /// As [`Store::open_read`] or `PgStore::connect`.
    pub fn open_read(target: &str) -> Result<Db> {
        if is_postgres_url(target) {
            return Db::connect_team_store(target);
        }
        Ok(Store::open_read(target)?.into())
    }

    /// Opens an existing store for a verb that changes it (see [`Store::open_existing`]).
    ///
    /// # Errors
    /// As [`Store::open_existing`] or `PgStore::connect`.
    pub fn open_existing(target: &str) -> Result<Db> {
        if is_postgres_url(target) {
            return Db::connect_team_store(target);
        }
        Ok(Store::open_existing(target)?.into())
    }

    #[cfg(feature = "postgres")]
    fn connect_team_store(target: &str) -> Result<Db> {
        Ok(PgStore::connect(target)?.into())
    }

    /// A build without the `postgres` feature refuses a team store's URL (never takes it
    /// for a file name).
    #[cfg(not(feature = "postgres"))]
    fn connect_team_store(target: &str) -> Result<Db> {
        Err(crate::error::Error::Invalid(format!(
            "{}: this build of sessiondb has no team store (build it with the `postgres` \
             feature)",
            crate::pg::url::redact(target)
        )))
    }

    /// What to call the store in messages: the file's path, or the URL without its password.
    pub fn shown(&self) -> String {
        self.engine.shown()
    }
}

impl Db {
    /// Runs `f` over the engine's [`ReadTx`]: a pooled reader of a SQLite store (each
    /// statement its own snapshot, unless the answer opens one, as the SDK readers do), or
    /// a team store's read-only transaction (one snapshot, see `PgStore::read`).
    fn read<T>(&self, f: impl FnOnce(&mut dyn ReadTx) -> Result<T>) -> Result<T> {
        let mut once = Once::new(f);
        self.engine.read(&mut |tx| once.run(tx))?;
        once.value()
    }

    /// Runs `f` over the engine's [`Lookups`]: a pooled reader of a SQLite store, or a team
    /// store's connection outside any transaction (see `PgStore::read_single`).
    fn lookup<T>(&self, f: impl FnOnce(&mut dyn Lookups) -> Result<T>) -> Result<T> {
        let mut once = Once::new(f);
        self.engine.lookup(&mut |tx| once.run(tx))?;
        once.value()
    }
}

impl Db {
    /// Starts the upkeep a long-running server needs: WAL checkpoints on a thread of their
    /// own for a SQLite store ([`Checkpointer`]); a team store needs none (`None`).
    ///
    /// # Errors
    /// When the checkpoint thread cannot start.
    pub fn start_upkeep(&self, period: Duration) -> Result<Option<Checkpointer>> {
        self.engine.start_upkeep(period)
    }

    /// Stops what [`Db::start_upkeep`] started, after a last checkpoint.
    ///
    /// # Errors
    /// When the last checkpoint fails.
    pub fn stop_upkeep(&self, upkeep: Checkpointer) -> Result<()> {
        self.engine.stop_upkeep(upkeep)
    }

    /// Whether searches are indexed by a queue that a server drains while idle (a team
    /// store). A SQLite store catches its index up inside the search itself, in one write
    /// transaction that would hold appends back, so it has no idle work.
    pub fn indexes_while_idle(&self) -> bool {
        self.engine.indexes_while_idle()
    }

    /// Indexes one batch of the search queue (see [`Db::indexes_while_idle`]): the lines
    /// indexed, or `None` when no batch was free (always `None` on SQLite).
    ///
    /// # Errors
    /// On a database error; the batch's lines stay queued.
    pub fn index_idle_batch(&self) -> Result<Option<u64>> {
        self.engine.index_idle_batch()
    }
}

impl Db {
    /// Lets a team store run up to `n` transactions at once, each on a connection of its
    /// own (see `PgStore::with_connections`); a SQLite store already reads in parallel.
    pub fn with_connections(self, n: usize) -> Db {
        Db {
            engine: self.engine.with_connections(n),
        }
    }

    /// Ends the use of a store by a process that exits right after, without closing a
    /// SQLite store: the exit releases the file and its locks as closing would, and closing
    /// first frees every object of the parsed schema one by one (about 6 % of `sessions
    /// --limit 1`). Only for a store opened to read ([`Db::open_read`]), which leaves
    /// nothing to write on close. A team store is closed: its server expects a goodbye.
    pub fn close_for_exit(self) {
        self.engine.close_for_exit();
    }
}

impl From<Store> for Db {
    fn from(store: Store) -> Db {
        Db {
            engine: Box::new(store),
        }
    }
}

#[cfg(feature = "postgres")]
impl From<PgStore> for Db {
    fn from(store: PgStore) -> Db {
        Db {
            engine: Box::new(store),
        }
    }
}
