//! The session catalog: one row per session with what a listing shows (titles, first
//! prompt, branch, times, size, counts), kept current by every write.
//!
//! [`refresh_session`] recomputes a session's row from its stored rows and side tables. The
//! importer calls it at the end of each file's transaction, and so does every other write
//! (rename, tag, the record API), so listings never scan transcripts.
//!
//! The fields follow the Agent SDK's `SDKSessionInfo` rules (spec §9.5), read from the whole
//! session as JSON instead of two 64 KiB windows of text:
//!
//! * `custom_title`: the last non-empty `custom-title` record, else the last `ai-title`;
//! * `summary`: `custom_title`, else the last `last-prompt`, else the last `summary` record
//!   whose `leafUuid` is a message of this transcript, else `first_prompt`;
//! * `first_prompt`: the first meaningful user prompt (`first_prompt`);
//! * `git_branch`: the last top-level `gitBranch`; `cwd`: the first top-level `cwd`;
//! * `tag`: the last `tag` record (`""` clears it);
//! * `created_at`: the first top-level `timestamp`;
//! * `last_modified`: the source file's mtime (or sessiondb's last write, if later);
//!   `file_size`: the bytes of the main transcript.

use crate::error::Result;
use crate::time::parse_iso8601_ms;
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

const SELECT_SESSION: &str = "SELECT s.session_id, s.project_id,
        (SELECT id FROM transcripts t WHERE t.session_id = s.id AND t.subpath = ''
           AND t.superseded_at IS NULL)
     FROM sessions s WHERE s.id = ?1";

const SELECT_TAIL_TOTALS: &str = "SELECT
        coalesce(sum(CASE WHEN ordinal < ?3 THEN length(raw) + terminated END), 0),
        coalesce(sum(CASE WHEN ordinal < ?3 THEN
            type IN ('user', 'assistant') AND is_sidechain = 0 AND is_meta = 0 END), 0),
        coalesce(sum(CASE WHEN ordinal >= ?3 THEN length(raw) + terminated END), 0),
        coalesce(sum(CASE WHEN ordinal >= ?3 THEN
            type IN ('user', 'assistant') AND is_sidechain = 0 AND is_meta = 0 END), 0)
     FROM rows WHERE transcript_id = ?1 AND ordinal >= ?2";

const SELECT_FIRST_ROW: &str =
    "SELECT raw FROM rows WHERE transcript_id = ?1 ORDER BY ordinal LIMIT 1";

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

const SELECT_USER_ROWS: &str = "SELECT raw FROM rows
     WHERE transcript_id = ?1 AND ordinal >= ?2 AND type = 'user' AND status = 0
     ORDER BY ordinal";

const SELECT_FIELD_ROWS_FORWARD: &str = "SELECT raw FROM rows
     WHERE transcript_id = ?1 AND ordinal >= ?3 AND status = 0 AND instr(raw, ?2) > 0
     ORDER BY ordinal";

const SELECT_FIELD_ROWS_BACKWARD: &str = "SELECT raw FROM rows
     WHERE transcript_id = ?1 AND ordinal >= ?3 AND status = 0 AND instr(raw, ?2) > 0
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

/// What the catalog holds for one session, before it is written.
#[derive(Debug, Default)]
pub(crate) struct Entry {
    pub(crate) listed: bool,
    pub(crate) summary: Option<String>,
    pub(crate) custom_title: Option<String>,
    pub(crate) user_title: Option<String>,
    pub(crate) ai_title: Option<String>,
    pub(crate) last_prompt: Option<String>,
    pub(crate) summary_record: Option<String>,
    pub(crate) first_prompt: Option<String>,
    pub(crate) git_branch: Option<String>,
    pub(crate) cwd: Option<String>,
    pub(crate) tag: Option<String>,
    pub(crate) created_at: Option<i64>,
    pub(crate) first_timestamp: Option<String>,
    pub(crate) last_timestamp: Option<String>,
    pub(crate) file_size: i64,
    pub(crate) message_count: i64,
    pub(crate) source_state: &'static str,
    pub(crate) mtime_ms: i64,
    pub(crate) main_transcript: Option<i64>,
    pub(crate) scanned_ordinal: i64,
    pub(crate) base_size: i64,
    pub(crate) base_messages: i64,
    pub(crate) first_line_sidechain: bool,
    pub(crate) prompt_is_command: bool,
}

/// What the previous refresh left, for an incremental one.
#[derive(Debug, Default)]
pub(crate) struct Previous {
    pub(crate) main_transcript: Option<i64>,
    pub(crate) scanned_ordinal: i64,
    pub(crate) base_size: i64,
    pub(crate) base_messages: i64,
    pub(crate) first_line_sidechain: bool,
    pub(crate) first_prompt: Option<String>,
    pub(crate) prompt_is_command: bool,
    pub(crate) cwd: Option<String>,
    pub(crate) created_at: Option<i64>,
    pub(crate) first_timestamp: Option<String>,
    pub(crate) last_timestamp: Option<String>,
    pub(crate) git_branch: Option<String>,
}

/// The catalog row as it is written: the entry and what the refresh adds to it.
pub(crate) struct Computed<'a> {
    pub(crate) session_key: i64,
    pub(crate) session_id: &'a str,
    pub(crate) project_id: i64,
    pub(crate) entry: &'a Entry,
    pub(crate) last_modified: i64,
    pub(crate) written_at: Option<i64>,
    pub(crate) subagents: i64,
    pub(crate) name_text: &'a str,
}

/// The reads and the one write a catalog refresh needs, once per backend; the rules that
/// turn them into a row ([`refresh_with`]) are shared. `from` is an ordinal: lines before it
/// were seen by the previous refresh. The scans call `f` with each line's bytes, in the
/// order named, until it returns `true`.
pub(crate) trait CatalogSource {
    /// The session's id, project and live main transcript.
    fn session(&mut self, key: i64) -> Result<Option<(String, i64, Option<i64>)>>;
    /// The previous row's `written_at` and watermark fields.
    fn previous(&mut self, key: i64) -> Result<Option<(Option<i64>, Previous)>>;
    /// The newest ledger entry of the transcript: mtime (ns) and whether it vanished.
    fn ledger(&mut self, transcript: i64) -> Result<Option<(i64, bool)>>;
    /// The transcript's last ordinal.
    fn max_ordinal(&mut self, transcript: i64) -> Result<Option<i64>>;
    /// Bytes and messages of lines `from..split` and of lines from `split` on.
    fn tail_totals(
        &mut self,
        transcript: i64,
        from: i64,
        split: i64,
    ) -> Result<(i64, i64, i64, i64)>;
    /// The first line's bytes.
    fn first_line(&mut self, transcript: i64) -> Result<Vec<u8>>;
    /// The last non-empty value of a metadata kind.
    fn last_metadata(&mut self, transcript: i64, kind: &str) -> Result<Option<String>>;
    /// The last `tag` entry's value (empty or NULL included), if there is one.
    fn last_tag(&mut self, transcript: i64) -> Result<Option<Option<String>>>;
    /// The last non-empty `summary` whose `leafUuid` is a line of the transcript (or none).
    fn last_summary(&mut self, transcript: i64) -> Result<Option<String>>;
    /// User lines (status 0) from `from` on, in file order.
    fn scan_user_lines(
        &mut self,
        transcript: i64,
        from: i64,
        f: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<()>;
    /// JSON lines from `from` on that contain `needle`, forward or backward.
    fn scan_lines_with(
        &mut self,
        transcript: i64,
        needle: &[u8],
        forward: bool,
        from: i64,
        f: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<()>;
    /// The first and last non-NULL timestamps from `from` on.
    fn timestamps(
        &mut self,
        transcript: i64,
        from: i64,
    ) -> Result<(Option<String>, Option<String>)>;
    /// Live sub-agent transcripts of the session.
    fn subagents(&mut self, key: i64) -> Result<i64>;
    /// Writes the row.
    fn upsert(&mut self, row: &Computed<'_>) -> Result<()>;
}

/// The SQLite store's [`CatalogSource`]: the statements above on one connection.
struct Sqlite<'c>(&'c Connection);

impl CatalogSource for Sqlite<'_> {
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

    fn first_line(&mut self, transcript: i64) -> Result<Vec<u8>> {
        Ok(self
            .0
            .prepare_cached(SELECT_FIRST_ROW)?
            .query_row([transcript], |r| r.get(0))?)
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

    fn upsert(&mut self, c: &Computed<'_>) -> Result<()> {
        self.0
            .prepare_cached(UPSERT)?
            .execute(rusqlite::params_from_iter(bound(c)))?;
        Ok(())
    }
}

/// A computed row's values in [`COLUMNS`]' order, as an array of `&$to_sql` (each backend
/// binds the same list with its own parameter trait).
macro_rules! catalog_values {
    ($c:expr, $to_sql:ty) => {{
        let c = $c;
        let e = c.entry;
        let values: [&$to_sql; 30] = [
            &c.session_key,
            &c.session_id,
            &c.project_id,
            &e.listed,
            &e.summary,
            &e.custom_title,
            &e.user_title,
            &e.ai_title,
            &e.last_prompt,
            &e.summary_record,
            &e.first_prompt,
            &e.git_branch,
            &e.cwd,
            &e.tag,
            &e.created_at,
            &e.first_timestamp,
            &e.last_timestamp,
            &c.last_modified,
            &c.written_at,
            &e.file_size,
            &e.message_count,
            &c.subagents,
            &e.source_state,
            &c.name_text,
            &e.main_transcript,
            &e.scanned_ordinal,
            &e.base_size,
            &e.base_messages,
            &e.first_line_sidechain,
            &e.prompt_is_command,
        ];
        values
    }};
}
#[cfg_attr(not(feature = "postgres"), allow(unused_imports))]
pub(crate) use catalog_values;

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

/// The catalog columns in [`UPSERT`]'s order, for [`stale_columns`] (and the team store's).
pub(crate) const COLUMNS: [&str; 30] = [
    "session_key",
    "session_id",
    "project_id",
    "listed",
    "summary",
    "custom_title",
    "user_title",
    "ai_title",
    "last_prompt",
    "summary_record",
    "first_prompt",
    "git_branch",
    "cwd",
    "tag",
    "created_at",
    "first_timestamp",
    "last_timestamp",
    "last_modified",
    "written_at",
    "file_size",
    "message_count",
    "subagent_count",
    "source_state",
    "name_text",
    "main_transcript",
    "scanned_ordinal",
    "base_size",
    "base_messages",
    "first_line_sidechain",
    "prompt_is_command",
];

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

/// Recomputes a session's catalog row from what `src` reads, with `written` the time
/// sessiondb itself wrote to it (if it did): the one implementation of the catalog's rules,
/// for every backend.
pub(crate) fn refresh_with(
    src: &mut impl CatalogSource,
    session_key: i64,
    written: Option<i64>,
) -> Result<()> {
    computed(src, session_key, written, false, |src, row| src.upsert(row))
}

/// Computes a session's catalog row, from the previous refresh's watermark on or, when
/// `full`, from its first line, and hands it to `then`; `T::default()` when the session
/// does not exist.
pub(crate) fn computed<S: CatalogSource, T: Default>(
    src: &mut S,
    session_key: i64,
    written: Option<i64>,
    full: bool,
    then: impl FnOnce(&mut S, &Computed<'_>) -> Result<T>,
) -> Result<T> {
    let Some((session_id, project_id, main)) = src.session(session_key)? else {
        return Ok(T::default());
    };
    let (previous_written, previous) = src.previous(session_key)?.unwrap_or_default();
    let previous = if full { Previous::default() } else { previous };
    let written_at = match (previous_written, written) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let mut e = match main {
        Some(transcript) => compute(src, transcript, previous)?,
        None => Entry {
            source_state: "none",
            ..Entry::default()
        },
    };
    let subagents = src.subagents(session_key)?;
    let last_modified = e.mtime_ms.max(written_at.unwrap_or(0));
    let name_text = [
        &e.summary,
        &e.user_title,
        &e.ai_title,
        &e.last_prompt,
        &e.summary_record,
        &e.first_prompt,
    ]
    .iter()
    .filter_map(|s| s.as_deref())
    .map(str::to_lowercase)
    .collect::<Vec<_>>()
    .join("\n");
    if e.summary.is_none() {
        e.listed = false;
    }
    then(
        src,
        &Computed {
            session_key,
            session_id: &session_id,
            project_id,
            entry: &e,
            last_modified,
            written_at,
            subagents,
            name_text: &name_text,
        },
    )
}

/// Computes a session's entry from its main transcript. Lines before the previous
/// refresh's watermark are not read again when the transcript is the same one and has not
/// shrunk: their totals and first-found fields come from `previous`.
fn compute(src: &mut impl CatalogSource, transcript: i64, previous: Previous) -> Result<Entry> {
    let mut e = Entry {
        main_transcript: Some(transcript),
        ..Entry::default()
    };
    (e.mtime_ms, e.source_state) = match src.ledger(transcript)? {
        Some((mtime_ns, vanished)) => (
            mtime_ns.div_euclid(1_000_000),
            if vanished { "vanished" } else { "present" },
        ),
        None => (0, "none"),
    };
    let Some(max_ordinal) = src.max_ordinal(transcript)? else {
        e.scanned_ordinal = -1;
        return Ok(e);
    };
    let incremental = previous.main_transcript == Some(transcript)
        && previous.scanned_ordinal >= 0
        && max_ordinal >= previous.scanned_ordinal;
    let p = if incremental {
        previous
    } else {
        Previous::default()
    };
    let from = p.scanned_ordinal.max(0);
    let (base_size, base_messages, tail_size, tail_messages) =
        src.tail_totals(transcript, from, max_ordinal)?;
    e.base_size = p.base_size + base_size;
    e.base_messages = p.base_messages + base_messages;
    e.file_size = e.base_size + tail_size;
    e.message_count = e.base_messages + tail_messages;
    e.scanned_ordinal = max_ordinal;
    e.first_line_sidechain = if from == 0 {
        let first_line = src.first_line(transcript)?;
        contains(&first_line, b"\"isSidechain\":true")
            || contains(&first_line, b"\"isSidechain\": true")
    } else {
        p.first_line_sidechain
    };
    e.user_title = src.last_metadata(transcript, "custom-title")?;
    e.ai_title = src.last_metadata(transcript, "ai-title")?;
    e.last_prompt = src.last_metadata(transcript, "last-prompt")?;
    e.custom_title = e.user_title.clone().or_else(|| e.ai_title.clone());
    e.summary_record = src.last_summary(transcript)?;
    e.tag = src
        .last_tag(transcript)?
        .flatten()
        .filter(|t| !t.is_empty());
    (e.first_prompt, e.prompt_is_command) = if p.first_prompt.is_some() && !p.prompt_is_command {
        (p.first_prompt, false)
    } else {
        let fallback = p.first_prompt.filter(|_| p.prompt_is_command);
        first_prompt_of(src, transcript, from, fallback)?
    };
    e.summary = e
        .custom_title
        .clone()
        .or_else(|| e.last_prompt.clone())
        .or_else(|| e.summary_record.clone())
        .or_else(|| e.first_prompt.clone());
    e.git_branch = field_of(src, transcript, "gitBranch", false, from)?.or(p.git_branch);
    e.cwd = match p.cwd {
        Some(cwd) => Some(cwd),
        None => field_of(src, transcript, "cwd", true, from)?,
    };
    let (first, last) = src.timestamps(transcript, from)?;
    if p.first_timestamp.is_some() {
        e.first_timestamp = p.first_timestamp;
        e.created_at = p.created_at;
    } else {
        e.created_at = first.as_deref().and_then(parse_iso8601_ms);
        e.first_timestamp = first;
    }
    e.last_timestamp = last.or(p.last_timestamp);
    e.listed = e.file_size > 0 && !e.first_line_sidechain && e.summary.is_some();
    Ok(e)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The first (`forward`) or last non-empty top-level string `key` of the transcript's lines
/// from ordinal `from` on.
fn field_of(
    src: &mut impl CatalogSource,
    transcript: i64,
    key: &str,
    forward: bool,
    from: i64,
) -> Result<Option<String>> {
    let needle = format!("\"{key}\"").into_bytes();
    let mut found = None;
    src.scan_lines_with(transcript, &needle, forward, from, &mut |raw| {
        if let Some(Value::Object(map)) = crate::jsonl::parse_record(raw) {
            if let Some(Value::String(s)) = map.get(key) {
                if !s.is_empty() {
                    found = Some(s.clone());
                    return true;
                }
            }
        }
        false
    })?;
    Ok(found)
}

/// The first prompt of the lines from ordinal `from` on, with `fallback` the command seen
/// before; returns the prompt and whether it is only the command fallback.
fn first_prompt_of(
    src: &mut impl CatalogSource,
    transcript: i64,
    from: i64,
    fallback: Option<String>,
) -> Result<(Option<String>, bool)> {
    let mut finder = FirstPrompt {
        command_fallback: fallback,
    };
    let mut found = None;
    src.scan_user_lines(transcript, from, &mut |raw| {
        found = finder.feed(raw);
        found.is_some()
    })?;
    if let Some(found) = found {
        return Ok((Some(found), false));
    }
    let fallback = finder.finish();
    let is_command = fallback.is_some();
    Ok((fallback, is_command))
}

/// The Agent SDK's first-prompt rule (spec §9.2, SDK quirk 7), fed one line at a time.
///
/// A line counts when it contains `"type":"user"` and none of `"tool_result"`,
/// `"isMeta":true`, `"isCompactSummary":true` (each also with a space after the colon) and
/// parses as a user record with a `message` object. Its string content, or the `text` of each
/// text block, is a candidate: newlines become spaces and it is trimmed; a slash command is
/// remembered as the fallback and skipped; generated text (`<local-command-stdout>`,
/// `<session-start-hook>`, `<tick>`, `<goal>`, `[Request interrupted by user…]`, a lone
/// `<ide_opened_file>` or `<ide_selection>` element) is skipped. The first survivor is cut to
/// 200 characters plus `…`.
#[derive(Debug, Default)]
pub struct FirstPrompt {
    command_fallback: Option<String>,
}

impl FirstPrompt {
    /// Looks at one JSONL line; returns the prompt when this line has it.
    pub fn feed(&mut self, line: &[u8]) -> Option<String> {
        let has = |a: &[u8], b: &[u8]| contains(line, a) || contains(line, b);
        if !has(b"\"type\":\"user\"", b"\"type\": \"user\"")
            || contains(line, b"\"tool_result\"")
            || has(b"\"isMeta\":true", b"\"isMeta\": true")
            || has(b"\"isCompactSummary\":true", b"\"isCompactSummary\": true")
        {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let entry: Value = serde_json::from_str(text.trim()).ok()?;
        if entry.get("type").and_then(Value::as_str) != Some("user") {
            return None;
        }
        let content = entry.get("message")?.as_object()?.get("content")?;
        let texts: Vec<&str> = match content {
            Value::String(s) => vec![s.as_str()],
            Value::Array(blocks) => blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect(),
            _ => Vec::new(),
        };
        for raw in texts {
            let flat = raw.replace('\n', " ");
            let result = py_strip(&flat);
            if result.is_empty() {
                continue;
            }
            if let Some(name) = command_name(result) {
                if self.command_fallback.is_none() && !name.is_empty() {
                    self.command_fallback = Some(name.to_owned());
                }
                continue;
            }
            if is_generated(result) {
                continue;
            }
            return Some(truncate_prompt(result));
        }
        None
    }

    /// The fallback when no line had a prompt: the first slash command seen.
    pub fn finish(self) -> Option<String> {
        self.command_fallback
    }
}

fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

fn py_strip(s: &str) -> &str {
    s.trim_matches(py_space)
}

/// `<command-name>X</command-name>` anywhere in the text: `X`.
fn command_name(text: &str) -> Option<&str> {
    const OPEN: &str = "<command-name>";
    const CLOSE: &str = "</command-name>";
    let start = text.find(OPEN)? + OPEN.len();
    let len = text[start..].find(CLOSE)?;
    Some(&text[start..start + len])
}

fn is_generated(text: &str) -> bool {
    const PREFIXES: [&str; 4] = [
        "<local-command-stdout>",
        "<session-start-hook>",
        "<tick>",
        "<goal>",
    ];
    if PREFIXES.iter().any(|p| text.starts_with(p)) {
        return true;
    }
    if let Some(rest) = text.strip_prefix("[Request interrupted by user") {
        if rest.contains(']') {
            return true;
        }
    }
    let trimmed = text.trim_start_matches(py_space);
    let tail_trimmed = trimmed.trim_end_matches(py_space);
    for (open, close) in [
        ("<ide_opened_file>", "</ide_opened_file>"),
        ("<ide_selection>", "</ide_selection>"),
    ] {
        if tail_trimmed.len() >= open.len() + close.len()
            && tail_trimmed.starts_with(open)
            && tail_trimmed.ends_with(close)
        {
            return true;
        }
    }
    false
}

/// At most 200 characters; a longer prompt is cut, right-trimmed and given `…`.
fn truncate_prompt(text: &str) -> String {
    match text.char_indices().nth(200) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}\u{2026}", text[..cut].trim_end_matches(py_space)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(lines: &[&str]) -> Option<String> {
        let mut f = FirstPrompt::default();
        for line in lines {
            if let Some(p) = f.feed(line.as_bytes()) {
                return Some(p);
            }
        }
        f.finish()
    }

    #[test]
    fn first_prompt_rules() {
        let user =
            |c: &str| format!(r#"{{"type":"user","message":{{"role":"user","content":{c}}}}}"#);
        let cases: Vec<(Vec<String>, Option<&str>)> = vec![
            (vec![user(r#""hello\nworld ""#)], Some("hello world")),
            (
                vec![
                    user(r#""<command-name>/exit</command-name>""#),
                    user(r#""<local-command-stdout>bye</local-command-stdout>""#),
                ],
                Some("/exit"),
            ),
            (
                vec![
                    user(r#""[Request interrupted by user for tool use]""#),
                    user(r#"[{"type":"image"},{"type":"text","text":"  real  "}]"#),
                ],
                Some("real"),
            ),
            (
                vec![
                    user(r#""<ide_opened_file>a</ide_opened_file>""#),
                    user(r#""b""#),
                ],
                Some("b"),
            ),
            (
                vec![r#"{"type":"user","isMeta":true,"message":{"content":"meta"}}"#.into()],
                None,
            ),
            (
                vec![user(r#"[{"type":"tool_result","content":"x"}]"#)],
                None,
            ),
        ];
        for (lines, want) in cases {
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            assert_eq!(prompt(&refs).as_deref(), want, "{lines:?}");
        }
    }

    #[test]
    fn long_prompts_are_cut_at_200_characters() {
        let long = "é".repeat(250);
        let got = truncate_prompt(&long);
        assert_eq!(got.chars().count(), 201);
        assert!(got.ends_with('…'));
        assert_eq!(truncate_prompt("short"), "short");
        let spaced = format!("{}  {}", "a".repeat(199), "b".repeat(10));
        assert_eq!(truncate_prompt(&spaced), format!("{}…", "a".repeat(199)));
    }
}
