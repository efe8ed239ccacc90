//! The dictionary an import compresses its lines with (see [`crate::codec`]): the store's
//! newest, or a new one trained before the import starts on a sample of the files it is
//! about to read, when the store has none yet (or has grown well past the newest) and the
//! import brings enough lines to train on. The lines are then compressed on the loading
//! thread as they are parsed; the writer only stores them.
//!
//! An import too small to train on stores its lines as they are when the store has no
//! dictionary; `sessiondb compact` compresses them later.

use super::{Source, SourceKind};
use crate::codec::{self, Packer, Tuning};
use crate::error::Result;
use crate::store::Store;
use std::io::Read;

/// Bytes of lines a sample takes at one pick: a file holding several picks gives as
/// many times this.
const PER_PICK_BYTES: usize = 64 * 1024;

/// How many times its share a sample reads of a file, taking every so many lines: lines
/// from the whole of a session, not only its start.
const READ_FACTOR: usize = 8;

/// The packer for an import of `sources` (`sizes` their sizes), training a dictionary
/// first when one is due and the import brings enough lines.
///
/// # Errors
/// Fails on a database error; a file that cannot be read is left out of the sample.
pub(super) fn packer(
    store: &Store,
    sources: &[Source],
    sizes: &[u64],
    tuning: &Tuning,
) -> Result<Option<Packer>> {
    let (newest, last) = {
        let reader = store.reader()?;
        (codec::sql::newest(&reader)?, codec::sql::last_row(&reader)?)
    };
    if codec::sql::due(newest.as_ref(), last, tuning) {
        let transcripts: Vec<(&Source, u64)> = sources
            .iter()
            .zip(sizes)
            .filter(|(s, _)| !matches!(s.kind, SourceKind::File { .. }))
            .map(|(s, n)| (s, *n))
            .collect();
        let incoming: u64 = transcripts.iter().map(|(_, n)| n).sum();
        if incoming >= tuning.train_min_bytes {
            let sample = sample(&transcripts, tuning.sample_bytes);
            let lines: Vec<&[u8]> = sample.iter().map(Vec::as_slice).collect();
            if let Some(dict) = codec::train(&lines, tuning.dict_bytes) {
                store.write(|tx| codec::sql::store(tx, &dict, lines.len() as i64))?;
                return Ok(Some(Packer::new(&dict, tuning.level)));
            }
        }
    }
    Ok(newest.map(|d| Packer::new(&d.bytes, tuning.level)))
}

/// About `want` bytes of distinct whole lines, from files picked at even steps through
/// the bytes to be imported: a file is picked about as often as its share of the bytes,
/// so that a tree of many small sessions and a few long ones trains on the long ones'
/// lines (most of what is stored) rather than on the same short session many times.
/// A line seen before (a resumed or forked copy, a file copied) is taken once: zstd
/// learns nothing from a repeat, and a sample of repeats trains a tiny dictionary.
fn sample(files: &[(&Source, u64)], want: usize) -> Vec<Vec<u8>> {
    let total: u64 = files.iter().map(|(_, n)| n).sum();
    let picks = (want / PER_PICK_BYTES).max(1) as u64;
    let stride = (total / picks).max(1);
    let mut out = Vec::new();
    let mut seen = rustc_hash::FxHashSet::default();
    // The middle of each step: the first file is no likelier than any other.
    let (mut taken, mut at, mut next_pick) = (0usize, 0u64, stride / 2);
    let mut buf = Vec::new();
    for (source, size) in files {
        let end = at + size;
        let mut picked = 0usize;
        while next_pick < end {
            picked += 1;
            next_pick += stride;
        }
        at = end;
        if picked == 0 {
            continue;
        }
        if taken >= want {
            break;
        }
        let share = picked * PER_PICK_BYTES;
        buf.clear();
        let Ok(file) = std::fs::File::open(&source.path) else {
            continue;
        };
        if file
            .take((share * READ_FACTOR) as u64)
            .read_to_end(&mut buf)
            .is_err()
        {
            continue;
        }
        let whole = buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        // Training looks at a line's first SAMPLE_LINE_BYTES only: count what it sees.
        let lines: Vec<&[u8]> = buf[..whole]
            .split(|&b| b == b'\n')
            .filter(|l| l.len() >= codec::MIN_LINE)
            .map(|l| &l[..l.len().min(codec::SAMPLE_LINE_BYTES)])
            .filter(|l| seen.insert(xxhash_rust::xxh3::xxh3_64(l)))
            .collect();
        let bytes: usize = lines.iter().map(|l| l.len()).sum();
        let step = bytes.div_ceil(share).max(1);
        for line in lines.into_iter().step_by(step) {
            taken += line.len();
            out.push(line.to_vec());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(dir: &std::path::Path, name: &str, lines: impl Iterator<Item = String>) -> Source {
        let path = dir.join(name);
        let text: String = lines.map(|l| l + "\n").collect();
        std::fs::write(&path, text).unwrap();
        Source {
            path,
            project: "p".into(),
            session: name.into(),
            kind: SourceKind::Main,
        }
    }

    /// A tree of many copies of one short session and a few long ones: the sample is
    /// drawn from the long ones, by their share of the bytes, each line once.
    #[test]
    fn the_sample_follows_the_bytes_and_skips_repeats() {
        let dir = tempfile::tempdir().unwrap();
        let line = |tag: &str, i: usize| {
            format!(
                "{{\"type\":\"user\",\"n\":{i},\"text\":\"{tag} {}\"}}",
                "x".repeat(200)
            )
        };
        let mut sources = Vec::new();
        for k in 0..300 {
            sources.push(source(
                dir.path(),
                &format!("short{k}"),
                (0..3).map(|i| line("short", i)),
            ));
        }
        for k in 0..3 {
            let tag = format!("long{k}");
            sources.push(source(dir.path(), &tag, (0..20_000).map(|i| line(&tag, i))));
        }
        let files: Vec<(&Source, u64)> = sources
            .iter()
            .map(|s| (s, std::fs::metadata(&s.path).unwrap().len()))
            .collect();
        let want = 1024 * 1024;
        let sample = sample(&files, want);
        let taken: usize = sample.iter().map(Vec::len).sum();
        assert!(taken >= want / 2, "took {taken} bytes");
        let mut distinct = sample.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), sample.len(), "a line was taken twice");
        let short = sample
            .iter()
            .filter(|l| l.windows(5).any(|w| w == b"short"))
            .count();
        assert!(short <= 3, "{short} lines of the short sessions");
        for k in 0..3 {
            let tag = format!("long{k}");
            let from = sample
                .iter()
                .filter(|l| l.windows(tag.len()).any(|w| w == tag.as_bytes()))
                .count();
            assert!(from > sample.len() / 5, "{from} lines from {tag}");
        }
    }
}
