//! Plain data shared by the library and its callers: identifiers, reports, progress.

use serde::Serialize;
use std::fmt;
use std::path::PathBuf;

/// A stored session: its database key and its Claude Code identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionRef {
    /// The database's key for the session.
    #[serde(skip)]
    pub key: i64,
    /// The project folder name (Claude Code's sanitized cwd).
    pub project: String,
    /// The session id (the transcript's file stem).
    pub session_id: String,
}

/// A place in a source file, for messages a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineRef {
    /// The source file.
    pub path: PathBuf,
    /// The 1-based line number.
    pub line: u64,
}

impl std::fmt::Display for LineRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.line)
    }
}

/// What an import did.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct ImportReport {
    /// Source files found (transcripts and session-folder files).
    pub files: u64,
    /// Files that had something new and were written.
    pub files_imported: u64,
    /// Files skipped because they had not changed since the last import.
    pub files_unchanged: u64,
    /// Files whose earlier import no longer matched and were re-imported whole; the old
    /// rows are kept as a superseded version.
    pub files_rewritten: u64,
    /// Files that could not be read (each also listed in `errors`).
    pub files_failed: u64,
    /// Sessions the files belong to.
    pub sessions: u64,
    /// Transcript lines now stored for the files seen.
    pub rows: u64,
    /// Lines added by this import.
    pub new_rows: u64,
    /// Lines that are not JSON objects (kept verbatim, skipped by resume).
    pub malformed_lines: u64,
    /// Where the first malformed lines are.
    pub malformed: Vec<LineRef>,
    /// Files most of whose new lines are not JSON (stored all the same): probably not
    /// transcripts.
    pub suspicious_files: Vec<SuspiciousFile>,
    /// Records whose `type` this version does not know (kept verbatim).
    pub unknown_types: u64,
    /// Top-level fields this version does not know (kept verbatim).
    pub unknown_fields: u64,
    /// Ledger entries whose source file has disappeared; their rows are kept.
    pub vanished_files: u64,
    /// Bytes read from source files.
    pub bytes_read: u64,
    /// Wall time of the import, in seconds.
    pub seconds: f64,
    /// Throughput over the bytes read, in MB/s.
    pub mb_per_s: f64,
    /// Files that failed, with the reason.
    pub errors: Vec<String>,
    /// Files refused because their project folder, session id or subpath is not a name
    /// sessiondb stores (see [`crate::names`]); each also counts in `files_failed`.
    pub bad_names: u64,
    /// Files refused because a line (or a session-folder file) is larger than one stored
    /// value may be (see [`crate::import::ImportLimits`]); each also counts in `files_failed`.
    pub files_too_big: u64,
    /// Symbolic links found inside the trees scanned and not followed (only a path named
    /// on the command line is followed when it is a link).
    pub symlinks_skipped: u64,
    /// Lines written by sessiondb (append, tag, rename, a SessionStore append) into
    /// transcripts whose source file was found rewritten, carried over to the new version.
    pub local_rows_kept: u64,
    /// Transcripts named on the command line whose file name is not a session id, stored
    /// under the id their records carry.
    pub named_by_records: Vec<NamedByRecords>,
}

impl ImportReport {
    /// Adds the counts and lists of `part` (a report of some of the same import's files,
    /// taken after these) to this one; the totals of the whole run (`files`, `sessions`,
    /// `seconds`, `mb_per_s`) are left alone. Malformed lines stay capped at
    /// [`MAX_REPORTED_LINES`], the first ones in file order.
    pub fn add(&mut self, part: ImportReport) {
        self.files_imported += part.files_imported;
        self.files_unchanged += part.files_unchanged;
        self.files_rewritten += part.files_rewritten;
        self.files_failed += part.files_failed;
        self.rows += part.rows;
        self.new_rows += part.new_rows;
        self.malformed_lines += part.malformed_lines;
        let room = MAX_REPORTED_LINES.saturating_sub(self.malformed.len());
        self.malformed.extend(part.malformed.into_iter().take(room));
        self.suspicious_files.extend(part.suspicious_files);
        self.named_by_records.extend(part.named_by_records);
        self.unknown_types += part.unknown_types;
        self.unknown_fields += part.unknown_fields;
        self.vanished_files += part.vanished_files;
        self.bytes_read += part.bytes_read;
        self.errors.extend(part.errors);
        self.bad_names += part.bad_names;
        self.files_too_big += part.files_too_big;
        self.symlinks_skipped += part.symlinks_skipped;
        self.local_rows_kept += part.local_rows_kept;
    }
}

/// A transcript named on the command line whose file name is not a session id (`copy.jsonl`),
/// stored under the session id its records carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NamedByRecords {
    /// The source file.
    pub path: PathBuf,
    /// The session id it is stored under.
    pub session_id: String,
}

/// A file imported whole although most of its lines are not JSON objects: nothing is lost,
/// but it is probably not a transcript (a README renamed `.jsonl`, a log).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SuspiciousFile {
    /// The source file.
    pub path: PathBuf,
    /// Its non-blank lines read by this import.
    pub lines: u64,
    /// How many of them are not JSON objects.
    pub malformed: u64,
}

impl SuspiciousFile {
    /// Whether `malformed` of `lines` non-blank lines make a file suspicious: more than half.
    pub fn is_suspicious(lines: u64, malformed: u64) -> bool {
        malformed > 0 && malformed * 2 > lines
    }
}

/// How many malformed-line locations a report keeps (the count is always exact).
pub const MAX_REPORTED_LINES: usize = 100;

/// Progress of long work, reported by the library; only the binary draws it.
pub trait Progress: Send + Sync {
    /// The work ahead, in bytes.
    fn start(&self, total_bytes: u64);
    /// `bytes` more are done; `item` names what is being worked on.
    fn advance(&self, bytes: u64, item: &str);
    /// The work is over.
    fn finish(&self);
}

/// A [`Progress`] that reports nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: u64) {}
    fn advance(&self, _: u64, _: &str) {}
    fn finish(&self) {}
}

/// A stored line whose bytes no longer match its checksum, named the way a user finds it:
/// the session, the file it exports to, and the line number in that file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DamagedLine {
    /// The project folder.
    pub project: String,
    /// The session id.
    pub session_id: String,
    /// The file as `export --all` writes it, relative to the projects folder.
    pub file: String,
    /// The line's number in that file, from 1.
    pub line: u64,
    /// Whether the file is a superseded version (its source was rewritten), which export
    /// and resume no longer read.
    pub superseded: bool,
    /// The row, for `check --repair`.
    #[serde(skip)]
    pub row_id: i64,
}

impl fmt::Display for DamagedLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {} of {} (session {}{}) is damaged: its stored bytes no longer match their \
             checksum",
            self.line,
            self.file,
            self.session_id,
            if self.superseded {
                ", a superseded version"
            } else {
                ""
            }
        )
    }
}
