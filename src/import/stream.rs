//! Reading a large transcript in pieces (issue 28, item 17): a file whose new bytes are more
//! than [`super::ImportLimits::stream_above`] is not read into memory whole; the writer
//! reads it in pieces of whole lines, parses and stores each piece, and lets it go before
//! reading the next, all inside the file's one transaction. Memory then follows the piece
//! (and the longest line), not the file.
//!
//! The rows stored are those of the whole-file path, line for line: a piece never ends
//! inside a line, nor inside a run of blank lines that [`super::load::parse_ahead`] would
//! store as one row (the run's last row is carried into the next piece).

use super::load::{parse_ahead, Ahead};
use super::{FileView, Fingerprint, TAIL_BYTES};
use crate::error::{Error, Result};
use crate::jsonl::LineStatus;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Where a file read in pieces ended: its length, and its last [`TAIL_BYTES`] (what the
/// ledger's fingerprint is taken of).
pub(crate) struct Streamed {
    pub end: usize,
    pub tail: Vec<u8>,
}

impl Streamed {
    /// The end of the file, as the ledger's fingerprint needs it.
    pub fn view(&self) -> FileView<'_> {
        FileView {
            base: self.end - self.tail.len(),
            bytes: &self.tail,
        }
    }
}

/// Reads the file at `path` from byte `from` to its end, in pieces of about `piece_bytes`
/// (more when one line is longer), each cut after a whole line, and calls `each` with
/// every piece and its lines (offsets in the piece). `buf` is the piece's buffer, kept for
/// reuse. Returns where the file ended and its last [`TAIL_BYTES`] (those before `from`
/// included).
///
/// # Errors
/// Fails when the file cannot be read, or with whatever `each` returns.
pub(crate) fn each_piece(
    path: &Path,
    from: usize,
    piece_bytes: usize,
    buf: &mut Vec<u8>,
    mut each: impl FnMut(&[u8], Ahead) -> Result<()>,
) -> Result<Streamed> {
    let io = |e| Error::io(path, e);
    let mut file = std::fs::File::open(path).map_err(io)?;
    // The bytes before `from` that the fingerprint of the whole will cover.
    let mut tail = Vec::new();
    let tail_from = super::tail_start(from);
    file.seek(SeekFrom::Start(tail_from as u64)).map_err(io)?;
    (&mut file)
        .take((from - tail_from) as u64)
        .read_to_end(&mut tail)
        .map_err(io)?;
    if tail.len() < from - tail_from {
        return Err(Error::Invalid(format!(
            "{}: the file became shorter while it was read",
            path.display()
        )));
    }
    let piece_bytes = piece_bytes.max(1);
    let mut end = from;
    let mut want = piece_bytes;
    let mut eof = false;
    buf.clear();
    loop {
        while buf.len() < want && !eof {
            let more = (want - buf.len()) as u64;
            eof = (&mut file).take(more).read_to_end(buf).map_err(io)? == 0;
        }
        if buf.is_empty() {
            break;
        }
        let Some((cut, ahead)) = whole_lines(buf, eof) else {
            // Not one whole line (or blank run) yet: read further, twice as much each time,
            // so that a very long line is looked through a few times only.
            want = buf.len() * 2 + piece_bytes;
            continue;
        };
        each(&buf[..cut], ahead)?;
        keep_tail(&mut tail, &buf[..cut]);
        end += cut;
        buf.drain(..cut);
        want = piece_bytes;
    }
    Ok(Streamed { end, tail })
}

/// The part of `buf` to store now, and its lines: up to its last newline, less a run of
/// blank lines it ends with (the next piece may continue that run); everything at the end
/// of the file. `None` when no such part is there yet.
fn whole_lines(buf: &[u8], eof: bool) -> Option<(usize, Ahead)> {
    let cut = if eof {
        buf.len()
    } else {
        buf.iter().rposition(|&b| b == b'\n')? + 1
    };
    let mut ahead = parse_ahead(&buf[..cut], 0, None);
    if !eof {
        let last = ahead.lines.last()?;
        if last.status == LineStatus::Blank && last.terminated {
            let run = ahead.lines.pop()?;
            if ahead.lines.is_empty() {
                return None;
            }
            return Some((run.start, ahead));
        }
    }
    Some((cut, ahead))
}

/// Keeps the last [`TAIL_BYTES`] of what was read in `tail`.
fn keep_tail(tail: &mut Vec<u8>, piece: &[u8]) {
    if piece.len() >= TAIL_BYTES {
        tail.clear();
        tail.extend_from_slice(&piece[piece.len() - TAIL_BYTES..]);
        return;
    }
    tail.extend_from_slice(piece);
    if tail.len() > TAIL_BYTES {
        tail.drain(..tail.len() - TAIL_BYTES);
    }
}

/// Whether the file at `path` still starts with the `len` bytes `fingerprint` was taken of,
/// reading only what the check needs: the last [`TAIL_BYTES`] of them, or (a fingerprint of
/// the whole prefix, from before migration V11) all of them, in blocks.
///
/// # Errors
/// Fails when the file cannot be read.
pub(crate) fn prefix_matches(path: &Path, fingerprint: Fingerprint, len: usize) -> Result<bool> {
    let io = |e| Error::io(path, e);
    let mut file = std::fs::File::open(path).map_err(io)?;
    let from = fingerprint.needs_from(len);
    let mut bytes = Vec::new();
    match fingerprint {
        Fingerprint::Tail(_) => {
            file.seek(SeekFrom::Start(from as u64)).map_err(io)?;
            (&mut file)
                .take((len - from) as u64)
                .read_to_end(&mut bytes)
                .map_err(io)?;
            let view = FileView {
                base: from,
                bytes: &bytes,
            };
            Ok(fingerprint.matches(&view, len) == Some(true))
        }
        Fingerprint::Whole(hash) => {
            let mut hasher = super::PrefixHash::new(len);
            let mut block = vec![0u8; 1 << 20];
            let mut seen = 0;
            while seen < len {
                let n = (&mut file)
                    .take((len - seen).min(block.len()) as u64)
                    .read(&mut block)
                    .map_err(io)?;
                if n == 0 {
                    return Ok(false);
                }
                hasher.update(&block[..n]);
                seen += n;
            }
            Ok(hasher.finish() == hash)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::prefix_hash;
    use super::*;

    /// Every piece size gives the lines of the whole-file parse, in order, and the file's
    /// last bytes.
    #[test]
    fn pieces_hold_the_lines_of_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut bytes = Vec::new();
        for i in 0..40 {
            bytes.extend_from_slice(format!("{{\"type\":\"user\",\"n\":{i}}}\n").as_bytes());
            if i % 7 == 0 {
                bytes.extend_from_slice(b"\n  \n\n");
            }
        }
        bytes.extend_from_slice(b"{\"no newline\"");
        std::fs::write(&path, &bytes).unwrap();
        let whole: Vec<(usize, usize, bool)> = parse_ahead(&bytes, 0, None)
            .lines
            .iter()
            .map(|l| (l.start, l.len, l.terminated))
            .collect();
        for piece in [1, 2, 5, 17, 64, 1000, 1 << 20] {
            let mut got = Vec::new();
            let mut at = 0;
            let mut buf = Vec::new();
            let end = each_piece(&path, 0, piece, &mut buf, |part, ahead| {
                got.extend(
                    ahead
                        .lines
                        .iter()
                        .map(|l| (at + l.start, l.len, l.terminated)),
                );
                at += part.len();
                Ok(())
            })
            .unwrap();
            assert_eq!(got, whole, "pieces of {piece} bytes");
            assert_eq!(end.end, bytes.len());
            assert_eq!(end.view().range(0, bytes.len()), Some(&bytes[..]));
        }
        // From a line boundary on: the bytes before it are in the tail too.
        let from = whole[3].0;
        let mut buf = Vec::new();
        let end = each_piece(&path, from, 5, &mut buf, |_, _| Ok(())).unwrap();
        assert_eq!(end.view().range(0, bytes.len()), Some(&bytes[..]));
    }

    #[test]
    fn a_whole_prefix_is_checked_in_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        for len in [0, 31, 32, 1 << 20, (1 << 20) + 33, 2_999_999] {
            let whole = Fingerprint::Whole(prefix_hash(&bytes[..len]));
            assert!(prefix_matches(&path, whole, len).unwrap(), "{len}");
            let tail = Fingerprint::of(&FileView::whole(&bytes), len).unwrap();
            assert!(prefix_matches(&path, tail, len).unwrap(), "{len}");
        }
        let other = Fingerprint::Whole(prefix_hash(b"something else"));
        assert!(!prefix_matches(&path, other, 14).unwrap());
        let longer = Fingerprint::Whole(prefix_hash(&bytes));
        assert!(!prefix_matches(&path, longer, bytes.len() + 1).unwrap());
    }
}
