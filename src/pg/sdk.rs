//! The SDK readers (`messages`, `agents`) on the team store: the statements behind
//! [`crate::sdk::SdkSource`]; the chains, the paging and the sub-agents' order are the
//! shared ones of [`crate::sdk`].

use super::decode::RowExt;
use crate::error::Result;
use crate::model::SessionRef;
use crate::sdk::{EntryColumns, KeptLines, SdkSource, StoredMessage, StoredSubagent};
use postgres::fallible_iterator::FallibleIterator;
use postgres::Transaction;
use std::collections::HashMap;

/// `get_session_messages` with each `message` left as stored (see
/// [`crate::sdk::stored_session_messages`]).
///
/// # Errors
/// Fails on a database error.
pub fn stored_session_messages(
    tx: &mut Transaction<'_>,
    session: &SessionRef,
    limit: Option<i64>,
    offset: i64,
) -> Result<Vec<StoredMessage>> {
    crate::sdk::session_messages_with(&mut Pg::new(tx), session, limit, offset)
}

/// `list_subagents` (see [`crate::sdk::list_subagents`]).
///
/// # Errors
/// Fails on a database error.
pub fn list_subagents(tx: &mut Transaction<'_>, session: &SessionRef) -> Result<Vec<String>> {
    crate::sdk::list_subagents_with(&mut Pg::new(tx), session)
}

/// `get_subagent_messages` with each `message` left as stored (see
/// [`crate::sdk::stored_subagent_messages`]).
///
/// # Errors
/// Fails on a database error.
pub fn stored_subagent_messages(
    tx: &mut Transaction<'_>,
    session: &SessionRef,
    agent_id: &str,
    limit: Option<i64>,
    offset: i64,
) -> Result<Vec<StoredMessage>> {
    crate::sdk::subagent_messages_with(&mut Pg::new(tx), session, agent_id, limit, offset)
}

/// The team store's [`SdkSource`]. The lines of the last transcript read are kept
/// ([`KeptLines`]): one query brings a session's lines over the network once.
struct Pg<'a, 'b> {
    tx: &'a mut Transaction<'b>,
    kept: KeptLines,
}

impl<'a, 'b> Pg<'a, 'b> {
    fn new(tx: &'a mut Transaction<'b>) -> Self {
        Pg {
            tx,
            kept: KeptLines::default(),
        }
    }
}

impl SdkSource for Pg<'_, '_> {
    fn main_transcript(&mut self, session: &SessionRef) -> Result<Option<i64>> {
        self.tx
            .query_opt(
                "SELECT t.id FROM transcripts t
                 WHERE t.session_id = $1 AND t.subpath = '' AND t.superseded_at IS NULL
                   AND EXISTS (SELECT 1 FROM rows r WHERE r.transcript_id = t.id
                               AND (length(r.raw) > 0 OR r.terminated))",
                &[&session.key],
            )?
            .map(|r| r.col(0))
            .transpose()
    }

    fn entry_lines(&mut self, transcript: i64, each: &mut dyn FnMut(i64, &[u8])) -> Result<()> {
        self.kept.clear();
        let mut rows = self.tx.query_raw(
            "SELECT id, raw FROM rows
             WHERE transcript_id = $1 AND status = 0
               AND type IN ('user', 'assistant', 'progress', 'system', 'attachment')
             ORDER BY ordinal",
            [&transcript],
        )?;
        while let Some(row) = rows.next()? {
            let (id, raw): (i64, &[u8]) = (row.col(0)?, row.col(1)?);
            each(id, raw);
            self.kept.keep(id, raw);
        }
        Ok(())
    }

    fn entry_columns(&mut self, transcript: i64) -> Result<Vec<EntryColumns>> {
        self.kept.clear();
        self.tx
            .query(
                "SELECT id, type, uuid, parent_uuid, source_tool_assistant_uuid FROM rows
                 WHERE transcript_id = $1 AND status = 0 AND uuid IS NOT NULL
                   AND type IN ('user', 'assistant', 'progress', 'system', 'attachment')
                 ORDER BY ordinal",
                &[&transcript],
            )?
            .iter()
            .map(|r| {
                Ok(EntryColumns {
                    row: r.col(0)?,
                    kind: r.col(1)?,
                    uuid: r.col(2)?,
                    parent: r.col(3)?,
                    source_tool: r.col(4)?,
                })
            })
            .collect()
    }

    fn lines(&mut self, rows: &[i64], each: &mut dyn FnMut(usize, &[u8])) -> Result<()> {
        let mut missing = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            match self.kept.get(*row) {
                Some(line) => each(i, line),
                None => missing.push(*row),
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        let index: HashMap<i64, usize> = rows.iter().enumerate().map(|(i, r)| (*r, i)).collect();
        let mut found = self
            .tx
            .query_raw("SELECT id, raw FROM rows WHERE id = ANY($1)", [&missing])?;
        while let Some(row) = found.next()? {
            let id = row.col::<i64>(0)?;
            if let Some(i) = index.get(&id) {
                let line: &[u8] = row.col(1)?;
                each(*i, line);
                self.kept.keep(id, line);
            }
        }
        Ok(())
    }

    fn subagents(&mut self, session: &SessionRef) -> Result<Vec<StoredSubagent>> {
        // `ILIKE`: SQLite's `LIKE` ignores the case of ASCII letters.
        self.tx
            .query(
                "SELECT id, agent_id, subpath, meta_json FROM transcripts
                 WHERE session_id = $1 AND agent_id IS NOT NULL AND superseded_at IS NULL
                   AND subpath ILIKE 'subagents/%'",
                &[&session.key],
            )?
            .iter()
            .map(|r| {
                Ok(StoredSubagent {
                    transcript: r.col(0)?,
                    agent_id: r.col(1)?,
                    subpath: r.col(2)?,
                    meta: r.col(3)?,
                })
            })
            .collect()
    }
}
