//! The team store: the same sessiondb on PostgreSQL.
//!
//! [`PgStore`] is the PostgreSQL counterpart of [`crate::store::Store`]: a few connections to a
//! database named by a `postgres://` URL, its own migrations (`migrations_pg/`), and every
//! write in one transaction. The rules that do not depend on the engine (line reading and
//! projection, the catalog's fields, resume's chain and repair) are the shared ones of the
//! crate; this module holds only the SQL that reaches them.
//!
//! Many processes on many machines may write one database at once: uniqueness is kept by
//! constraints (`ON CONFLICT`), never by a check and then an insert.

pub mod backup;
pub mod catalog;
pub mod check;
mod decode;
mod delete;
pub mod export;
pub mod fork;
mod history;
pub mod import;
pub mod metadata;
pub mod password;
pub(crate) mod pool;
pub mod query;
pub mod record;
pub mod reindex;
pub mod restore;
pub mod resume;
pub(crate) mod rows;
pub mod sdk;
pub mod search;
pub mod search_queue;
pub mod streams;
pub mod sync;
pub mod tls;
pub mod url;
pub mod usage;

use crate::error::{Error, Result};
pub(crate) use pool::prepared;
use pool::{connect_reason, Held, Link, Pool};
use postgres::{Client, Transaction};

mod embedded {
    refinery::embed_migrations!("migrations_pg");
}

/// A lock number that serializes migrations of one database across processes
/// (`pg_advisory_lock`): two processes opening a new database at once must not both
/// create its tables.
const MIGRATION_LOCK: i64 = 0x5e55_10db;

/// The store's write lock (`pg_advisory_xact_lock`, number 0x5e55_0027): every write
/// transaction takes it shared as its first statement, before any row lock; a rebuild of the
/// usage projection takes it exclusively ([`PgStore::write_alone`]). A rebuild locks a
/// session's row and then the projection's rows of other sessions' copies of its responses,
/// while a fork, append, import or delete holds those rows and then asks for a session's
/// row (a fork's `forks` entry checks its source's) — the two orders deadlocked
/// (pg_search_queue's stress test). Taken first by everyone, this lock keeps the rebuild
/// and the writers apart; writers still run beside each other.
const SHARED_WRITE_LOCK: &str = "SELECT pg_advisory_xact_lock_shared(1582628903)";
const EXCLUSIVE_WRITE_LOCK: &str = "SELECT pg_advisory_xact_lock(1582628903)";

/// An open PostgreSQL team store.
pub struct PgStore {
    /// Boxed: the connection settings are large, and a [`crate::backend::Db`] holds either store.
    pool: Box<Pool>,
    /// The URL without its password: the only form that is shown.
    shown: String,
    origin: Origin,
}

/// The machine and account this process writes as: recorded on each session it creates
/// and keying its import ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The host name (`SESSIONDB_HOST` overrides it).
    pub host: String,
    /// The user name (`SESSIONDB_USER` overrides it).
    pub user: String,
}

impl Origin {
    /// This machine and account, as the environment and the kernel name them.
    pub fn current() -> Origin {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let host = env("SESSIONDB_HOST")
            .or_else(|| {
                std::fs::read_to_string("/proc/sys/kernel/hostname")
                    .ok()
                    .map(|h| h.trim().to_owned())
                    .filter(|h| !h.is_empty())
            })
            .or_else(|| env("HOSTNAME"))
            .unwrap_or_else(|| "localhost".to_owned());
        let user = env("SESSIONDB_USER")
            .or_else(|| env("USER"))
            .or_else(|| env("LOGNAME"))
            .unwrap_or_else(current_uid_name);
        Origin { host, user }
    }
}

/// The user id as `uid N`, when the environment names no user.
fn current_uid_name() -> String {
    #[cfg(unix)]
    {
        format!("uid {}", rustix::process::getuid().as_raw())
    }
    #[cfg(not(unix))]
    {
        "unknown".to_owned()
    }
}

impl PgStore {
    /// Connects to the database at `url` and brings its schema up to date.
    ///
    /// # Errors
    /// [`Error::CannotConnect`] (naming the URL without its password) when the server
    /// cannot be reached or refuses the login; [`Error::Migration`] when a migration fails.
    pub fn connect(url: &str) -> Result<PgStore> {
        let shown = url::redact(url);
        let cannot = |reason: String| Error::CannotConnect {
            target: shown.clone(),
            reason,
        };
        let request = tls::read_request(url).map_err(|e| cannot(e.to_string()))?;
        let mut config: postgres::Config = request
            .url
            .parse()
            .map_err(|e: postgres::Error| cannot(connect_reason(&e, request.mode)))?;
        let no_password = password::fill(&mut config).err();
        let tls = tls::connector(&request).map_err(|e| cannot(e.to_string()))?;
        let link = Link {
            config,
            tls,
            mode: request.mode,
            no_password,
        };
        let mut client = link.connect(&shown)?;
        migrate(&mut client)?;
        Ok(PgStore {
            pool: Box::new(Pool::new(link, Some(client))),
            shown,
            origin: Origin::current(),
        })
    }

    /// A second store on the same database, as the same machine and account, with a
    /// connection of its own: for work that several connections share (import writes
    /// sessions over several at once).
    ///
    /// # Errors
    /// [`Error::CannotConnect`] when the server refuses the connection.
    pub fn another(&self) -> Result<PgStore> {
        let client = self.pool.link.connect(&self.shown)?;
        Ok(PgStore {
            pool: Box::new(Pool::new(self.pool.link.clone(), Some(client))),
            shown: self.shown.clone(),
            origin: self.origin.clone(),
        })
    }

    /// Lets up to `n` (at least 1) transactions run at once, each on a connection of its
    /// own, opened when first needed (`serve` answers many clients at once; a CLI verb
    /// needs one connection).
    pub fn with_connections(self, n: usize) -> PgStore {
        self.pool.set_max(n.max(1));
        self
    }

    /// The database URL without its password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The machine and account this store writes as.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Runs `f` in one transaction, committed only when `f` succeeds.
    ///
    /// # Errors
    /// Whatever `f` returns, or a database error; the transaction is rolled back.
    pub fn write<T>(&self, f: impl FnOnce(&mut Transaction<'_>) -> Result<T>) -> Result<T> {
        self.write_with(SHARED_WRITE_LOCK, f)
    }

    /// Runs `f` in one transaction while no other write transaction runs: it waits for
    /// those running to end, and those that begin meanwhile wait for it (the write lock,
    /// [`SHARED_WRITE_LOCK`]). For the usage projection's rebuild, one session at a time.
    ///
    /// # Errors
    /// Whatever `f` returns, or a database error; the transaction is rolled back.
    pub(crate) fn write_alone<T>(
        &self,
        f: impl FnOnce(&mut Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        self.write_with(EXCLUSIVE_WRITE_LOCK, f)
    }

    fn write_with<T>(
        &self,
        lock: &str,
        f: impl FnOnce(&mut Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        let mut client = self.pool.take(&self.shown)?;
        let _held = Held::enter(client.statements());
        let mut tx = client.transaction()?;
        // The simple protocol: one round trip.
        tx.batch_execute(lock)?;
        let out = f(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// Runs `f` in one read-only transaction (one snapshot: a reader sees a session either
    /// before or after a concurrent write, never half of it).
    ///
    /// # Errors
    /// Whatever `f` returns, or a database error.
    pub fn read<T>(&self, f: impl FnOnce(&mut Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut client = self.pool.take(&self.shown)?;
        let _held = Held::enter(client.statements());
        let mut tx = client
            .build_transaction()
            .read_only(true)
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .start()?;
        let out = f(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// Runs `f` on a connection outside any transaction, for a read that is one statement
    /// or whose statements need no common snapshot (finding a session by name, then
    /// reading it, were two transactions before too): one statement is its own snapshot,
    /// and the `BEGIN` and `COMMIT` of [`PgStore::read`] are two round trips to the server,
    /// a third of those of a short verb.
    ///
    /// # Errors
    /// Whatever `f` returns, or a database error.
    pub fn read_single<T>(&self, f: impl FnOnce(&mut Client) -> Result<T>) -> Result<T> {
        let mut client = self.pool.take(&self.shown)?;
        f(&mut client)
    }
}

/// The parameters of [`postgres::GenericClient::query_typed`]: each value with its type.
///
/// A query sent with its parameter types is parsed, bound and run in one round trip (an
/// unnamed statement), where an untyped one is first prepared, a round trip of its own. A
/// read that runs a statement once uses this.
pub(crate) type Typed<'a> = [(
    &'a (dyn postgres::types::ToSql + Sync),
    postgres::types::Type,
)];

/// Applies the embedded migrations, holding an advisory lock for the time.
///
/// A database that already holds exactly the embedded migrations (the same versions with
/// the same checksums) is taken as current after one query, without the lock and the
/// runner's half a dozen statements: every verb connects first, and those round trips were
/// a third of a `resume`. Any other state (a new database, a migration missing or changed)
/// goes through the runner under the lock, which applies what is missing and reports what
/// diverged.
fn migrate(client: &mut Client) -> Result<()> {
    if holds_exactly_embedded(client) {
        return Ok(());
    }
    client.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])?;
    let embedded: Vec<(i64, String)> = embedded::migrations::runner()
        .get_migrations()
        .iter()
        .map(|m| (i64::from(m.version()), m.name().to_owned()))
        .collect();
    let applied = history::check(client, &embedded)
        .and_then(|()| {
            embedded::migrations::runner()
                .set_grouped(true)
                .run(client)
                .map_err(|e| Error::Migration(e.to_string()))
        })
        .and_then(|report| {
            // The usage projection (V9) is filled from the stored lines by Rust code.
            let usage = report.applied_migrations().iter().any(|m| m.version() == 9);
            if usage {
                let mut tx = client.transaction()?;
                tx.batch_execute(EXCLUSIVE_WRITE_LOCK)?;
                crate::pg::usage::rebuild(&mut tx)?;
                tx.commit()?;
            }
            Ok(())
        });
    client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])?;
    applied
}

/// Whether the database's migration history is exactly the embedded migrations, read in one
/// query. A database without the history table (a new one) or any other failure answers no:
/// the runner then decides, and reports the failure in its words.
fn holds_exactly_embedded(client: &mut Client) -> bool {
    // The simple protocol: one round trip, where a prepared query takes two.
    let Ok(messages) = client.simple_query("SELECT version, checksum FROM refinery_schema_history")
    else {
        return false;
    };
    let mut applied: Vec<(i64, String)> = Vec::new();
    for message in &messages {
        if let postgres::SimpleQueryMessage::Row(row) = message {
            let version = row.get(0).and_then(|v| v.parse().ok());
            let (Some(version), Some(checksum)) = (version, row.get(1)) else {
                return false;
            };
            applied.push((version, checksum.to_owned()));
        }
    }
    let mut embedded: Vec<(i64, String)> = embedded::migrations::runner()
        .get_migrations()
        .iter()
        .map(|m| (i64::from(m.version()), m.checksum().to_string()))
        .collect();
    applied.sort_unstable();
    embedded.sort_unstable();
    applied == embedded
}
