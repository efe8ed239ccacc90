//! The team store: the same sessiondb on PostgreSQL.
//!
//! [`PgStore`] is the PostgreSQL counterpart of [`crate::Store`]: one connection to a
//! database named by a `postgres://` URL, its own migrations (`migrations_pg/`), and every
//! write in one transaction. The rules that do not depend on the engine (line reading and
//! projection, the catalog's fields, resume's chain and repair) are the shared ones of the
//! crate; this module holds only the SQL that reaches them.
//!
//! Many processes on many machines may write one database at once: uniqueness is kept by
//! constraints (`ON CONFLICT`), never by a check and then an insert.

pub mod catalog;
pub mod check;
pub mod export;
pub mod fork;
pub mod import;
pub mod metadata;
pub mod query;
pub mod record;
pub mod reindex;
pub mod restore;
pub mod resume;
pub mod sdk;
pub mod search;
pub mod sync;
pub mod tls;
pub mod url;

use crate::error::{Error, Result};
use postgres::{Client, NoTls, Transaction};
use std::sync::Mutex;

mod embedded {
    refinery::embed_migrations!("migrations_pg");
}

/// A lock number that serializes migrations of one database across processes
/// (`pg_advisory_lock`): two processes opening a new database at once must not both
/// create its tables.
const MIGRATION_LOCK: i64 = 0x5e55_10db;

/// An open PostgreSQL team store.
pub struct PgStore {
    client: Mutex<Client>,
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
        let config: postgres::Config = request
            .url
            .parse()
            .map_err(|e: postgres::Error| cannot(e.to_string()))?;
        let connected = match tls::connector(&request).map_err(|e| cannot(e.to_string()))? {
            None => config.connect(NoTls),
            Some(tls) => config.connect(tls),
        };
        let mut client = connected.map_err(|e| cannot(connect_reason(&e, request.mode)))?;
        migrate(&mut client)?;
        Ok(PgStore {
            client: Mutex::new(client),
            shown,
            origin: Origin::current(),
        })
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
        let mut client = self.client.lock().unwrap_or_else(|p| p.into_inner());
        let mut tx = client.transaction()?;
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
        let mut client = self.client.lock().unwrap_or_else(|p| p.into_inner());
        let mut tx = client
            .build_transaction()
            .read_only(true)
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .start()?;
        let out = f(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }
}

/// Why a connection failed, in words that name the TLS setting when it is the cause.
fn connect_reason(error: &postgres::Error, mode: tls::SslMode) -> String {
    let said = error.to_string();
    let source = std::error::Error::source(error).map(ToString::to_string);
    let full = match &source {
        Some(s) if !said.contains(s.as_str()) => format!("{said}: {s}"),
        _ => said,
    };
    if full.contains("does not support TLS") {
        let mode = match mode {
            tls::SslMode::VerifyCa => "verify-ca",
            tls::SslMode::VerifyFull => "verify-full",
            _ => "require",
        };
        return format!(
            "the server does not offer TLS and the URL asks for it (sslmode={mode}); \
             turn on ssl in the server's configuration, or use sslmode=prefer"
        );
    }
    full
}

/// Applies the embedded migrations, holding an advisory lock for the time.
fn migrate(client: &mut Client) -> Result<()> {
    client.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])?;
    let applied = embedded::migrations::runner()
        .set_grouped(true)
        .run(client)
        .map_err(|e| Error::Migration(e.to_string()));
    client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])?;
    applied.map(|_| ())
}
