//! Loading ahead: import reads and parses the next source files on a thread of its own
//! while the writer stores the current one, so that file reads, hashing, record parsing and
//! search-text extraction run on the second core instead of between the writer's
//! transactions.
//!
//! What the loader decides is only a guess the writer checks: it reads the ledger without
//! the write lock, so the writer compares what was parsed against the stored state inside
//! its transaction and parses the file itself when they disagree.

use super::{path_key, ImportLimits, Ledger, Source, SourceKind};
use crate::codec::{Packed, Packer};
use crate::error::{Error, Result};
use crate::jsonl::{self, Envelope, LineStatus, SearchText};
use crate::model::ImportReport;
use crate::usage::record::{self, Fold, Response};
use std::time::UNIX_EPOCH;

/// A source file made ready for the writer.
pub(crate) enum Loaded {
    /// The ledger says the file has not changed since it was imported: its transcript or
    /// session-file id.
    Unchanged(Option<i64>),
    /// The file could not be read.
    Failed(Error),
    /// The file holds a line (or is a session file) too large to store: why, naming it.
    TooBig(String),
    /// The file's bytes and the lines parsed ahead.
    Read(ReadFile),
}

/// A source file read into memory, from `base` on.
pub(crate) struct ReadFile {
    pub bytes: Vec<u8>,
    /// The file offset of `bytes[0]`: 0, or for a transcript that grew, where the check of
    /// its imported bytes needs it from (see [`super::Fingerprint`]).
    pub base: usize,
    pub mtime_ns: i64,
    /// The lines from where the writer is expected to start on; empty for a session file.
    pub ahead: Ahead,
    /// A transcript too large to read ahead: `bytes` is empty, and the writer reads the
    /// file in pieces while it stores it ([`super::stream`]).
    pub pieces: Option<Pieces>,
}

impl Loaded {
    /// The file to write, or `None` when there is none: a file left out is counted in
    /// `report`, and an unchanged one is handed with its stored id to `unchanged`.
    pub(crate) fn into_write(
        self,
        report: &mut ImportReport,
        unchanged: impl FnOnce(Option<i64>),
    ) -> Option<ReadFile> {
        match self {
            Loaded::Unchanged(target) => {
                report.files_unchanged += 1;
                unchanged(target);
                None
            }
            Loaded::Failed(e) => {
                report.files_failed += 1;
                report.errors.push(e.to_string());
                None
            }
            Loaded::TooBig(why) => {
                report.files_failed += 1;
                report.files_too_big += 1;
                report.errors.push(why);
                None
            }
            Loaded::Read(file) => Some(file),
        }
    }
}

/// How a transcript read in pieces is read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pieces {
    /// Its size when the loader looked at it.
    pub size: u64,
    /// The size of a piece.
    pub piece_bytes: usize,
}

/// Lines parsed ahead, from byte `from` of what was read to its end (offsets in the
/// buffer read).
#[derive(Default)]
pub(crate) struct Ahead {
    pub from: usize,
    pub lines: Vec<ParsedLine>,
    /// The billed API responses the lines hold (usage projection, docs/usage.md), folded
    /// here with each line's index in `lines` as its row, so that the writer neither parses
    /// the lines again nor sees the streamed parts a response supersedes.
    pub usage: Fold<'static>,
}

/// One line parsed on the loading thread.
pub(crate) struct ParsedLine {
    /// Where the line starts in the file.
    pub start: usize,
    /// Its length, without the newline.
    pub len: usize,
    pub terminated: bool,
    pub status: LineStatus,
    pub envelope: Envelope<'static>,
    /// The searchable text, for a line the search triggers queue.
    pub search: Option<SearchText>,
    /// The line compressed for storage (see [`crate::codec`]), when it is stored so.
    pub packed: Option<Packed>,
}

/// A line of the file being written, with its parse.
pub(crate) type Parsed<'a> = (
    jsonl::Line<'a>,
    LineStatus,
    Envelope<'a>,
    Option<SearchText>,
    Option<Packed>,
);

/// The lines of a file from some point on, with the responses they hold folded (each
/// entry's row is the index in `lines` of the line its counts come from).
pub(crate) struct Lines<'a> {
    pub lines: Vec<Parsed<'a>>,
    pub usage: Fold<'a>,
}

impl Ahead {
    /// The lines of `bytes` from `start` on: the ones parsed ahead when they begin at
    /// `start`, else parsed now.
    pub(crate) fn lines_from(self, bytes: &[u8], start: usize) -> Lines<'_> {
        let aligned = start == bytes.len() || self.lines.iter().any(|l| l.start == start);
        if self.from <= start && aligned {
            // The lines before `start` (parsed ahead, not to be stored) come first.
            let skipped = self.lines.iter().take_while(|l| l.start < start).count();
            let lines: Vec<Parsed<'_>> = self
                .lines
                .into_iter()
                .skip(skipped)
                .map(|l| {
                    let line = jsonl::Line {
                        bytes: &bytes[l.start..l.start + l.len],
                        terminated: l.terminated,
                    };
                    (line, l.status, l.envelope, l.search, l.packed)
                })
                .collect();
            // The fold counted the skipped lines' responses: fold the kept lines again.
            let usage = if skipped == 0 {
                self.usage
            } else {
                let mut usage = Fold::default();
                for (i, (line, status, env, _, _)) in lines.iter().enumerate() {
                    usage.add(i as i64, responses_of(line.bytes, *status, env));
                }
                usage
            };
            return Lines { lines, usage };
        }
        parse_ahead(bytes, start, None).lines_from(bytes, start)
    }
}

/// The responses a line holds (none for a line that is not a record, nor when the importer
/// is built to be measured without the projection: docs/performance.md).
fn responses_of<'a>(bytes: &'a [u8], status: LineStatus, env: &Envelope<'a>) -> Vec<Response<'a>> {
    if status == LineStatus::Record && !cfg!(feature = "measure-without-usage") {
        record::responses(bytes, env)
    } else {
        Vec::new()
    }
}

/// Stats, reads and parses one source file, unless its ledger entry (`ledger_of` its path
/// key: the engine's answer) says it is unchanged.
///
/// # Errors
/// Fails only on a database error reading the ledger; a file that cannot be read is
/// [`Loaded::Failed`].
pub(crate) fn load(
    source: &Source,
    ledger_of: impl FnOnce(&str) -> Result<Option<Ledger>>,
    mut bytes: Vec<u8>,
    limits: &ImportLimits,
    packer: Option<&Packer>,
) -> Result<Loaded> {
    let meta = match std::fs::metadata(&source.path) {
        Ok(m) => m,
        Err(e) => return Ok(Loaded::Failed(Error::io(&source.path, e))),
    };
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64);
    let ledger = ledger_of(&path_key(&source.path))?;
    if let Some(l) = &ledger {
        if l.size == meta.len() as i64
            && l.mtime_ns == mtime_ns
            && !l.vanished
            && l.target.is_some()
        {
            return Ok(Loaded::Unchanged(l.target));
        }
    }
    if meta.len() > limits.max_value_bytes {
        let max = limits.max_value_bytes;
        let path = source.path.display();
        if matches!(source.kind, SourceKind::File { .. }) {
            return Ok(Loaded::TooBig(format!(
                "{path}: {} bytes, more than the {max} bytes one stored session file may \
                 hold; not imported",
                meta.len()
            )));
        }
        match longest_line(&source.path, max) {
            Ok(Some((line, len))) => {
                return Ok(Loaded::TooBig(format!(
                    "{path}: line {line} is {len} bytes or more, more than the {max} bytes one \
                     stored line may hold; file not imported"
                )));
            }
            Ok(None) => {}
            Err(e) => return Ok(Loaded::Failed(Error::io(&source.path, e))),
        }
    }
    // A transcript that grew is read from where the check of what was imported needs it
    // (and from the start of its last line, when that had no newline yet): its new lines
    // and the last TAIL_BYTES before them, however long the file is. Whether its start is
    // unchanged is for the writer to check, in its transaction; a rewritten file is then
    // read again there, whole, and parsed from its start.
    let transcript = !matches!(source.kind, SourceKind::File { .. });
    let grown = ledger
        .as_ref()
        .filter(|l| transcript && l.imported_bytes as u64 <= meta.len());
    let mut base = grown.map_or(0, |l| l.fingerprint.needs_from(l.imported_bytes));
    if transcript && meta.len().saturating_sub(base as u64) > limits.stream_above {
        return Ok(Loaded::Read(ReadFile {
            bytes,
            base: 0,
            mtime_ns,
            ahead: Ahead::default(),
            pieces: Some(Pieces {
                size: meta.len(),
                piece_bytes: limits.piece_bytes,
            }),
        }));
    }
    if let Err(e) = read_from(&source.path, base, meta.len(), &mut bytes) {
        return Ok(Loaded::Failed(Error::io(&source.path, e)));
    }
    let mut from = 0;
    if let Some(l) = grown {
        let end = l.imported_bytes.saturating_sub(base).min(bytes.len());
        match bytes[..end].iter().rposition(|&b| b == b'\n') {
            Some(i) => from = i + 1,
            None if base > 0 => {
                // The last line imported starts before what was read: read it all.
                base = 0;
                if let Err(e) = read_from(&source.path, 0, meta.len(), &mut bytes) {
                    return Ok(Loaded::Failed(Error::io(&source.path, e)));
                }
                from = line_start(&bytes, l.imported_bytes.min(bytes.len()));
            }
            None => {}
        }
    }
    let ahead = if transcript {
        parse_ahead(&bytes, from, packer)
    } else {
        Ahead {
            from: bytes.len(),
            lines: Vec::new(),
            usage: Fold::default(),
        }
    };
    Ok(Loaded::Read(ReadFile {
        bytes,
        base,
        mtime_ns,
        ahead,
        pieces: None,
    }))
}

/// Reads the file at `path` from byte `base` to its end into `bytes` (`size` is what
/// `stat` said, to reserve room).
pub(crate) fn read_from(
    path: &std::path::Path,
    base: usize,
    size: u64,
    bytes: &mut Vec<u8>,
) -> std::io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom};
    bytes.clear();
    let mut file = std::fs::File::open(path)?;
    if base > 0 {
        file.seek(SeekFrom::Start(base as u64))?;
    }
    bytes.reserve(size.saturating_sub(base as u64) as usize);
    file.read_to_end(bytes)
}

/// The first line of the file at `path` longer than `max` bytes, as its 1-based number and
/// the bytes of it seen (at least `max + 1`), read in blocks: the file is not held in memory.
fn longest_line(path: &std::path::Path, max: u64) -> std::io::Result<Option<(u64, u64)>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut block = vec![0u8; 1 << 20];
    let (mut line, mut len) = (1u64, 0u64);
    loop {
        let n = file.read(&mut block)?;
        if n == 0 {
            return Ok(None);
        }
        for chunk in block[..n].split_inclusive(|&b| b == b'\n') {
            let ends = chunk.last() == Some(&b'\n');
            len += chunk.len() as u64 - u64::from(ends);
            if len > max {
                return Ok(Some((line, len)));
            }
            if ends {
                line += 1;
                len = 0;
            }
        }
    }
}

/// Longest run of blank lines stored as one row (see [`parse_ahead`]).
const MAX_BLANK_RUN: usize = 1024 * 1024;

/// Where the line that holds byte `end - 1` starts (`end` itself when a newline ends there).
fn line_start(bytes: &[u8], end: usize) -> usize {
    bytes[..end]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1)
}

/// Parses the lines of `bytes` from `from` on. A run of blank lines (each with its newline)
/// becomes one row of up to [`MAX_BLANK_RUN`] bytes whose stored bytes hold the newlines
/// between them: export writes the same bytes back, and a file of millions of empty lines
/// costs a few rows instead of millions (it took a minute and 3.6 GB before). With a
/// `packer`, each line is compressed here too, off the writer's thread.
pub(crate) fn parse_ahead(bytes: &[u8], from: usize, packer: Option<&Packer>) -> Ahead {
    // Made on the first line long enough to compress (a context costs an allocation).
    let mut compressor = None;
    let mut start = from;
    let mut lines: Vec<ParsedLine> = Vec::new();
    let mut usage = Fold::default();
    for line in jsonl::split_lines(&bytes[from..]) {
        let (status, env) = Envelope::parse(line.bytes);
        let len = line.bytes.len();
        let at = start;
        start += len + usize::from(line.terminated);
        if status == LineStatus::Blank && line.terminated {
            if let Some(run) = lines.last_mut().filter(|l| {
                l.status == LineStatus::Blank && l.terminated && l.len + 1 + len <= MAX_BLANK_RUN
            }) {
                run.len += 1 + len;
                // A run of blank lines is stored as it is.
                run.packed = None;
                continue;
            }
        }
        let search = if crate::search::is_indexed(status, &env) {
            jsonl::search_text(line.bytes)
        } else {
            None
        };
        usage.add(lines.len() as i64, responses_of(line.bytes, status, &env));
        lines.push(ParsedLine {
            start: at,
            len,
            terminated: line.terminated,
            status,
            envelope: env.into_owned(),
            search,
            packed: packer
                .filter(|_| line.bytes.len() >= crate::codec::MIN_LINE)
                .and_then(|p| {
                    compressor
                        .get_or_insert_with(|| p.compressor())
                        .pack(line.bytes)
                }),
        });
    }
    Ahead {
        from,
        lines,
        usage: usage.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parsed_ahead_are_used_only_from_a_line_boundary() {
        let bytes = b"{\"type\":\"user\",\"uuid\":\"a\"}\n{\"type\":\"x\"}\nnot json";
        let second = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
        // Parsed from the second line on, asked from there: the parse is reused.
        let got = parse_ahead(bytes, second, None)
            .lines_from(bytes, second)
            .lines;
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0.bytes, b"{\"type\":\"x\"}");
        assert_eq!(got[1].1, LineStatus::Malformed);
        assert!(!got[1].0.terminated);
        // Asked from the start, which was not parsed ahead: parsed now, all three lines.
        let got = parse_ahead(bytes, second, None).lines_from(bytes, 0).lines;
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].2.uuid.as_deref(), Some("a"));
        // Asked from inside a line parsed ahead: parsed now from there.
        let got = parse_ahead(bytes, 0, None).lines_from(bytes, 3).lines;
        assert_eq!(got[0].0.bytes, &bytes[3..second - 1]);
        // Nothing new.
        assert!(parse_ahead(bytes, 0, None)
            .lines_from(bytes, bytes.len())
            .lines
            .is_empty());
    }

    #[test]
    fn a_grown_file_is_parsed_from_its_last_line_when_that_had_no_newline() {
        assert_eq!(line_start(b"ab\ncd", 5), 3);
        assert_eq!(line_start(b"ab\ncd\n", 6), 6);
        assert_eq!(line_start(b"abcd", 4), 0);
        assert_eq!(line_start(b"", 0), 0);
    }
}
