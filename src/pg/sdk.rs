//! The SDK readers (`messages`, `agents`) on the team store: the statements behind
//! [`crate::sdk::SdkSource`]; the chains, the paging and the sub-agents' order are the
//! shared ones of [`crate::sdk`].

use super::PgStore;
use crate::error::Result;
use crate::model::SessionRef;
use crate::sdk::{SdkSource, SessionMessage, StoredSubagent};
use postgres::fallible_iterator::FallibleIterator;
use postgres::Transaction;

/// `get_session_messages` (see [`crate::sdk::get_session_messages`]).
///
/// # Errors
/// Fails on a database error.
pub fn get_session_messages(
    store: &PgStore,
    session: &SessionRef,
    limit: Option<i64>,
    offset: i64,
) -> Result<Vec<SessionMessage>> {
    store.read(|tx| crate::sdk::session_messages_with(&mut Pg(tx), session, limit, offset))
}

/// `list_subagents` (see [`crate::sdk::list_subagents`]).
///
/// # Errors
/// Fails on a database error.
pub fn list_subagents(store: &PgStore, session: &SessionRef) -> Result<Vec<String>> {
    store.read(|tx| crate::sdk::list_subagents_with(&mut Pg(tx), session))
}

/// `get_subagent_messages` (see [`crate::sdk::get_subagent_messages`]).
///
/// # Errors
/// Fails on a database error.
pub fn get_subagent_messages(
    store: &PgStore,
    session: &SessionRef,
    agent_id: &str,
    limit: Option<i64>,
    offset: i64,
) -> Result<Vec<SessionMessage>> {
    store.read(|tx| {
        crate::sdk::subagent_messages_with(&mut Pg(tx), session, agent_id, limit, offset)
    })
}

struct Pg<'a, 'b>(&'a mut Transaction<'b>);

impl SdkSource for Pg<'_, '_> {
    fn main_transcript(&mut self, session: &SessionRef) -> Result<Option<i64>> {
        Ok(self
            .0
            .query_opt(
                "SELECT t.id FROM transcripts t
                 WHERE t.session_id = $1 AND t.subpath = '' AND t.superseded_at IS NULL
                   AND EXISTS (SELECT 1 FROM rows r WHERE r.transcript_id = t.id
                               AND (length(r.raw) > 0 OR r.terminated))",
                &[&session.key],
            )?
            .map(|r| r.get(0)))
    }

    fn entry_lines(&mut self, transcript: i64, each: &mut dyn FnMut(i64, &[u8])) -> Result<()> {
        let mut rows = self.0.query_raw(
            "SELECT id, raw FROM rows
             WHERE transcript_id = $1 AND status = 0
               AND type IN ('user', 'assistant', 'progress', 'system', 'attachment')
             ORDER BY ordinal",
            [&transcript],
        )?;
        while let Some(row) = rows.next()? {
            each(row.get(0), row.get(1));
        }
        Ok(())
    }

    fn lines(&mut self, rows: &[i64], each: &mut dyn FnMut(usize, &[u8])) -> Result<()> {
        let at: std::collections::HashMap<i64, usize> =
            rows.iter().enumerate().map(|(i, r)| (*r, i)).collect();
        let mut found = self
            .0
            .query_raw("SELECT id, raw FROM rows WHERE id = ANY($1)", [&rows])?;
        while let Some(row) = found.next()? {
            if let Some(i) = at.get(&row.get::<_, i64>(0)) {
                each(*i, row.get(1));
            }
        }
        Ok(())
    }

    fn subagents(&mut self, session: &SessionRef) -> Result<Vec<StoredSubagent>> {
        // `ILIKE`: SQLite's `LIKE` ignores the case of ASCII letters.
        Ok(self
            .0
            .query(
                "SELECT id, agent_id, subpath, meta_json FROM transcripts
                 WHERE session_id = $1 AND agent_id IS NOT NULL AND superseded_at IS NULL
                   AND subpath ILIKE 'subagents/%'",
                &[&session.key],
            )?
            .iter()
            .map(|r| StoredSubagent {
                transcript: r.get(0),
                agent_id: r.get(1),
                subpath: r.get(2),
                meta: r.get(3),
            })
            .collect())
    }
}
