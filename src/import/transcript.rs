//! The import of one source file, written once for every engine: a session file stored
//! as it is, or, for a transcript, the decision between
//! a grown file (only its new lines are stored, an unterminated last line replaced by its
//! complete version) and a rewritten one (a new version of the transcript, the old one kept
//! and its local lines carried over), the row batches, the side tables and the ledger.
//! Each engine answers the narrow questions of [`TranscriptTx`] inside its write
//! transaction; nothing here knows which engine it is.

use super::load::{Lines, ReadFile};
use super::{Ahead, FileView, Fingerprint, LineTally, Parsed, Source, SourceKind};
use crate::error::Result;
use crate::jsonl::{self, Envelope, LineStatus};
use crate::model::ImportReport;
use crate::usage::record::{self, Fold};
use std::collections::HashSet;

/// Where a source file was read (its ledger key), its size and mtime.
#[derive(Clone, Copy)]
pub(crate) struct FileStamp<'a> {
    pub key: &'a str,
    pub size: i64,
    pub mtime_ns: i64,
}

/// A ledger entry of a transcript, as [`TranscriptTx::ledger_entry`] reads it.
pub(crate) struct LedgerEntry {
    pub imported_bytes: usize,
    pub fingerprint: Fingerprint,
    /// Whether the entry is this machine's (always on an engine of one machine).
    pub ours: bool,
}

/// A transcript's last stored row.
#[derive(Clone, Copy)]
pub(crate) struct LastRow {
    pub id: i64,
    pub ordinal: i64,
    pub terminated: bool,
    /// Bytes of its line.
    pub len: usize,
}

/// The SQL answers the import of a file needs, inside one write transaction.
pub(crate) trait TranscriptTx {
    /// Whether several machines import into the store: a rewritten file then does not
    /// replace a version holding lines from another machine's copy (see [`replace_version`]).
    const SHARED: bool;
    /// Lines per [`TranscriptTx::insert_lines`] call.
    const BATCH: usize;

    /// The stored session `source` belongs to, created (with its project) when new: the
    /// session a restore recorded at the file's main transcript path first (the file is
    /// then a second location of it, not a new session), else its folder's and id's.
    fn session_of(&mut self, source: &Source) -> Result<i64>;
    /// A stored session file's id and bytes.
    fn session_file(&mut self, session: i64, relpath: &str) -> Result<Option<(i64, Vec<u8>)>>;
    /// Stores a session file's bytes (a sidecar's on its live transcript too); its id.
    fn store_session_file(&mut self, session: i64, relpath: &str, content: &[u8]) -> Result<i64>;

    /// The live (not superseded) version of `subpath` in `session`.
    fn live_transcript(&mut self, session: i64, subpath: &str) -> Result<Option<i64>>;
    /// The ledger entry the transcript was last imported by: the file at `path`'s own
    /// entry first (a transcript restored to a second folder has one entry per location,
    /// and each location's file grows from what was written there), this machine's next.
    fn ledger_entry(&mut self, transcript: i64, path: &str) -> Result<Option<LedgerEntry>>;
    /// The transcript's row of the highest ordinal.
    fn last_row(&mut self, transcript: i64) -> Result<Option<LastRow>>;
    /// Removes one row (an unterminated last line about to be stored complete).
    fn delete_row(&mut self, row: i64) -> Result<()>;
    /// Marks a row's line as ending in a newline.
    fn terminate_row(&mut self, row: i64) -> Result<()>;
    /// The lines of a transcript, in order: those sessiondb wrote (`local`), or the others.
    fn lines_of(&mut self, transcript: i64, local: bool) -> Result<Vec<Vec<u8>>>;
    /// Marks a version superseded (kept, with its rows).
    fn supersede(&mut self, transcript: i64) -> Result<()>;
    /// A new, empty version of `subpath` in `session`.
    fn create_transcript(
        &mut self,
        session: i64,
        subpath: &str,
        agent_id: Option<&str>,
    ) -> Result<i64>;
    /// Stores `lines` from `ordinal` on with their projected columns (a line's `sessionId`
    /// only when it is not `own`), marked local when sessiondb wrote them, taking each
    /// one's search text; returns their row ids in line order.
    fn insert_lines(
        &mut self,
        transcript: i64,
        ordinal: i64,
        lines: &mut [Parsed<'_>],
        own: &str,
        local: bool,
    ) -> Result<Vec<i64>>;
    /// Sets the project's working folder unless it has one.
    fn set_project_cwd(&mut self, session: i64, cwd: &str) -> Result<()>;
    /// Fills the side tables of a record stored as `row` (metadata, compactions, content
    /// replacements, file history; not the usage projection, see [`Self::store_usage`]).
    fn project_sides(
        &mut self,
        transcript: i64,
        row: i64,
        bytes: &[u8],
        env: &Envelope<'_>,
    ) -> Result<()>;
    /// Stores the responses of lines of `session` just stored, folded by the dedupe rule
    /// (one upsert per response: docs/usage.md).
    fn store_usage(&mut self, session: i64, usage: &Fold<'_>) -> Result<()>;
    /// Copies the session file `relpath` (a sub-agent's `.meta.json`) onto the transcript.
    fn copy_sidecar(&mut self, session: i64, relpath: &str, transcript: i64) -> Result<()>;
    /// Called after each piece of a file read in pieces was stored: a chance to let go of
    /// what the piece left behind (SQLite indexes the search texts kept so far).
    fn piece_written(&mut self) -> Result<()> {
        Ok(())
    }
    /// Records that the file of `stamp` was imported up to `imported` bytes, which `file`
    /// holds the last [`super::TAIL_BYTES`] of.
    fn write_ledger(
        &mut self,
        stamp: &FileStamp<'_>,
        transcript: Option<i64>,
        session_file: Option<i64>,
        file: &FileView<'_>,
        imported: usize,
    ) -> Result<()>;
}

/// A transcript file about to be written: its bytes from file offset `base` on, the lines
/// parsed ahead (offsets in `buf`; empty to parse them here) and its stamp.
pub(crate) struct Incoming<'a> {
    pub buf: &'a mut Vec<u8>,
    pub base: usize,
    pub ahead: Ahead,
    pub stamp: FileStamp<'a>,
    /// `Some(piece_bytes)`: the file is too large to hold; it is read in pieces of about
    /// that many bytes while it is written ([`super::stream`]), `buf` (empty) holding
    /// each piece in turn, and `stamp.size` is its size when it was looked at.
    pub pieces: Option<usize>,
}

/// A file the import wrote: its session, its transcript's or session file's id, and the
/// buffer it was read into, for reuse.
pub(crate) struct Written {
    pub session: i64,
    pub id: i64,
    pub buf: Vec<u8>,
}

/// Writes one file the loader read ([`super::load`]) into the transaction of `tx`: a
/// session file as it is, a transcript by [`import_transcript`]. `Err(why)` when a
/// transcript conflicts with another machine's version (nothing was written).
pub(crate) fn write_file<T: TranscriptTx>(
    tx: &mut T,
    source: &Source,
    file: ReadFile,
    report: &mut ImportReport,
) -> Result<std::result::Result<Written, String>> {
    let ReadFile {
        bytes: mut buf,
        base,
        mtime_ns,
        ahead,
        pieces,
    } = file;
    let key = super::path_key(&source.path);
    report.bytes_read += buf.len() as u64;
    let stamp = FileStamp {
        key: &key,
        size: pieces.map_or((base + buf.len()) as i64, |p| p.size as i64),
        mtime_ns,
    };
    let session = tx.session_of(source)?;
    let id = match &source.kind {
        SourceKind::File { relpath } => {
            // The loader reads session files whole.
            debug_assert_eq!(base, 0);
            let id = match tx.session_file(session, relpath)? {
                Some((id, stored)) if stored == buf => {
                    report.files_unchanged += 1;
                    id
                }
                _ => {
                    report.files_imported += 1;
                    tx.store_session_file(session, relpath, &buf)?
                }
            };
            tx.write_ledger(&stamp, None, Some(id), &FileView::whole(&buf), buf.len())?;
            id
        }
        kind => {
            let file = Incoming {
                buf: &mut buf,
                base,
                ahead,
                stamp,
                pieces: pieces.map(|p| p.piece_bytes),
            };
            match import_transcript(tx, session, source, kind, file, report)? {
                Ok(id) => id,
                Err(why) => return Ok(Err(why)),
            }
        }
    };
    Ok(Ok(Written { session, id, buf }))
}

/// Where the stored copy of a transcript ends, to decide between append and re-import.
struct StoredState {
    imported_bytes: usize,
    fingerprint: Fingerprint,
    next_ordinal: i64,
    /// The last row when it had no newline: it is replaced by the grown file's version.
    open_tail: Option<(i64, usize)>,
    ours: bool,
}

/// The stored state of a live transcript as its ledger saw it. `None` when the transcript
/// holds lines no ledger accounts for (written through the API only), which makes the file
/// a new version.
fn stored_state<T: TranscriptTx>(
    tx: &mut T,
    transcript: i64,
    path: &str,
) -> Result<Option<StoredState>> {
    let ledger = tx.ledger_entry(transcript, path)?;
    let last = tx.last_row(transcript)?;
    let Some(ledger) = ledger else {
        return Ok(last.is_none().then(|| StoredState {
            imported_bytes: 0,
            fingerprint: Fingerprint::Tail(super::prefix_hash(b"")),
            next_ordinal: 0,
            open_tail: None,
            ours: false,
        }));
    };
    let (next_ordinal, open_tail) = match last {
        Some(row) if !row.terminated => (row.ordinal, Some((row.id, row.len))),
        Some(row) => (row.ordinal + 1, None),
        None => (0, None),
    };
    Ok(Some(StoredState {
        imported_bytes: ledger.imported_bytes,
        fingerprint: ledger.fingerprint,
        next_ordinal,
        open_tail,
        ours: ledger.ours,
    }))
}

/// Imports a transcript file into the session's live version of it: its new lines when
/// the file grew, or the whole file as a new version when it was rewritten. Returns the
/// transcript it is stored in, or why the file was left out when it conflicts with another
/// machine's version (see [`replace_version`]; nothing was written then).
pub(crate) fn import_transcript<T: TranscriptTx>(
    tx: &mut T,
    session: i64,
    source: &Source,
    kind: &SourceKind,
    file: Incoming<'_>,
    report: &mut ImportReport,
) -> Result<std::result::Result<i64, String>> {
    let Incoming {
        buf,
        mut base,
        mut ahead,
        stamp,
        pieces,
    } = file;
    let subpath = kind.subpath();
    let agent_id = match kind {
        SourceKind::Sidechain { agent_id, .. } => Some(agent_id.as_str()),
        _ => None,
    };
    let own = source.session.as_str();
    let live = tx.live_transcript(session, subpath)?;
    let state = match live {
        Some(id) => stored_state(tx, id, stamp.key)?,
        None => None,
    };
    // Whether the file still starts with what was imported: then only its new lines are
    // stored. When what was read does not reach back to where that check (or the
    // unterminated last line) starts, the file is read whole; a rewritten file too. A file
    // read in pieces is checked on disk, and read from where its new lines start.
    let mut read_whole = |buf: &mut Vec<u8>, base: &mut usize, ahead: &mut Ahead| -> Result<()> {
        super::read_whole(&source.path, buf)?;
        report.bytes_read += buf.len() as u64;
        *base = 0;
        *ahead = Ahead::default();
        Ok(())
    };
    let appends = match &state {
        Some(state) if pieces.is_some() => {
            super::stream::prefix_matches(&source.path, state.fingerprint, state.imported_bytes)?
        }
        Some(state) => {
            let open_tail = state.open_tail.map_or(0, |(_, len)| len);
            let needed = state
                .fingerprint
                .needs_from(state.imported_bytes)
                .min(state.imported_bytes.saturating_sub(open_tail));
            if base > needed {
                read_whole(buf, &mut base, &mut ahead)?;
            }
            let view = FileView { base, bytes: buf };
            state.fingerprint.matches(&view, state.imported_bytes) == Some(true)
        }
        None => false,
    };
    if pieces.is_none() && !appends && base > 0 {
        read_whole(buf, &mut base, &mut ahead)?;
    }
    // The file's length: what was read, or what `stat` said of a file read in pieces.
    let len = match pieces {
        Some(_) => stamp.size as usize,
        None => base + buf.len(),
    };
    let mut start = 0usize;
    let mut ordinal = 0i64;
    // The version a rewritten file replaces, and what the new content holds when that had
    // to be known before (else it is noted while the lines are written).
    let mut replaced = None;
    let transcript = match (live, state) {
        (Some(id), Some(state)) if appends => {
            start = state.imported_bytes;
            ordinal = state.next_ordinal;
            if start < len {
                if let Some((row, len)) = state.open_tail {
                    // The unterminated last line grew: store its complete version instead.
                    tx.delete_row(row)?;
                    start -= len;
                }
            }
            id
        }
        (Some(id), state) => {
            // Lines of the live version no ledger of this machine accounts for came from
            // another machine's copy of the file (or another writer): on a store several
            // machines share, what the new content holds is needed first.
            let from_here = state.is_some_and(|s| s.ours);
            let held = if T::SHARED && !from_here {
                let mut held = Held::default();
                match pieces {
                    Some(piece_bytes) => {
                        super::stream::each_piece(
                            &source.path,
                            0,
                            piece_bytes,
                            buf,
                            |piece, ahead| {
                                for (line, _, env, _, _) in ahead.lines_from(piece, 0).lines {
                                    held.note(line.bytes, &env);
                                }
                                Ok(())
                            },
                        )?;
                    }
                    None => {
                        for line in jsonl::split_lines(buf) {
                            held.note(line.bytes, &Envelope::parse(line.bytes).1);
                        }
                    }
                }
                Some(held)
            } else {
                None
            };
            let none = Held::default();
            let rule = held.as_ref().unwrap_or(&none);
            match replace_version(tx, session, id, subpath, agent_id, rule, from_here)? {
                Ok(new) => {
                    report.files_rewritten += 1;
                    replaced = Some((id, held));
                    new
                }
                Err(why) => return Ok(Err(why)),
            }
        }
        (None, _) => tx.create_transcript(session, subpath, agent_id)?,
    };
    if start < len {
        report.files_imported += 1;
    } else {
        report.files_unchanged += 1;
    }
    let mut writing = Writing {
        transcript,
        session,
        own,
        ordinal,
        tally: LineTally::new(&source.path),
        noted: matches!(replaced, Some((_, None))).then(Held::default),
        fold: Fold::default(),
    };
    match pieces {
        None => {
            let file = FileView { base, bytes: buf };
            let before = || super::newlines_before(&source.path, &file, start);
            let lines = ahead.lines_from(file.bytes, start - file.base);
            writing.lines(tx, lines, &before, report)?;
            writing.finish(tx, report, replaced)?;
            tx.write_ledger(
                &FileStamp {
                    size: file.len() as i64,
                    ..stamp
                },
                Some(transcript),
                None,
                &file,
                file.len(),
            )?;
        }
        Some(piece_bytes) => {
            // The lines before `start` are counted from the file, as for a grown file.
            let head = FileView {
                base: start,
                bytes: &[],
            };
            let before = || super::newlines_before(&source.path, &head, start);
            let read = super::stream::each_piece(
                &source.path,
                start,
                piece_bytes,
                buf,
                |piece, ahead| {
                    report.bytes_read += piece.len() as u64;
                    writing.lines(tx, ahead.lines_from(piece, 0), &before, report)?;
                    tx.piece_written()
                },
            )?;
            writing.finish(tx, report, replaced)?;
            tx.write_ledger(
                &FileStamp {
                    size: read.end as i64,
                    ..stamp
                },
                Some(transcript),
                None,
                &read.view(),
                read.end,
            )?;
        }
    }
    if let Some(sidecar) = agent_id.map(|_| format!("{subpath}.meta.json")) {
        tx.copy_sidecar(session, &sidecar, transcript)?;
    }
    Ok(Ok(transcript))
}

/// The lines of one transcript file being stored, in order.
struct Writing<'s> {
    transcript: i64,
    session: i64,
    own: &'s str,
    /// The next line's ordinal.
    ordinal: i64,
    tally: LineTally<'s>,
    /// What a rewritten file holds, noted as its lines are stored (for
    /// [`carry_local_rows`]), when it was not needed before.
    noted: Option<Held>,
    /// The API responses of the lines stored, folded by the dedupe rule (docs/usage.md).
    fold: Fold<'static>,
}

impl Writing<'_> {
    /// Stores `lines`, tallies them and fills their side tables. `before` counts the lines
    /// of the file before the first one this import stores.
    fn lines<T: TranscriptTx>(
        &mut self,
        tx: &mut T,
        lines: Lines<'_>,
        before: &impl Fn() -> Result<u64>,
        report: &mut ImportReport,
    ) -> Result<()> {
        let Lines { mut lines, usage } = lines;
        // The row of each line, to give the folded responses theirs.
        let mut rows = Vec::with_capacity(if usage.is_empty() { 0 } else { lines.len() });
        for chunk in lines.chunks_mut(T::BATCH) {
            let ids = tx.insert_lines(self.transcript, self.ordinal, chunk, self.own, false)?;
            if !usage.is_empty() {
                rows.extend_from_slice(&ids);
            }
            for ((line, status, env, _, _), row) in chunk.iter().zip(ids) {
                if let Some(cwd) = self.tally.line(report, line, *status, env, before)? {
                    tx.set_project_cwd(self.session, cwd)?;
                }
                if *status == LineStatus::Record {
                    tx.project_sides(self.transcript, row, line.bytes, env)?;
                }
                if let Some(held) = &mut self.noted {
                    held.note(line.bytes, env);
                }
            }
            self.ordinal += chunk.len() as i64;
        }
        self.fold.absorb(usage.into_owned(), |i| {
            rows[usize::try_from(i).unwrap_or(0)]
        });
        Ok(())
    }

    /// Closes the tally, carries the local lines of the version a rewritten file replaced
    /// (`replaced`: it, and what the new content holds when that was known first), and
    /// stores the usage of the lines.
    fn finish<T: TranscriptTx>(
        mut self,
        tx: &mut T,
        report: &mut ImportReport,
        replaced: Option<(i64, Option<Held>)>,
    ) -> Result<()> {
        self.tally.finish(report);
        if let Some((old, held)) = replaced {
            let held = held.or(self.noted).unwrap_or_default();
            report.local_rows_kept +=
                carry_local_rows(tx, old, self.transcript, self.own, &held, &mut self.fold)?;
        }
        if !self.fold.is_empty() {
            tx.store_usage(self.session, &self.fold)?;
        }
        Ok(())
    }
}

/// The rule for a rewritten file, the same for `import` and `sync`: the session's live
/// version `old` of the file is superseded (kept, with its lines) by a new, empty version,
/// which the caller fills with the new content and then completes with
/// [`carry_local_rows`], so no line sessiondb wrote is lost from the live version.
///
/// On a store several machines share ([`TranscriptTx::SHARED`]) the replacement is refused
/// (`Err` with the reason, nothing written) when `old` holds a line that neither sessiondb
/// wrote nor the new content (`held`) has, unless `from_here`: such a line came from
/// another machine's copy of the file (or another writer), and replacing would hide it;
/// `from_here` says the live version came from this machine (import: this machine's ledger
/// accounts for it; sync: this store held every such line). Two machines holding different
/// versions of one file therefore do not replace each other's in turn.
pub(crate) fn replace_version<T: TranscriptTx>(
    tx: &mut T,
    session: i64,
    old: i64,
    subpath: &str,
    agent_id: Option<&str>,
    held: &Held,
    from_here: bool,
) -> Result<std::result::Result<i64, String>> {
    if T::SHARED && !from_here {
        let foreign = tx
            .lines_of(old, false)?
            .iter()
            .filter(|raw| !held.holds(raw, &Envelope::parse(raw).1))
            .count();
        if foreign > 0 {
            return Ok(Err(format!(
                "the team store's version holds {foreign} line(s) from another machine's copy \
                 of this file that this one lacks; left as it is"
            )));
        }
    }
    tx.supersede(old)?;
    Ok(Ok(tx.create_transcript(session, subpath, agent_id)?))
}

/// What a rewritten file holds, to tell which local lines of the version it replaces are
/// still missing from it (see [`carry_local_rows`]): a 128-bit hash of each line's bytes
/// (so that a file read in pieces need not be held), and each record's uuid.
#[derive(Default)]
pub(crate) struct Held {
    lines: HashSet<u128>,
    uuids: HashSet<String>,
}

impl Held {
    /// Records a line of the new content.
    pub fn note(&mut self, bytes: &[u8], env: &Envelope<'_>) {
        self.lines.insert(xxhash_rust::xxh3::xxh3_128(bytes));
        if let Some(uuid) = env.uuid.as_deref().filter(|u| !u.is_empty()) {
            self.uuids.insert(uuid.to_owned());
        }
    }

    /// Whether the new content already holds the line `raw` (read as `env`): the same
    /// bytes, or a record with the same uuid.
    pub fn holds(&self, raw: &[u8], env: &Envelope<'_>) -> bool {
        self.lines.contains(&xxhash_rust::xxh3::xxh3_128(raw))
            || env
                .uuid
                .as_deref()
                .is_some_and(|u| !u.is_empty() && self.uuids.contains(u))
    }
}

/// Copies the lines sessiondb wrote into transcript `old` (`append`, `tag`, `rename`, a
/// SessionStore append) to the end of `new`, which a re-import just filled from the
/// rewritten source file, skipping those the file already holds (same bytes or same uuid).
/// Without this, local writes would stay only in the superseded version. Returns the lines
/// copied.
pub(crate) fn carry_local_rows<T: TranscriptTx>(
    tx: &mut T,
    old: i64,
    new: i64,
    own: &str,
    held: &Held,
    fold: &mut Fold<'static>,
) -> Result<u64> {
    let local = tx.lines_of(old, true)?;
    let mut missing: Vec<Parsed<'_>> = local
        .iter()
        .filter_map(|raw| {
            let (status, env) = Envelope::parse(raw);
            if held.holds(raw, &env) {
                return None;
            }
            let search = if crate::search::is_indexed(status, &env) {
                jsonl::search_text(raw)
            } else {
                None
            };
            let line = jsonl::Line {
                bytes: raw,
                terminated: true,
            };
            Some((line, status, env, search, None))
        })
        .collect();
    if missing.is_empty() {
        return Ok(0);
    }
    // After the new content's last line, given its newline first when it had none (as
    // `append` does), so that the two do not glue together.
    let mut ordinal = match tx.last_row(new)? {
        Some(last) => {
            if !last.terminated {
                tx.terminate_row(last.id)?;
            }
            last.ordinal + 1
        }
        None => 0,
    };
    for chunk in missing.chunks_mut(T::BATCH) {
        let ids = tx.insert_lines(new, ordinal, chunk, own, true)?;
        for ((line, status, env, _, _), row) in chunk.iter().zip(ids) {
            if *status == LineStatus::Record {
                tx.project_sides(new, row, line.bytes, env)?;
                let found = record::responses(line.bytes, env);
                fold.add(row, found.into_iter().map(record::Response::into_owned));
            }
        }
        ordinal += chunk.len() as i64;
    }
    Ok(missing.len() as u64)
}
