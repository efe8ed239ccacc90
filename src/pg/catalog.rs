//! The catalog on PostgreSQL: the shared rules of [`crate::catalog`] over these statements.

use super::decode::RowExt;
use super::prepared;
use crate::catalog::{
    catalog_values, computed, refresh_with, CatalogSource, Computed, Previous, SessionState, Tail,
    TranscriptState, COLUMNS,
};
use crate::error::Result;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;
use postgres::Transaction;

/// Recomputes the catalog row of a session inside the caller's transaction; `written` is
/// when sessiondb itself wrote to it, if it did.
///
/// # Errors
/// Fails on a database error.
pub fn refresh_session(tx: &mut Transaction<'_>, key: i64, written: Option<i64>) -> Result<()> {
    refresh_with(&mut Pg(tx), key, written)
}

/// The columns of a session's catalog row that differ from a recomputation from all its
/// lines (`check`), as [`crate::catalog::stale_columns`] on SQLite; `["(missing)"]` when it
/// has no row.
///
/// # Errors
/// Fails on a database error.
pub fn stale_columns(tx: &mut Transaction<'_>, key: i64) -> Result<Vec<&'static str>> {
    let want = computed(&mut Pg(tx), key, None, true, |_, c| Ok(Some(as_text(c))))?;
    let Some(want) = want else {
        return Ok(Vec::new());
    };
    let sql = format!(
        "SELECT {} FROM catalog WHERE session_key = $1",
        COLUMNS
            .iter()
            .map(|c| format!("{c}::text"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let Some(row) = tx.query_opt(&sql, &[&key])? else {
        return Ok(vec!["(missing)"]);
    };
    let mut differ = Vec::new();
    for (i, name) in COLUMNS.iter().enumerate() {
        if row.col::<Option<String>>(i)? != want[i] {
            differ.push(*name);
        }
    }
    Ok(differ)
}

/// Recomputes a session's catalog row from all its lines, ignoring the incremental
/// watermark (`reindex`, `check --repair`).
///
/// # Errors
/// Fails on a database error.
pub fn rebuild_session(tx: &mut Transaction<'_>, key: i64) -> Result<()> {
    computed(&mut Pg(tx), key, None, true, |src, c| src.upsert(c))
}

/// A computed row in [`COLUMNS`]' order, each value as PostgreSQL's `::text` writes it.
fn as_text(c: &Computed<'_>) -> Vec<Option<String>> {
    let e = c.entry;
    let int = |v: i64| Some(v.to_string());
    let opt_int = |v: Option<i64>| v.map(|v| v.to_string());
    let boolean = |v: bool| Some(if v { "true" } else { "false" }.to_owned());
    vec![
        int(c.session_key),
        Some(c.session_id.to_owned()),
        int(c.project_id),
        boolean(e.listed),
        e.summary.clone(),
        e.custom_title.clone(),
        e.user_title.clone(),
        e.ai_title.clone(),
        e.last_prompt.clone(),
        e.summary_record.clone(),
        e.first_prompt.clone(),
        e.git_branch.clone(),
        e.cwd.clone(),
        e.tag.clone(),
        opt_int(e.created_at),
        e.first_timestamp.clone(),
        e.last_timestamp.clone(),
        int(c.last_modified),
        opt_int(c.written_at),
        int(e.file_size),
        int(e.message_count),
        int(c.subagents),
        Some(e.source_state.to_owned()),
        Some(c.name_text.to_owned()),
        opt_int(e.main_transcript),
        int(e.scanned_ordinal),
        int(e.base_size),
        int(e.base_messages),
        boolean(e.first_line_sidechain),
        boolean(e.prompt_is_command),
    ]
}

/// Lines a catalog scan reads first, and at most at once later. A scan usually stops at
/// its first line (the newest `gitBranch`, the first `cwd`, the first prompt), but its
/// statement matches most of a transcript: read whole, each refresh sent nearly every line
/// back to the client (in an import of the bench tree, a fifth of the server's time and as
/// many bytes again as the tree). A batch is one statement with `LIMIT` and `OFFSET`: one
/// round trip in the usual case, where a portal takes two.
const FIRST_SCAN_BATCH: i64 = 4;
const MAX_SCAN_BATCH: i64 = 4096;

struct Pg<'a, 'b>(&'a mut Transaction<'b>);

impl Pg<'_, '_> {
    /// Feeds `f` the lines `sql` selects (its last two parameters are the `LIMIT` and
    /// `OFFSET` of a batch) until it returns `true` or they run out.
    fn scan(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
        f: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<()> {
        let stmt = prepared(self.0, sql)?;
        let mut offset = 0i64;
        let mut batch = FIRST_SCAN_BATCH;
        loop {
            let mut all = params.to_vec();
            all.push(&batch);
            all.push(&offset);
            let mut rows = self.0.query_raw(&stmt, all)?;
            let mut got = 0;
            while let Some(row) = rows.next()? {
                got += 1;
                if f(row.col::<&[u8]>(0)?) {
                    return Ok(());
                }
            }
            if got < batch {
                return Ok(());
            }
            offset += batch;
            batch = (batch * 8).min(MAX_SCAN_BATCH);
        }
    }
}

impl CatalogSource for Pg<'_, '_> {
    fn first_line(&mut self, transcript: i64) -> Result<Vec<u8>> {
        let stmt = prepared(
            self.0,
            "SELECT raw FROM rows WHERE transcript_id = $1 ORDER BY ordinal LIMIT 1",
        )?;
        self.0.query_one(&stmt, &[&transcript])?.col(0)
    }

    fn scan_user_lines(
        &mut self,
        transcript: i64,
        from: i64,
        f: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<()> {
        self.scan(
            "SELECT raw FROM rows
             WHERE transcript_id = $1 AND ordinal >= $2 AND type = 'user' AND status = 0
             ORDER BY ordinal LIMIT $3 OFFSET $4",
            &[&transcript, &from],
            f,
        )
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
            "SELECT raw FROM rows WHERE transcript_id = $1 AND ordinal >= $3 AND status = 0
               AND position($2::bytea IN raw) > 0 ORDER BY ordinal LIMIT $4 OFFSET $5"
        } else {
            "SELECT raw FROM rows WHERE transcript_id = $1 AND ordinal >= $3 AND status = 0
               AND position($2::bytea IN raw) > 0 ORDER BY ordinal DESC LIMIT $4 OFFSET $5"
        };
        self.scan(sql, &[&transcript, &needle, &from], f)
    }

    fn session_state(&mut self, key: i64) -> Result<Option<SessionState>> {
        let stmt = prepared(
            self.0,
            "SELECT s.session_id, s.project_id,
                (SELECT id FROM transcripts t WHERE t.session_id = s.id AND t.subpath = ''
                   AND t.superseded_at IS NULL),
                (SELECT count(*) FROM transcripts t
                   WHERE t.session_id = s.id AND t.agent_id IS NOT NULL
                     AND t.superseded_at IS NULL AND t.subpath LIKE 'subagents/%'),
                c.session_key IS NOT NULL,
                c.written_at, c.main_transcript, c.scanned_ordinal, c.base_size,
                c.base_messages, c.first_line_sidechain, c.first_prompt, c.prompt_is_command,
                c.cwd, c.created_at, c.first_timestamp, c.last_timestamp, c.git_branch
             FROM sessions s LEFT JOIN catalog c ON c.session_key = s.id WHERE s.id = $1",
        )?;
        let Some(r) = self.0.query_opt(&stmt, &[&key])? else {
            return Ok(None);
        };
        let previous = if r.col::<bool>(4)? {
            Some((
                r.col(5)?,
                Previous {
                    main_transcript: r.col(6)?,
                    scanned_ordinal: r.col(7)?,
                    base_size: r.col(8)?,
                    base_messages: r.col(9)?,
                    first_line_sidechain: r.col(10)?,
                    first_prompt: r.col(11)?,
                    prompt_is_command: r.col(12)?,
                    cwd: r.col(13)?,
                    created_at: r.col(14)?,
                    first_timestamp: r.col(15)?,
                    last_timestamp: r.col(16)?,
                    git_branch: r.col(17)?,
                },
            ))
        } else {
            None
        };
        Ok(Some(SessionState {
            session: (r.col(0)?, r.col(1)?, r.col(2)?),
            previous,
            subagents: r.col(3)?,
        }))
    }

    fn transcript_state(&mut self, transcript: i64) -> Result<TranscriptState> {
        let stmt = prepared(
            self.0,
            "SELECT l.mtime_ns, l.vanished,
                (SELECT max(ordinal) FROM rows WHERE transcript_id = $1),
                (SELECT m.value FROM metadata m JOIN rows r ON r.id = m.row_id
                  WHERE m.transcript_id = $1 AND m.kind = 'custom-title'
                    AND m.value IS NOT NULL AND m.value <> ''
                  ORDER BY r.ordinal DESC LIMIT 1),
                (SELECT m.value FROM metadata m JOIN rows r ON r.id = m.row_id
                  WHERE m.transcript_id = $1 AND m.kind = 'ai-title'
                    AND m.value IS NOT NULL AND m.value <> ''
                  ORDER BY r.ordinal DESC LIMIT 1),
                (SELECT m.value FROM metadata m JOIN rows r ON r.id = m.row_id
                  WHERE m.transcript_id = $1 AND m.kind = 'last-prompt'
                    AND m.value IS NOT NULL AND m.value <> ''
                  ORDER BY r.ordinal DESC LIMIT 1),
                (SELECT m.value FROM metadata m JOIN rows r ON r.id = m.row_id
                  WHERE m.transcript_id = $1 AND m.kind = 'summary' AND m.value IS NOT NULL
                    AND m.value <> ''
                    AND (m.leaf_uuid IS NULL OR EXISTS (SELECT 1 FROM rows x
                          WHERE x.transcript_id = $1 AND x.uuid = m.leaf_uuid))
                  ORDER BY r.ordinal DESC LIMIT 1),
                (SELECT m.value FROM metadata m JOIN rows r ON r.id = m.row_id
                  WHERE m.transcript_id = $1 AND m.kind = 'tag'
                  ORDER BY r.ordinal DESC LIMIT 1)
             FROM (SELECT 1) one
             LEFT JOIN LATERAL (SELECT mtime_ns, vanished FROM source_files
                 WHERE transcript_id = $1 ORDER BY id DESC LIMIT 1) l ON true",
        )?;
        let r = self.0.query_one(&stmt, &[&transcript])?;
        let ledger = match (r.col::<Option<i64>>(0)?, r.col::<Option<bool>>(1)?) {
            (Some(mtime), Some(vanished)) => Some((mtime, vanished)),
            _ => None,
        };
        Ok(TranscriptState {
            ledger,
            max_ordinal: r.col(2)?,
            user_title: r.col(3)?,
            ai_title: r.col(4)?,
            last_prompt: r.col(5)?,
            summary_record: r.col(6)?,
            tag: r.col(7)?,
        })
    }

    fn tail(&mut self, transcript: i64, from: i64, split: i64) -> Result<Tail> {
        let stmt = prepared(self.0, "SELECT
                coalesce(sum(CASE WHEN ordinal < $3 THEN length(raw) + terminated::int END), 0)::bigint,
                count(*) FILTER (WHERE ordinal < $3 AND type IN ('user', 'assistant')
                    AND NOT is_sidechain AND NOT is_meta),
                coalesce(sum(CASE WHEN ordinal >= $3 THEN length(raw) + terminated::int END), 0)::bigint,
                count(*) FILTER (WHERE ordinal >= $3 AND type IN ('user', 'assistant')
                    AND NOT is_sidechain AND NOT is_meta),
                (SELECT timestamp FROM rows WHERE transcript_id = $1 AND ordinal >= $2
                   AND timestamp IS NOT NULL ORDER BY ordinal LIMIT 1),
                (SELECT timestamp FROM rows WHERE transcript_id = $1 AND ordinal >= $2
                   AND timestamp IS NOT NULL ORDER BY ordinal DESC LIMIT 1)
             FROM rows WHERE transcript_id = $1 AND ordinal >= $2")?;
        let r = self.0.query_one(&stmt, &[&transcript, &from, &split])?;
        Ok(Tail {
            totals: (r.col(0)?, r.col(1)?, r.col(2)?, r.col(3)?),
            timestamps: (r.col(4)?, r.col(5)?),
        })
    }

    fn upsert(&mut self, c: &Computed<'_>) -> Result<()> {
        let stmt = prepared(
            self.0,
            "INSERT INTO catalog (session_key, session_id, project_id, listed, summary,
                custom_title, user_title, ai_title, last_prompt, summary_record, first_prompt,
                git_branch, cwd, tag, created_at, first_timestamp, last_timestamp, last_modified,
                written_at, file_size, message_count, subagent_count, source_state, name_text,
                main_transcript, scanned_ordinal, base_size, base_messages, first_line_sidechain,
                prompt_is_command)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                     $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30)
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
                message_count = excluded.message_count,
                subagent_count = excluded.subagent_count, source_state = excluded.source_state,
                name_text = excluded.name_text, main_transcript = excluded.main_transcript,
                scanned_ordinal = excluded.scanned_ordinal, base_size = excluded.base_size,
                base_messages = excluded.base_messages,
                first_line_sidechain = excluded.first_line_sidechain,
                prompt_is_command = excluded.prompt_is_command",
        )?;
        self.0.execute(
            &stmt,
            &catalog_values!(c, dyn postgres::types::ToSql + Sync),
        )?;
        Ok(())
    }
}
