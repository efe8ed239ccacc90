//! The connections of a team store: how one is opened (settings and TLS), the pool that
//! lends them one transaction at a time, and the statements prepared on each.

use super::tls;
use crate::error::{Error, Result};
use postgres::{Client, NoTls, Statement, Transaction};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

/// How to open a connection: the settings (they hold the password, so they are never
/// shown) and the TLS connector the URL asks for.
#[derive(Clone)]
pub(super) struct Link {
    pub(super) config: postgres::Config,
    pub(super) tls: Option<tokio_postgres_rustls::MakeRustlsConnect>,
    pub(super) mode: tls::SslMode,
    /// Why the connection has no password, told when the server asks for one.
    pub(super) no_password: Option<String>,
}

impl Link {
    /// A new connection; `shown` names the store in the error.
    pub(super) fn connect(&self, shown: &str) -> Result<Client> {
        let connected = match &self.tls {
            None => self.config.connect(NoTls),
            Some(tls) => self.config.connect(tls.clone()),
        };
        connected.map_err(|e| {
            let mut reason = connect_reason(&e, self.mode);
            if let Some(why) = &self.no_password {
                if reason.contains("password") {
                    reason = format!("{reason} ({why})");
                }
            }
            Error::CannotConnect {
                target: shown.to_owned(),
                reason,
            }
        })
    }
}

/// The connections of a store: idle ones are reused, new ones opened up to `max`, and a
/// caller beyond that waits for one to come back.
pub(super) struct Pool {
    pub(super) link: Link,
    state: Mutex<PoolState>,
    returned: Condvar,
}

/// A connection with the statements prepared on it.
struct Conn {
    client: Client,
    statements: Statements,
}

impl Conn {
    fn new(client: Client) -> Conn {
        Conn {
            client,
            statements: Statements::default(),
        }
    }
}

pub(super) struct PoolState {
    idle: Vec<Conn>,
    /// Connections open (idle or lent).
    open: usize,
    max: usize,
}

impl Pool {
    /// A pool of at most one connection (see [`PgStore::with_connections`]), starting with
    /// `first` when given.
    pub(super) fn new(link: Link, first: Option<Client>) -> Pool {
        let open = usize::from(first.is_some());
        Pool {
            link,
            state: Mutex::new(PoolState {
                idle: first.into_iter().map(Conn::new).collect(),
                open,
                max: 1,
            }),
            returned: Condvar::new(),
        }
    }

    /// A connection for one transaction, given back when the guard drops.
    pub(super) fn take(&self, shown: &str) -> Result<Lent<'_>> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(conn) = state.idle.pop() {
                return Ok(Lent {
                    pool: self,
                    conn: Some(conn),
                });
            }
            if state.open < state.max {
                state.open += 1;
                drop(state);
                return match self.link.connect(shown) {
                    Ok(client) => Ok(Lent {
                        pool: self,
                        conn: Some(Conn::new(client)),
                    }),
                    Err(e) => {
                        self.forget();
                        Err(e)
                    }
                };
            }
            state = self.returned.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Lets up to `max` connections be open at once.
    pub(super) fn set_max(&self, max: usize) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).max = max;
    }

    /// Counts a connection as gone (it failed to open, or broke), letting a new one open.
    fn forget(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.open -= 1;
        drop(state);
        self.returned.notify_one();
    }
}

/// A connection lent by the [`Pool`]; a broken one is closed instead of given back.
pub(super) struct Lent<'a> {
    pool: &'a Pool,
    conn: Option<Conn>,
}

impl Lent<'_> {
    /// The statements prepared on this connection.
    pub(super) fn statements(&self) -> &Statements {
        &self.conn.as_ref().expect("lent until dropped").statements
    }
}

impl std::ops::Deref for Lent<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.conn.as_ref().expect("lent until dropped").client
    }
}

impl std::ops::DerefMut for Lent<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        &mut self.conn.as_mut().expect("lent until dropped").client
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else {
            return;
        };
        if conn.client.is_closed() {
            self.pool.forget();
            return;
        }
        let mut state = self.pool.state.lock().unwrap_or_else(|p| p.into_inner());
        state.idle.push(conn);
        drop(state);
        self.pool.returned.notify_one();
    }
}

/// Statements prepared on one connection, by their SQL text.
pub(super) type Statements = Arc<Mutex<HashMap<&'static str, Statement>>>;

thread_local! {
    /// The statements of the connection this thread's current [`PgStore::write`] or
    /// [`PgStore::read`] holds (the connection is lent to this thread meanwhile, so no
    /// other thread uses them).
    static HELD: RefCell<Option<Statements>> = const { RefCell::new(None) };
}

/// Makes a store's statements the ones [`prepared`] uses on this thread until dropped.
pub(super) struct Held(Option<Statements>);

impl Held {
    pub(super) fn enter(statements: &Statements) -> Held {
        Held(HELD.with(|h| h.replace(Some(Arc::clone(statements)))))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let previous = self.0.take();
        HELD.with(|h| *h.borrow_mut() = previous);
    }
}

/// `sql` prepared on the connection of `tx`, once per connection: a statement sent as text
/// costs a round trip to prepare it, then parsing and planning on the server, each time it
/// runs (a third of the server's time in an import). Inside [`PgStore::write`] and
/// [`PgStore::read`] the statement is kept for the connection's next uses; elsewhere it is
/// prepared for this use only.
///
/// # Errors
/// Fails when the server cannot prepare `sql`.
pub(crate) fn prepared(tx: &mut Transaction<'_>, sql: &'static str) -> Result<Statement> {
    let held = HELD.with(|h| h.borrow().clone());
    let Some(statements) = held else {
        return Ok(tx.prepare(sql)?);
    };
    let mut statements = statements.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(statement) = statements.get(sql) {
        return Ok(statement.clone());
    }
    let statement = tx.prepare(sql)?;
    statements.insert(sql, statement.clone());
    Ok(statement)
}

/// Why a connection failed, in words that name the TLS setting when it is the cause.
pub(super) fn connect_reason(error: &postgres::Error, mode: tls::SslMode) -> String {
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
