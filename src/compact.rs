//! `sessiondb compact` on a SQLite store: compresses the lines stored as they came (a store
//! made before V14, lines too few to train on when they were imported, appends), then gives
//! the space back to the file system.
//!
//! Lines are rewritten in batches, each batch one IMMEDIATE transaction that reads and
//! rewrites its rows: `kill -9` anywhere leaves every line either as it was or compressed
//! (both read back the same bytes), and the next run goes on with the lines still plain.
//! Each compressed line is decoded again and compared before it is written. Compressing a
//! line changes no text, so the search index is left alone (V14's update triggers).

use crate::codec::{sample_step, sql, train, Packer, Tuning};
use crate::error::{Error, Result};
use crate::model::Progress;
use crate::store::Store;
use rusqlite::params;
use serde::Serialize;

/// How [`compact`] runs.
#[derive(Debug, Clone)]
pub struct CompactOptions {
    /// When to train a dictionary, and its size.
    pub tuning: Tuning,
    /// Lines per transaction.
    pub batch_lines: usize,
    /// Give the freed pages back to the file system (`VACUUM`) at the end.
    pub vacuum: bool,
    /// Stop after this many batches, as if killed between two (for tests of resuming).
    pub stop_after_batches: Option<u64>,
}

impl Default for CompactOptions {
    fn default() -> Self {
        CompactOptions {
            tuning: Tuning::default(),
            batch_lines: 4096,
            vacuum: true,
            stop_after_batches: None,
        }
    }
}

/// What [`compact`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CompactReport {
    /// The dictionary lines were compressed with (`None`: the store holds too few lines to
    /// train one).
    pub dictionary: Option<i64>,
    /// Whether this run trained it.
    pub trained: bool,
    /// Lines stored as they came that this run looked at.
    pub lines_seen: u64,
    /// Lines it compressed.
    pub lines_compressed: u64,
    /// Their size as they came, and compressed.
    pub bytes_before: u64,
    /// Their size compressed.
    pub bytes_after: u64,
    /// Whether it stopped before the end (`stop_after_batches`); a next run goes on.
    pub interrupted: bool,
    /// The database file's size before and after (bytes).
    pub file_bytes_before: u64,
    /// The database file's size at the end.
    pub file_bytes_after: u64,
    /// Whether the file was vacuumed.
    pub vacuumed: bool,
    /// The free disk space `VACUUM` needed (bytes).
    pub vacuum_needs_bytes: u64,
}

/// Compresses the store's plain lines in batches, then vacuums (see the module doc).
///
/// # Errors
/// A database error (every batch committed before it stays), or [`Error::Invalid`] when the
/// disk has too little free space for `VACUUM` (nothing is vacuumed; the lines stay
/// compressed).
pub fn compact(
    store: &Store,
    options: &CompactOptions,
    progress: &dyn Progress,
) -> Result<CompactReport> {
    let mut report = CompactReport {
        file_bytes_before: file_bytes(store),
        ..CompactReport::default()
    };
    let Some(packer) = dictionary(store, &options.tuning, &mut report)? else {
        report.file_bytes_after = report.file_bytes_before;
        return Ok(report);
    };
    report.dictionary = Some(packer.id());
    let last = sql::last_row(&*store.reader()?)?;
    progress.start(last.max(0) as u64);
    let mut after = 0i64;
    let mut batches = 0u64;
    loop {
        if options.stop_after_batches.is_some_and(|n| batches >= n) {
            report.interrupted = true;
            break;
        }
        let Some(reached) = batch(store, &packer, after, options.batch_lines, &mut report)? else {
            break;
        };
        progress.advance((reached - after) as u64, "compressing lines");
        after = reached;
        batches += 1;
    }
    progress.finish();
    if options.vacuum && !report.interrupted {
        vacuum(store, &mut report)?;
    }
    report.file_bytes_after = file_bytes(store);
    Ok(report)
}

/// The dictionary to compress with: the newest, or one trained now from a sample of the
/// store's lines when one is due and the store holds enough.
fn dictionary(
    store: &Store,
    tuning: &Tuning,
    report: &mut CompactReport,
) -> Result<Option<Packer>> {
    let reader = store.reader()?;
    let newest = sql::newest(&reader)?;
    let last = sql::last_row(&reader)?;
    if sql::due(newest.as_ref(), last, tuning) {
        let total: i64 = reader.query_row(
            "SELECT coalesce(sum(iif(dict IS NULL, length(raw), line_len(raw, dict))), 0) FROM rows",
            [],
            |r| r.get(0),
        )?;
        if total as u64 >= tuning.train_min_bytes {
            // Every `every`-th line, newest first (what the store holds now), for about
            // `sample_bytes` in all.
            let every = sample_step(total as u64, tuning.sample_bytes) as i64;
            let mut stmt = reader
                .prepare("SELECT line(raw, dict) FROM rows WHERE id % ?1 = 0 ORDER BY id DESC")?;
            let mut rows = stmt.query([every])?;
            let mut sample: Vec<Vec<u8>> = Vec::new();
            let mut taken = 0usize;
            while let Some(row) = rows.next()? {
                let line = row.get_ref(0)?.as_bytes().map_err(rusqlite::Error::from)?;
                if line.len() >= crate::codec::MIN_LINE {
                    // Training looks at a line's first SAMPLE_LINE_BYTES only.
                    let cut = &line[..line.len().min(crate::codec::SAMPLE_LINE_BYTES)];
                    taken += cut.len();
                    sample.push(cut.to_vec());
                }
                if taken >= tuning.sample_bytes {
                    break;
                }
            }
            drop(rows);
            let lines: Vec<&[u8]> = sample.iter().map(Vec::as_slice).collect();
            if let Some(dict) = train(&lines, tuning.dict_bytes) {
                drop(stmt);
                drop(reader);
                store.write(|tx| sql::store(tx, &dict, lines.len() as i64))?;
                report.trained = true;
                return Ok(Some(Packer::new(&dict, tuning.level)));
            }
        }
    }
    Ok(newest.map(|d| Packer::new(&d.bytes, tuning.level)))
}

/// One batch: the next `limit` plain lines after row `after`, compressed (on every core) and
/// rewritten in one transaction. Returns the last row it looked at, or `None` at the end.
fn batch(
    store: &Store,
    packer: &Packer,
    after: i64,
    limit: usize,
    report: &mut CompactReport,
) -> Result<Option<i64>> {
    store.write(|tx| {
        let mut stmt = tx.prepare_cached(
            "SELECT id, raw, checksum FROM rows WHERE id > ?1 AND dict IS NULL
             ORDER BY id LIMIT ?2",
        )?;
        let rows: Vec<(i64, Vec<u8>, Option<i64>)> = stmt
            .query_map(params![after, limit as i64], |r| {
                let raw = r.get_ref(1)?;
                let bytes = raw.as_bytes().map_err(rusqlite::Error::from)?.to_vec();
                Ok((r.get(0)?, bytes, r.get(2)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let Some(&(last, _, _)) = rows.last() else {
            return Ok(None);
        };
        let packed = pack_all(packer, &rows);
        // A line stored before V10 has no checksum yet: it gets one now, over the bytes
        // that are compressed, so that damage to the frame is found like any other.
        let mut update = tx.prepare_cached(
            "UPDATE rows SET raw = ?2, dict = ?3, checksum = coalesce(checksum, ?4)
             WHERE id = ?1 AND dict IS NULL",
        )?;
        report.lines_seen += rows.len() as u64;
        for ((id, raw, _), packed) in rows.iter().zip(packed) {
            let Some(packed) = packed else { continue };
            update.execute(params![
                id,
                packed.bytes,
                packed.dict,
                crate::integrity::line_checksum(raw)
            ])?;
            report.lines_compressed += 1;
            report.bytes_before += raw.len() as u64;
            report.bytes_after += packed.bytes.len() as u64;
        }
        Ok(Some(last))
    })
}

/// Each line compressed (and checked by decoding it again), or `None` to leave it as it is,
/// spread over the machine's cores.
fn pack_all(
    packer: &Packer,
    rows: &[(i64, Vec<u8>, Option<i64>)],
) -> Vec<Option<crate::codec::Packed>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = rows.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let parts: Vec<_> = rows
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    let mut c = packer.compressor();
                    part.iter()
                        .map(|(_, raw, _)| {
                            c.pack(raw).filter(|p| {
                                crate::codec::unpack(p.dict, &p.bytes)
                                    .is_ok_and(|back| back == *raw)
                            })
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().expect("a compressing thread panicked"))
            .collect()
    })
}

/// The database file's size (0 when it cannot be read).
fn file_bytes(store: &Store) -> u64 {
    std::fs::metadata(store.path()).map_or(0, |m| m.len())
}

/// `VACUUM`, after checking the free disk space it needs: SQLite writes a copy of the
/// database's used pages to a temporary file, then the pages again through the WAL.
fn vacuum(store: &Store, report: &mut CompactReport) -> Result<()> {
    let (used, free_pages) = {
        let reader = store.reader()?;
        let pages: i64 = reader.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        let free: i64 = reader.query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
        let size: i64 = reader.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        ((pages - free) as u64 * size as u64, free)
    };
    // The temporary copy and the WAL, with a margin.
    let needs = used * 2 + used / 10;
    report.vacuum_needs_bytes = needs;
    if free_pages == 0 {
        return Ok(());
    }
    if let Some(available) = free_space(store.path()) {
        if available < needs {
            return Err(Error::Invalid(format!(
                "{}: VACUUM needs about {} MB of free disk space (a copy of the {} MB in use, \
                 and the same again in the write-ahead log) and {} MB are free; the lines are \
                 compressed, run `sessiondb compact` again once there is room",
                store.path().display(),
                needs >> 20,
                used >> 20,
                available >> 20
            )));
        }
    }
    store.vacuum()?;
    report.vacuumed = true;
    Ok(())
}

/// Free bytes for an unprivileged writer on the file system that holds `path`, and on the
/// one holding the temporary folder when that is another (the smaller of the two).
#[cfg(unix)]
fn free_space(path: &std::path::Path) -> Option<u64> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let of = |p: &std::path::Path| {
        rustix::fs::statvfs(p)
            .ok()
            .map(|s| s.f_bavail.saturating_mul(s.f_frsize))
    };
    let here = of(dir.unwrap_or_else(|| std::path::Path::new(".")))?;
    let temp = of(&std::env::temp_dir()).unwrap_or(here);
    Some(here.min(temp))
}

#[cfg(not(unix))]
fn free_space(_: &std::path::Path) -> Option<u64> {
    None
}
