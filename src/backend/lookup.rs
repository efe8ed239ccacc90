//! Finding the session a user means and listing what the store holds: lookups by id,
//! project or title, the catalog's listing, and the marker a live page polls. Each verb
//! asks the engine's query module ([`crate::query`] or `crate::pg::query`) in one read.

use super::Db;
use crate::error::Result;
use crate::model::SessionRef;
use crate::query::{SessionFilter, SessionInfo};

impl Db {
    /// Finds the session a user means (see [`crate::query::resolve_session`]).
    ///
    /// # Errors
    /// When the argument names no session or several.
    pub fn resolve_session(&self, arg: &str) -> Result<SessionRef> {
        match self {
            Db::Sqlite(s) => crate::query::resolve_session(&*s.reader()?, arg),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read_single(|c| crate::pg::query::resolve_session(c, arg)),
        }
    }

    /// Lists sessions from the catalog (see [`crate::query::list_sessions`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn list_sessions(&self, filter: &SessionFilter) -> Result<Vec<SessionInfo>> {
        match self {
            Db::Sqlite(s) => crate::query::list_sessions(&*s.reader()?, filter),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read_single(|c| crate::pg::query::list_sessions(c, filter)),
        }
    }

    /// Calls `each` with every session the filter selects, in listing order, from one
    /// snapshot, without collecting them (`sessions --json` streams its output).
    ///
    /// # Errors
    /// `each`'s error, or a database error.
    pub fn for_each_session(
        &self,
        filter: &SessionFilter,
        each: impl FnMut(&crate::query::SessionRow<'_>) -> Result<()>,
    ) -> Result<()> {
        match self {
            Db::Sqlite(s) => crate::query::for_each_session(&*s.reader()?, filter, each),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => {
                p.read_single(|c| crate::pg::query::for_each_session(c, filter, each))
            }
        }
    }

    /// One session's catalog entry (see [`crate::query::get_session_info`]).
    ///
    /// # Errors
    /// When the session has no catalog row, or on a database error.
    pub fn session_info(
        &self,
        session: &SessionRef,
        directory: Option<&str>,
    ) -> Result<SessionInfo> {
        match self {
            Db::Sqlite(s) => crate::query::get_session_info(&*s.reader()?, session, directory),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => {
                p.read_single(|c| crate::pg::query::get_session_info(c, session, directory))
            }
        }
    }

    /// The session of exactly this project and id (see [`crate::query::find_exact_session`]):
    /// the web viewer's paths name both, and match nothing else.
    ///
    /// # Errors
    /// [`crate::error::Error::SessionNotFound`], or a database error.
    pub fn find_exact_session(&self, project: &str, session_id: &str) -> Result<SessionRef> {
        match self {
            Db::Sqlite(s) => crate::query::find_exact_session(&*s.reader()?, project, session_id),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => {
                p.read(|tx| crate::pg::query::find_exact_session(tx, project, session_id))
            }
        }
    }

    /// Every stored project folder name, in byte order.
    ///
    /// # Errors
    /// On a database error.
    pub fn project_keys(&self) -> Result<Vec<String>> {
        match self {
            Db::Sqlite(s) => crate::query::project_keys(&*s.reader()?),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read(crate::pg::query::project_keys),
        }
    }

    /// Whether a project folder of this exact name is stored.
    ///
    /// # Errors
    /// On a database error.
    pub fn project_exists(&self, key: &str) -> Result<bool> {
        match self {
            Db::Sqlite(s) => crate::query::project_exists(&*s.reader()?, key),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read_single(|c| crate::pg::query::project_exists(c, key)),
        }
    }

    /// Every tag some session has now, in byte order.
    ///
    /// # Errors
    /// On a database error.
    pub fn tags(&self) -> Result<Vec<String>> {
        match self {
            Db::Sqlite(s) => crate::query::tags(&*s.reader()?),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read(crate::pg::query::tags),
        }
    }

    /// The stored session ids just before and after `id` (see [`crate::query::neighbour_ids`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn neighbour_ids(&self, id: &str) -> Result<(Option<String>, Option<String>)> {
        match self {
            Db::Sqlite(s) => crate::query::neighbour_ids(&*s.reader()?, id),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read_single(|c| crate::pg::query::neighbour_ids(c, id)),
        }
    }

    /// Every stored session id, sorted, each once.
    ///
    /// # Errors
    /// On a database error.
    pub fn all_session_ids(&self) -> Result<Vec<String>> {
        match self {
            Db::Sqlite(s) => crate::query::all_session_ids(&*s.reader()?),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read(crate::pg::query::all_session_ids),
        }
    }

    /// A value that moves whenever the store's content does (a line stored, a session added,
    /// changed or removed), cheap enough to poll every half second: the highest row id, the
    /// number of sessions and the latest change time. The web viewer's live pages poll it
    /// to learn of writes made by other processes (`capture`, `import`, another server).
    ///
    /// # Errors
    /// On a database error.
    pub fn change_marker(&self) -> Result<String> {
        const MARKER: &str = "SELECT (SELECT max(id) FROM rows), (SELECT count(*) FROM catalog), \
             (SELECT max(last_modified) FROM catalog)";
        let (rows, sessions, modified): (Option<i64>, i64, Option<i64>) = match self {
            Db::Sqlite(s) => s
                .reader()?
                .query_row(MARKER, [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?,
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read(|tx| {
                let r = tx.query_one(MARKER, &[])?;
                Ok((r.get(0), r.get(1), r.get(2)))
            })?,
        };
        Ok(format!(
            "{}.{sessions}.{}",
            rows.unwrap_or(0),
            modified.unwrap_or(0)
        ))
    }
}
