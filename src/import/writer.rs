//! SQLite's import loop: a loading thread reads and parses the next files while this one
//! writes them in groups, one transaction per group, and a [`Checkpointer`] copies
//! committed pages from the WAL into the database file. One writer, as SQLite allows.

use super::load::{self, Loaded, ReadFile};
use super::sqlite::SqliteTx;
use super::{read_ledger, transcript, ImportLimits, Source, SourceKind};
use crate::checkpoint::Checkpointer;
use crate::codec::Packer;
use crate::error::Result;
use crate::model::{ImportReport, Progress};
use crate::search::PendingTexts;
use crate::store::Store;
use std::collections::BTreeSet;
use std::sync::mpsc;

/// Bytes of files the writer commits before it waits for the checkpointer to copy them all
/// (see [`Checkpointer::keep_up`]): the WAL grows to about this much, times the pages every
/// transaction rewrites, and then starts over.
/// Measured: 32, 64 and 128 MiB alike; 16 MiB slower.
const KEEP_UP_BYTES: u64 = 64 * 1024 * 1024;

/// Bytes of files written together in one transaction. Every commit rewrites the last
/// pages of each b-tree it touched (tens of pages, whatever the file's size), so small
/// files share one; a file is never split over two, so `kill -9` still leaves whole files
/// only, and the ledger of a file that was not committed makes the next import take it.
/// Measured: the 10,000-session tree (1.15 GB) 19–21 s → 11 s, with 4 and 16 MiB alike
/// and 64 MiB slower (less overlap with the loader).
const GROUP_BYTES: u64 = 16 * 1024 * 1024;

/// Files the loading thread may read and parse ahead of the writer. The bound that
/// matters is [`LOAD_AHEAD_BYTES`]: the loader must be able to prepare a whole group while
/// the writer stores the one before, or the two threads take turns instead of overlapping
/// (with 16 files, a group of small files was mostly parsed while the writer waited).
const LOAD_AHEAD: usize = 4096;

/// Buffers the loading thread keeps for reuse.
const SPARE_BUFFERS: usize = 4;

/// Bytes of files read ahead that the loading thread may hold at once, counting the group
/// the writer holds: room for the group being written, the next one, and a margin.
const LOAD_AHEAD_BYTES: usize = 4 * GROUP_BYTES as usize;

/// One import's writer side: the sources, and what it found so far.
pub(super) struct Run<'a> {
    pub store: &'a Store,
    pub sources: &'a [Source],
    pub report: &'a mut ImportReport,
    pub transcripts: &'a mut BTreeSet<i64>,
    /// What compresses the lines on the loading thread (see [`super::pack`]).
    pub packer: Option<&'a Packer>,
}

impl Run<'_> {
    /// Accounts for one loaded source; a file that was read joins `group`.
    fn take(&mut self, index: usize, loaded: Loaded, group: &mut Group) {
        let source = &self.sources[index];
        let transcripts = &mut *self.transcripts;
        let noted = |target: Option<i64>| {
            if let Some(id) = target {
                note_transcript(source, id, transcripts);
            }
        };
        if let Some(file) = loaded.into_write(self.report, noted) {
            group.push(index, file);
        }
    }

    /// Writes `group` (see [`write_group`]); returns the buffers for reuse.
    fn write(
        &mut self,
        group: &mut Group,
        texts: &mut PendingTexts,
        index_now: bool,
    ) -> Result<Vec<Vec<u8>>> {
        let written = write_group(
            self.store,
            self.sources,
            group,
            texts,
            self.report,
            index_now,
        )?;
        Ok(written
            .into_iter()
            .map(|(index, id, buf)| {
                note_transcript(&self.sources[index], id, self.transcripts);
                buf
            })
            .collect())
    }

    /// A session: loads each file on this thread, and writes what changed in one
    /// transaction (more only past [`GROUP_BYTES`]), indexing its lines for search in the
    /// last one. A session where nothing changed costs no write transaction.
    pub(super) fn inline(
        &mut self,
        sizes: &[u64],
        progress: &dyn Progress,
        limits: &ImportLimits,
    ) -> Result<()> {
        let mut texts = PendingTexts::new();
        let mut group = Group::default();
        let mut spare = Vec::new();
        let count = self.sources.len();
        for (index, size) in sizes.iter().enumerate() {
            let source = &self.sources[index];
            let loaded = load_here(
                self.store,
                source,
                spare.pop().unwrap_or_default(),
                limits,
                self.packer,
            )?;
            self.take(index, loaded, &mut group);
            progress.advance(*size, &source.path.to_string_lossy());
            let last = index + 1 == count;
            if group.bytes < GROUP_BYTES && !last {
                continue;
            }
            spare = self.write(&mut group, &mut texts, last)?;
            spare.truncate(1);
        }
        if !texts.is_empty() {
            // An earlier group's lines, when the last group had nothing to write.
            crate::search::catch_up_with(self.store, &mut texts)?;
        }
        Ok(())
    }

    /// A tree: three threads share the work: a loader reads and parses the next files
    /// (`load`), this one writes them in groups of [`GROUP_BYTES`], one transaction per
    /// group, and a [`Checkpointer`] copies committed pages from the WAL into the
    /// database file.
    pub(super) fn threaded(
        &mut self,
        sizes: &[u64],
        progress: &dyn Progress,
        limits: &ImportLimits,
    ) -> Result<()> {
        let store = self.store;
        let checkpointer = Checkpointer::start(store, None)?;
        let imported = std::thread::scope(|scope| {
            let (ready, loaded) = mpsc::sync_channel::<Result<Loaded>>(LOAD_AHEAD);
            // Buffers come back from the writer: fresh memory is slow to fault in.
            let (give_back, returned) = mpsc::channel::<Vec<u8>>();
            let sources = self.sources;
            let packer = self.packer;
            scope.spawn(move || {
                let mut spare = Vec::new();
                let mut in_flight = 0usize;
                for source in sources {
                    // Stay within the memory budget: wait for the writer to give buffers back.
                    loop {
                        let back = if in_flight > LOAD_AHEAD_BYTES {
                            returned.recv().ok()
                        } else {
                            returned.try_recv().ok()
                        };
                        let Some(buf) = back else { break };
                        // A buffer the writer grew (a file read again whole) counts as
                        // what it holds now.
                        in_flight = in_flight.saturating_sub(buf.len());
                        if spare.len() < SPARE_BUFFERS {
                            spare.push(buf);
                        }
                    }
                    let loaded = load_here(
                        store,
                        source,
                        spare.pop().unwrap_or_default(),
                        limits,
                        packer,
                    );
                    if let Ok(Loaded::Read(file)) = &loaded {
                        in_flight += file.bytes.len();
                    }
                    if ready.send(loaded).is_err() {
                        break;
                    }
                }
            });
            let mut texts = PendingTexts::new();
            let mut unindexed = 0u64;
            let mut group = Group::default();
            let mut loaded = loaded.into_iter();
            for (index, (source, size)) in sources.iter().zip(sizes).enumerate() {
                let Some(next) = loaded.next() else { break };
                self.take(index, next?, &mut group);
                progress.advance(*size, &source.path.to_string_lossy());
                if group.bytes < GROUP_BYTES && index + 1 < sources.len() {
                    continue;
                }
                let read_before = self.report.bytes_read;
                for buf in self.write(&mut group, &mut texts, false)? {
                    let _ = give_back.send(buf);
                }
                let read = self.report.bytes_read - read_before;
                checkpointer.committed(read);
                checkpointer.keep_up(KEEP_UP_BYTES);
                // New lines wait in the search queue; index them in large batches.
                unindexed += read;
                if unindexed >= crate::search::CATCH_UP_BYTES {
                    crate::search::catch_up_with(store, &mut texts)?;
                    checkpointer.request();
                    unindexed = 0;
                }
            }
            crate::search::catch_up_with(store, &mut texts).map(drop)
        });
        let stopped = checkpointer.stop(store);
        imported?;
        stopped
    }
}

/// Files read and waiting to be written together, in file order.
#[derive(Default)]
struct Group {
    /// Each file's index in the source list, with what the loader read.
    files: Vec<(usize, ReadFile)>,
    bytes: u64,
}

impl Group {
    fn push(&mut self, index: usize, file: ReadFile) {
        self.bytes += file.pieces.map_or(file.bytes.len() as u64, |p| p.size);
        self.files.push((index, file));
    }
}

/// Remembers a transcript the import touched (for the row count of the summary).
fn note_transcript(source: &Source, id: i64, transcripts: &mut BTreeSet<i64>) {
    if !matches!(source.kind, SourceKind::File { .. }) {
        transcripts.insert(id);
    }
}

/// Writes a group of files that were read, in one transaction: each file is wholly in it,
/// so a file is never half imported. With `index_now`, the lines queued for the full-text
/// index are indexed in the same transaction. Empties the group and returns, for each
/// file, its index, its transcript or file id, and its buffer for reuse.
fn write_group(
    store: &Store,
    sources: &[Source],
    group: &mut Group,
    texts: &mut PendingTexts,
    report: &mut ImportReport,
    index_now: bool,
) -> Result<Vec<(usize, i64, Vec<u8>)>> {
    let files = std::mem::take(&mut group.files);
    group.bytes = 0;
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let mut written = Vec::with_capacity(files.len());
    store.write(|tx| {
        // A session's catalog row is refreshed once, after all its files of the group.
        let mut touched = BTreeSet::new();
        for (index, file) in files {
            let mut sink = SqliteTx::new(tx, texts);
            let file = match transcript::write_file(&mut sink, &sources[index], file, report)? {
                Ok(file) => file,
                Err(why) => unreachable!("a store of one machine refused a version: {why}"),
            };
            touched.insert(file.session);
            written.push((index, file.id, file.buf));
        }
        for session in touched {
            crate::catalog::refresh_session(tx, session)?;
        }
        if index_now {
            crate::search::index_pending_with(tx, texts)?;
            texts.clear();
        }
        Ok(())
    })?;
    Ok(written)
}

/// [`load::load`] with the ledger read on a reader connection: a guess the writer checks in
/// its transaction (see [`load`]).
fn load_here(
    store: &Store,
    source: &Source,
    bytes: Vec<u8>,
    limits: &ImportLimits,
    packer: Option<&Packer>,
) -> Result<Loaded> {
    load::load(
        source,
        |key| read_ledger(&*store.reader()?, key),
        bytes,
        limits,
        packer,
    )
}
