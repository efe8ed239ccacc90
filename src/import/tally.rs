//! The per-line accounting of an import, shared by both stores' importers: what a report
//! says of a file's lines (malformed lines with their line numbers, unknown record types
//! and fields, whether the file looks like something other than a transcript) and which
//! record first names the project's working directory. The stores differ only in how they
//! write a line, so the counting is one piece of code.

use crate::error::Result;
use crate::jsonl::{Envelope, Line, LineStatus};
use crate::model::{ImportReport, LineRef, SuspiciousFile, MAX_REPORTED_LINES};
use std::path::Path;

/// The tally of the lines one import stores from one file, in file order, from where the
/// import starts reading it.
pub(crate) struct LineTally<'p> {
    path: &'p Path,
    nonblank: u64,
    malformed: u64,
    /// Lines of the file before the first line tallied, counted only once a malformed line
    /// needs its number (a grown file is read from where its last import stopped).
    lines_before_start: Option<u64>,
    /// Lines tallied so far (a stored blank run holds several lines).
    lines_since_start: u64,
    cwd_seen: bool,
}

impl<'p> LineTally<'p> {
    /// A tally of the lines of the file at `path`.
    pub fn new(path: &'p Path) -> LineTally<'p> {
        LineTally {
            path,
            nonblank: 0,
            malformed: 0,
            lines_before_start: None,
            lines_since_start: 0,
            cwd_seen: false,
        }
    }

    /// Counts one stored line into `report`. `lines_before_start` gives the number of lines
    /// of the file before the first tallied one; it is called at most once, for the number
    /// of the first malformed line reported. Returns the working directory the line names
    /// when it is the first record of the file to name one: the project's `cwd` when the
    /// project has none yet.
    ///
    /// # Errors
    /// Whatever `lines_before_start` returns.
    pub fn line<'e>(
        &mut self,
        report: &mut ImportReport,
        line: &Line<'_>,
        status: LineStatus,
        env: &'e Envelope<'_>,
        lines_before_start: impl FnOnce() -> Result<u64>,
    ) -> Result<Option<&'e str>> {
        report.new_rows += 1;
        let mut cwd = None;
        match status {
            LineStatus::Malformed => {
                self.nonblank += 1;
                self.malformed += 1;
                report.malformed_lines += 1;
                if report.malformed.len() < MAX_REPORTED_LINES {
                    let before = match self.lines_before_start {
                        Some(n) => n,
                        None => *self.lines_before_start.insert(lines_before_start()?),
                    };
                    report.malformed.push(LineRef {
                        path: self.path.to_path_buf(),
                        line: before + self.lines_since_start + 1,
                    });
                }
            }
            LineStatus::Record => {
                self.nonblank += 1;
                if !env.has_known_type() {
                    report.unknown_types += 1;
                }
                report.unknown_fields += u64::from(env.unknown_fields);
                if !self.cwd_seen {
                    cwd = env.cwd.as_deref();
                    self.cwd_seen = cwd.is_some();
                }
            }
            LineStatus::Blank => {}
        }
        self.lines_since_start += 1;
        if status == LineStatus::Blank {
            self.lines_since_start += super::newlines(line.bytes);
        }
        Ok(cwd)
    }

    /// Ends the file: names it in `report` when most of its lines were malformed.
    pub fn finish(self, report: &mut ImportReport) {
        if SuspiciousFile::is_suspicious(self.nonblank, self.malformed) {
            report.suspicious_files.push(SuspiciousFile {
                path: self.path.to_path_buf(),
                lines: self.nonblank,
                malformed: self.malformed,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LineTally;
    use crate::jsonl::{Envelope, Line};
    use crate::model::ImportReport;
    use std::path::Path;

    fn tally(lines: &[&[u8]], before: u64) -> (ImportReport, Vec<Option<String>>) {
        let mut report = ImportReport::default();
        let mut t = LineTally::new(Path::new("f.jsonl"));
        let mut cwds = Vec::new();
        for bytes in lines {
            let (status, env) = Envelope::parse(bytes);
            let line = Line {
                bytes,
                terminated: true,
            };
            let cwd = t
                .line(&mut report, &line, status, &env, || Ok(before))
                .unwrap();
            cwds.push(cwd.map(str::to_owned));
        }
        t.finish(&mut report);
        (report, cwds)
    }

    #[test]
    fn counts_malformed_lines_with_their_numbers_after_the_start() {
        let record: &[u8] = b"{\"type\":\"user\"}";
        let (report, _) = tally(&[record, b"not json", b"\n\n", b"{x", record, record], 10);
        assert_eq!(report.new_rows, 6);
        assert_eq!(report.malformed_lines, 2);
        let numbers: Vec<u64> = report.malformed.iter().map(|m| m.line).collect();
        // Line 11 is the record, 12 the malformed one, 13-15 the blank run, 16 the last.
        assert_eq!(numbers, [12, 16]);
        assert!(report.suspicious_files.is_empty(), "2 of 5 is not most");
    }

    #[test]
    fn names_a_file_most_of_whose_lines_are_malformed() {
        let (report, _) = tally(&[b"{\"type\":\"user\"}", b"a", b"b"], 0);
        assert_eq!(report.suspicious_files.len(), 1);
        assert_eq!(report.suspicious_files[0].lines, 3);
        assert_eq!(report.suspicious_files[0].malformed, 2);
    }

    #[test]
    fn gives_the_first_cwd_once_and_counts_unknown_types() {
        let (report, cwds) = tally(
            &[
                b"{\"type\":\"user\"}",
                b"{\"type\":\"user\",\"cwd\":\"/a\"}",
                b"{\"type\":\"brand-new\",\"cwd\":\"/b\"}",
            ],
            0,
        );
        assert_eq!(cwds, [None, Some("/a".to_owned()), None]);
        assert_eq!(report.unknown_types, 1);
    }
}
