//! Finding the session a user means and listing what the store holds: lookups by id,
//! project or title, the catalog's listing, and the marker a live page polls. Each verb
//! asks the engine once, through [`Db::lookup`] (one-statement lookups, outside a team
//! store's transactions, as before) or [`Db::read`].

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
        self.lookup(|r| r.resolve_session(arg))
    }

    /// Lists sessions from the catalog (see [`crate::query::list_sessions`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn list_sessions(&self, filter: &SessionFilter) -> Result<Vec<SessionInfo>> {
        self.lookup(|r| r.list_sessions(filter))
    }

    /// Calls `each` with every session the filter selects, in listing order, from one
    /// snapshot, without collecting them (`sessions --json` streams its output).
    ///
    /// # Errors
    /// `each`'s error, or a database error.
    pub fn for_each_session(
        &self,
        filter: &SessionFilter,
        mut each: impl FnMut(&crate::query::SessionRow<'_>) -> Result<()>,
    ) -> Result<()> {
        self.lookup(|r| r.for_each_session(filter, &mut each))
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
        self.lookup(|r| r.session_info(session, directory))
    }

    /// The session of exactly this project and id (see [`crate::query::find_exact_session`]):
    /// the web viewer's paths name both, and match nothing else.
    ///
    /// # Errors
    /// [`crate::error::Error::SessionNotFound`], or a database error.
    pub fn find_exact_session(&self, project: &str, session_id: &str) -> Result<SessionRef> {
        self.read(|r| r.find_exact_session(project, session_id))
    }

    /// Every stored project folder name, in byte order.
    ///
    /// # Errors
    /// On a database error.
    pub fn project_keys(&self) -> Result<Vec<String>> {
        self.read(|r| r.project_keys())
    }

    /// Whether a project folder of this exact name is stored.
    ///
    /// # Errors
    /// On a database error.
    pub fn project_exists(&self, key: &str) -> Result<bool> {
        self.lookup(|r| r.project_exists(key))
    }

    /// Every tag some session has now, in byte order.
    ///
    /// # Errors
    /// On a database error.
    pub fn tags(&self) -> Result<Vec<String>> {
        self.read(|r| r.tags())
    }

    /// The stored session ids just before and after `id` (see [`crate::query::neighbour_ids`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn neighbour_ids(&self, id: &str) -> Result<(Option<String>, Option<String>)> {
        self.lookup(|r| r.neighbour_ids(id))
    }

    /// Every stored session id, sorted, each once.
    ///
    /// # Errors
    /// On a database error.
    pub fn all_session_ids(&self) -> Result<Vec<String>> {
        self.read(|r| r.all_session_ids())
    }

    /// A value that moves whenever the store's content does (a line stored, a session added,
    /// changed or removed), cheap enough to poll every half second: the highest row id, the
    /// number of sessions and the latest change time. The web viewer's live pages poll it
    /// to learn of writes made by other processes (`capture`, `import`, another server).
    ///
    /// # Errors
    /// On a database error.
    pub fn change_marker(&self) -> Result<String> {
        let (rows, sessions, modified) = self.read(|r| r.change_marker())?;
        Ok(format!(
            "{}.{sessions}.{}",
            rows.unwrap_or(0),
            modified.unwrap_or(0)
        ))
    }
}
