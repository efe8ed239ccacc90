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

/// Bytes of lines a sample takes from one file, at least (more when there are few files).
const PER_FILE_BYTES: usize = 64 * 1024;

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

/// About `want` bytes of whole lines from files spread over the list: from each, lines
/// spread over up to [`READ_FACTOR`] times its share read from its start.
fn sample(files: &[(&Source, u64)], want: usize) -> Vec<Vec<u8>> {
    let per_file = (want / files.len().max(1)).max(PER_FILE_BYTES);
    let every = (files.len() * per_file).div_ceil(want.max(1)).max(1);
    let mut out = Vec::new();
    let mut taken = 0;
    let mut buf = Vec::new();
    for (source, _) in files.iter().step_by(every) {
        if taken >= want {
            break;
        }
        buf.clear();
        let Ok(file) = std::fs::File::open(&source.path) else {
            continue;
        };
        let limit = (per_file * READ_FACTOR) as u64;
        if file.take(limit).read_to_end(&mut buf).is_err() {
            continue;
        }
        let whole = buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        // Training looks at a line's first SAMPLE_LINE_BYTES only: count what it sees.
        let lines: Vec<&[u8]> = buf[..whole]
            .split(|&b| b == b'\n')
            .filter(|l| l.len() >= codec::MIN_LINE)
            .map(|l| &l[..l.len().min(codec::SAMPLE_LINE_BYTES)])
            .collect();
        let seen: usize = lines.iter().map(|l| l.len()).sum();
        let step = seen.div_ceil(per_file).max(1);
        for line in lines.into_iter().step_by(step) {
            taken += line.len();
            out.push(line.to_vec());
        }
    }
    out
}
