//! SQLite's catalog: its answers to [`CatalogSource`] and the entry points every write of
//! the embedded store calls (`refresh_session` and its siblings). The rules are in the
//! parent module.

use super::*;
use rusqlite::{params, Connection, OptionalExtension};

const SELECT_SESSION: &str = "SELECT s.session_id, s.project_id,
        (SELECT id FROM transcripts t WHERE t.session_id = s.id AND t.subpath = ''
           AND t.superseded_at IS NULL)
     FROM sessions s WHERE s.id = ?1";

const SELECT_TAIL_TOTALS: &str = "SELECT
        coalesce(sum(CASE WHEN ordinal < ?3 THEN iif(dict IS NULL, length(raw), line_len(raw, dict)) + terminated END), 0),
        coalesce(sum(CASE WHEN ordinal < ?3 THEN
            type IN ('user', 'assistant') AND is_sidechain = 0 AND is_meta = 0 END), 0),
        coalesce(sum(CASE WHEN ordinal >= ?3 THEN iif(dict IS NULL, length(raw), line_len(raw, dict)) + terminated END), 0),
        coalesce(sum(CASE WHEN ordinal >= ?3 THEN
            type IN ('user', 'assistant') AND is_sidechain = 0 AND is_meta = 0 END), 0)
     FROM rows WHERE transcript_id = ?1 AND ordinal >= ?2";

const SELECT_FIRST_ROW: &str =
    "SELECT line(raw, dict) AS raw FROM rows WHERE transcript_id = ?1 ORDER BY ordinal LIMIT 1";

const SELECT_MAX_ORDINAL: &str = "SELECT max(ordinal) FROM rows WHERE transcript_id = ?1";

const SELECT_PREVIOUS: &str = "SELECT written_at, main_transcript, scanned_ordinal, base_size,
        base_messages, first_line_sidechain, first_prompt, prompt_is_command, cwd, created_at,
        first_timestamp, last_timestamp, git_branch
     FROM catalog WHERE session_key = ?1";

const SELECT_LAST_METADATA: &str = "SELECT m.value FROM metadata m JOIN rows r ON r.id = m.row_id
     WHERE m.transcript_id = ?1 AND m.kind = ?2 AND m.value IS NOT NULL AND m.value <> ''
     ORDER BY r.ordinal DESC LIMIT 1";

const SELECT_LAST_TAG: &str = "SELECT m.value FROM metadata m JOIN rows r ON r.id = m.row_id
     WHERE m.transcript_id = ?1 AND m.kind = 'tag' ORDER BY r.ordinal DESC LIMIT 1";

const SELECT_LAST_SUMMARY: &str = "SELECT m.value FROM metadata m JOIN rows r ON r.id = m.row_id
     WHERE m.transcript_id = ?1 AND m.kind = 'summary' AND m.value IS NOT NULL AND m.value <> ''
       AND (m.leaf_uuid IS NULL OR EXISTS (SELECT 1 FROM rows x
             WHERE x.transcript_id = ?1 AND x.uuid = m.leaf_uuid))
     ORDER BY r.ordinal DESC LIMIT 1";

const SELECT_USER_ROWS: &str = "SELECT line(raw, dict) AS raw FROM rows
     WHERE transcript_id = ?1 AND ordinal >= ?2 AND type = 'user' AND status = 0
     ORDER BY ordinal";

const SELECT_FIELD_ROWS_FORWARD: &str = "SELECT line(raw, dict) AS raw FROM rows
     WHERE transcript_id = ?1 AND ordinal >= ?3 AND status = 0 AND instr(line(raw, dict), ?2) > 0
     ORDER BY ordinal";

const SELECT_FIELD_ROWS_BACKWARD: &str = "SELECT line(raw, dict) AS raw FROM rows
     WHERE transcript_id = ?1 AND ordinal >= ?3 AND status = 0 AND instr(line(raw, dict), ?2) > 0
     ORDER BY ordinal DESC";

const SELECT_TIMESTAMPS: &str = "SELECT
        (SELECT timestamp FROM rows WHERE transcript_id = ?1 AND ordinal >= ?2
           AND timestamp IS NOT NULL ORDER BY ordinal LIMIT 1),
        (SELECT timestamp FROM rows WHERE transcript_id = ?1 AND ordinal >= ?2
           AND timestamp IS NOT NULL ORDER BY ordinal DESC LIMIT 1)";

const SELECT_LEDGER: &str = "SELECT mtime_ns, vanished FROM source_files
     WHERE transcript_id = ?1 ORDER BY rowid DESC LIMIT 1";

const SELECT_SUBAGENTS: &str = "SELECT count(*) FROM transcripts
     WHERE session_id = ?1 AND agent_id IS NOT NULL AND superseded_at IS NULL
       AND subpath LIKE 'subagents/%'";

const UPSERT: &str = "INSERT INTO catalog (session_key, session_id, project_id, listed, summary,
        custom_title, user_title, ai_title, last_prompt, summary_record, first_prompt,
        git_branch, cwd, tag, created_at, first_timestamp, last_timestamp, last_modified,
        written_at, file_size, message_count, subagent_count, source_state, name_text,
        main_transcript, scanned_ordinal, base_size, base_messages, first_line_sidechain,
        prompt_is_command)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
             ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30)
     ON CONFLICT (session_key) DO UPDATE SET
        session_id = excluded.session_id, project_id = excluded.project_id,
        listed = excluded.listed, summary = excluded.summary,
        custom_title = excluded.custom_title, user_title = excluded.user_title,
        ai_title = excluded.ai_title, last_prompt = excluded.last_prompt,
        summary_record = excluded.summary_record, first_prompt = excluded.first_prompt,
        git_branch = excluded.git_branch, cwd = excluded.cwd, tag = excluded.tag,
        created_at = excluded.created_at, first_timestamp = excluded.first_timestamp,
        last_timestamp = excluded.last_timestamp, last_modified = excluded.last_modified,
        written_at = excluded.written_at, file_size = excluded.file_size,
        message_count = excluded.message_count, subagent_count = excluded.subagent_count,
        source_state = excluded.source_state, name_text = excluded.name_text,
        main_transcript = excluded.main_transcript, scanned_ordinal = excluded.scanned_ordinal,
        base_size = excluded.base_size, base_messages = excluded.base_messages,
        first_line_sidechain = excluded.first_line_sidechain,
        prompt_is_command = excluded.prompt_is_command";

/// The SQLite store's [`CatalogSource`]: the statements above on one connection.
struct Sqlite<'c>(&'c Connection);

/// The statements of [`CatalogSource`]'s answers, one question each.
impl Sqlite<'_> {
    fn session(&mut self, key: i64) -> Result<Option<(String, i64, Option<i64>)>> {
        Ok(self
            .0
            .prepare_cached(SELECT_SESSION)?
            .query_row([key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?)
    }

    fn previous(&mut self, key: i64) -> Result<Option<(Option<i64>, Previous)>> {
        Ok(self
            .0
            .prepare_cached(SELECT_PREVIOUS)?
            .query_row([key], |r| {
                Ok((
                    r.get(0)?,
                    Previous {
                        main_transcript: r.get(1)?,
                        scanned_ordinal: r.get(2)?,
                        base_size: r.get(3)?,
                        base_messages: r.get(4)?,
                        first_line_sidechain: r.get(5)?,
                        first_prompt: r.get(6)?,
                        prompt_is_command: r.get(7)?,
                        cwd: r.get(8)?,
                        created_at: r.get(9)?,
                        first_timestamp: r.get(10)?,
                        last_timestamp: r.get(11)?,
                        git_branch: r.get(12)?,
                    },
                ))
            })
            .optional()?)
    }

    fn ledger(&mut self, transcript: i64) -> Result<Option<(i64, bool)>> {
        Ok(self
            .0
            .prepare_cached(SELECT_LEDGER)?
            .query_row([transcript], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }

    fn max_ordinal(&mut self, transcript: i64) -> Result<Option<i64>> {
        Ok(self
            .0
            .prepare_cached(SELECT_MAX_ORDINAL)?
            .query_row([transcript], |r| r.get(0))?)
    }

    fn tail_totals(
        &mut self,
        transcript: i64,
        from: i64,
        split: i64,
    ) -> Result<(i64, i64, i64, i64)> {
        Ok(self
            .0
            .prepare_cached(SELECT_TAIL_TOTALS)?
            .query_row(params![transcript, from, split], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?)
    }

    fn last_metadata(&mut self, transcript: i64, kind: &str) -> Result<Option<String>> {
        Ok(self
            .0
            .prepare_cached(SELECT_LAST_METADATA)?
            .query_row(params![transcript, kind], |r| r.get(0))
            .optional()?)
    }

    fn last_tag(&mut self, transcript: i64) -> Result<Option<Option<String>>> {
        Ok(self
            .0
            .prepare_cached(SELECT_LAST_TAG)?
            .query_row([transcript], |r| r.get::<_, Option<String>>(0))
            .optional()?)
    }

    fn last_summary(&mut self, transcript: i64) -> Result<Option<String>> {
        Ok(self
            .0
            .prepare_cached(SELECT_LAST_SUMMARY)?
            .query_row([transcript], |r| r.get(0))
            .optional()?)
    }

    fn timestamps(
        &mut self,
        transcript: i64,
        from: i64,
    ) -> Result<(Option<String>, Option<String>)> {
        Ok(self
            .0
            .prepare_cached(SELECT_TIMESTAMPS)?
            .query_row(params![transcript, from], |r| Ok((r.get(0)?, r.get(1)?)))?)
    }

    fn subagents(&mut self, key: i64) -> Result<i64> {
        Ok(self
            .0
            .prepare_cached(SELECT_SUBAGENTS)?
            .query_row([key], |r| r.get(0))?)
    }
}

/// In-process statements cost no round trip: each question of the port is asked as its own
/// statement.
impl CatalogSource for Sqlite<'_> {
    fn session_state(&mut self, key: i64) -> Result<Option<SessionState>> {
        let Some(session) = self.session(key)? else {
            return Ok(None);
        };
        Ok(Some(SessionState {
            session,
            previous: self.previous(key)?,
            subagents: self.subagents(key)?,
        }))
    }

    fn transcript_state(&mut self, transcript: i64) -> Result<TranscriptState> {
        Ok(TranscriptState {
            ledger: self.ledger(transcript)?,
            max_ordinal: self.max_ordinal(transcript)?,
            user_title: self.last_metadata(transcript, "custom-title")?,
            ai_title: self.last_metadata(transcript, "ai-title")?,
            last_prompt: self.last_metadata(transcript, "last-prompt")?,
            summary_record: self.last_summary(transcript)?,
            tag: self.last_tag(transcript)?.flatten(),
        })
    }

    fn tail(&mut self, transcript: i64, from: i64, split: i64) -> Result<Tail> {
        Ok(Tail {
            totals: self.tail_totals(transcript, from, split)?,
            timestamps: self.timestamps(transcript, from)?,
        })
    }

    fn first_line(&mut self, transcript: i64) -> Result<Vec<u8>> {
        Ok(self
            .0
            .prepare_cached(SELECT_FIRST_ROW)?
            .query_row([transcript], |r| r.get(0))?)
    }

    fn scan_user_lines(
        &mut self,
        transcript: i64,
        from: i64,
        f: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<()> {
        let mut stmt = self.0.prepare_cached(SELECT_USER_ROWS)?;
        until_true(stmt.query(params![transcript, from])?, f)?;
        Ok(())
    }

    fn scan_lines_with(
        &mut self,
        transcript: i64,
        needle: &[u8],
        forward: bool,
        from: i64,
        f: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<()> {
        let sql = if forward {
            SELECT_FIELD_ROWS_FORWARD
        } else {
            SELECT_FIELD_ROWS_BACKWARD
        };
        let mut stmt = self.0.prepare_cached(sql)?;
        until_true(stmt.query(params![transcript, needle, from])?, f)?;
        Ok(())
    }

    fn upsert(&mut self, c: &Computed<'_>) -> Result<()> {
        self.0
            .prepare_cached(UPSERT)?
            .execute(rusqlite::params_from_iter(bound(c)))?;
        Ok(())
    }
}

/// A computed row as [`UPSERT`] binds it, in [`COLUMNS`]' order.
fn bound<'a>(c: &'a Computed<'_>) -> [&'a dyn rusqlite::ToSql; 30] {
    catalog_values!(c, dyn rusqlite::ToSql)
}

/// [`bound`] as owned values, to compare with a stored row.
fn bound_values(c: &Computed<'_>) -> Result<Vec<rusqlite::types::Value>> {
    bound(c)
        .iter()
        .map(|v| {
            Ok(match v.to_sql()? {
                rusqlite::types::ToSqlOutput::Borrowed(r) => rusqlite::types::Value::try_from(r)
                    .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?,
                rusqlite::types::ToSqlOutput::Owned(v) => v,
                _ => rusqlite::types::Value::Null,
            })
        })
        .collect::<rusqlite::Result<_>>()
        .map_err(Into::into)
}

/// Calls `f` with the line (column 0) of each row until it returns `true`.
fn until_true(mut rows: rusqlite::Rows<'_>, f: &mut dyn FnMut(&[u8]) -> bool) -> Result<()> {
    while let Some(row) = rows.next()? {
        let raw = row.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?;
        if f(raw) {
            break;
        }
    }
    Ok(())
}

/// Recomputes the catalog row of one session (by its database key) inside the caller's
/// transaction. Call it after every write that touches the session's rows.
///
/// # Errors
/// Fails on a database error.
pub fn refresh_session(conn: &Connection, session_key: i64) -> Result<()> {
    refresh_with(&mut Sqlite(conn), session_key, None)
}

/// Like [`refresh_session`], and records that sessiondb itself wrote to the session at
/// `written_at` (epoch ms): `last_modified` becomes at least that, as a file's mtime would.
///
/// # Errors
/// Fails on a database error.
pub fn touch_session(conn: &Connection, session_key: i64, written_at: i64) -> Result<()> {
    refresh_with(&mut Sqlite(conn), session_key, Some(written_at))
}

/// Refreshes the session whose transcript `transcript_id` is (after its source file was
/// marked vanished, for instance).
///
/// # Errors
/// Fails on a database error.
pub fn refresh_transcript(conn: &Connection, transcript_id: i64) -> Result<()> {
    let session: Option<i64> = conn
        .prepare_cached("SELECT session_id FROM transcripts WHERE id = ?1")?
        .query_row([transcript_id], |r| r.get(0))
        .optional()?;
    match session {
        Some(key) => refresh_session(conn, key),
        None => Ok(()),
    }
}

/// Fills the catalog for sessions that have no row yet (a database created before the
/// catalog existed), in one IMMEDIATE transaction taken only when there is work. Returns how
/// many rows were added.
///
/// # Errors
/// Fails on a database error.
pub fn backfill(conn: &mut Connection) -> Result<usize> {
    const MISSING: &str =
        "SELECT id FROM sessions WHERE id NOT IN (SELECT session_key FROM catalog) ORDER BY id";
    let any: bool = conn.query_row(&format!("SELECT EXISTS ({MISSING})"), [], |r| r.get(0))?;
    if !any {
        return Ok(0);
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let missing: Vec<i64> = tx
        .prepare_cached(MISSING)?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for key in &missing {
        refresh_session(&tx, *key)?;
    }
    tx.commit()?;
    Ok(missing.len())
}

/// The columns of a session's catalog row that differ from a recomputation from all its
/// lines (`sessiondb check`); `["(missing)"]` when it has no row. Only `written_at` is taken
/// from the stored row: it records sessiondb's own writes, which the lines do not hold.
///
/// # Errors
/// Fails on a database error.
pub fn stale_columns(conn: &Connection, session_key: i64) -> Result<Vec<&'static str>> {
    let want = computed(&mut Sqlite(conn), session_key, None, true, |_, row| {
        Ok(Some(bound_values(row)?))
    })?;
    let Some(want) = want else {
        return Ok(Vec::new());
    };
    let sql = format!(
        "SELECT {} FROM catalog WHERE session_key = ?1",
        COLUMNS.join(", ")
    );
    let got: Option<Vec<rusqlite::types::Value>> = conn
        .prepare_cached(&sql)?
        .query_row([session_key], |r| {
            (0..COLUMNS.len()).map(|i| r.get(i)).collect()
        })
        .optional()?;
    let Some(got) = got else {
        return Ok(vec!["(missing)"]);
    };
    Ok(COLUMNS
        .iter()
        .zip(want.iter().zip(&got))
        .filter(|(_, (w, g))| w != g)
        .map(|(name, _)| *name)
        .collect())
}

/// Recomputes a session's catalog row from all its lines, ignoring the incremental
/// watermark (`sessiondb check --repair`).
///
/// # Errors
/// Fails on a database error.
pub fn rebuild_session(conn: &Connection, session_key: i64) -> Result<()> {
    computed(&mut Sqlite(conn), session_key, None, true, |src, row| {
        src.upsert(row)
    })
}
