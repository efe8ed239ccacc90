//! Full-text search over the stored lines: ranked hits, unranked mentions, the lines they
//! name, and a rebuild of the index. Each engine keeps its own index (FTS5, or a team
//! store's queue that searches drain first).

use super::Db;
use crate::error::Result;

impl Db {
    /// Runs a full-text search, best hits first. Lines still queued for the index are indexed
    /// first (when that write fails the search runs without them: `Err` is then
    /// only the search's own failure, and the catch-up error is returned beside the hits).
    ///
    /// # Errors
    /// On a database error (never on what the user typed).
    pub fn search(
        &self,
        q: &crate::search::SearchQuery,
    ) -> Result<(Vec<crate::search::Hit>, Option<crate::error::Error>)> {
        self.search_narrowed(q, &crate::search::Narrowing::default())
    }

    /// [`Db::search`], keeping only the hits `n` keeps (the MCP `find` tool's filters; see
    /// [`crate::search::search_narrowed`]).
    ///
    /// # Errors
    /// On a database error (never on what the user typed).
    pub fn search_narrowed(
        &self,
        q: &crate::search::SearchQuery,
        n: &crate::search::Narrowing,
    ) -> Result<(Vec<crate::search::Hit>, Option<crate::error::Error>)> {
        let caught_up = self.engine.catch_up_search().err();
        Ok((self.engine.search_hits(q, n)?, caught_up))
    }

    /// The newest `cap` lines whose indexed text names a phrase, unranked (see
    /// [`crate::search::mentions`]). Lines still queued for the index are indexed first,
    /// as for [`Db::search`].
    ///
    /// # Errors
    /// On a database error (never on what the user typed).
    pub fn mentions(
        &self,
        text: &str,
        project: Option<&str>,
        cap: usize,
    ) -> Result<Vec<crate::search::Mention>> {
        // As a search: a failed catch-up leaves the newest lines unseen, no more.
        let _ = self.engine.catch_up_search();
        self.engine.mentions(text, project, cap)
    }

    /// Calls `each` with the stored bytes of each of these lines (keys from
    /// [`Db::mentions`]) that exists (see [`crate::search::each_line`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn each_line(&self, lines: &[i64], each: &mut dyn FnMut(i64, &[u8])) -> Result<()> {
        self.lookup(|r| r.each_line(lines, each))
    }

    /// Rebuilds the search index and every catalog row (see [`crate::search::reindex`] and
    /// [`crate::pg::reindex::reindex`]).
    ///
    /// # Errors
    /// On a database error.
    pub fn reindex(&self) -> Result<crate::search::ReindexReport> {
        self.engine.reindex()
    }
}
