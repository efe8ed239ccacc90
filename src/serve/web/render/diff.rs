//! Line diffs for the viewer's `Edit` and `MultiEdit` calls: the lines of `old_string` and
//! `new_string` compared as a unified diff, or the hunks Claude Code itself recorded
//! (`toolUseResult.structuredPatch`, with the file's line numbers).
//!
//! Pure functions over text; the HTML is written by the tool renderer.

use serde_json::Value;

/// One line of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    /// In both texts; the line numbers in the old and new text (1-based) when known.
    Same(&'a str, Option<(u64, u64)>),
    /// Only in the old text.
    Removed(&'a str, Option<u64>),
    /// Only in the new text.
    Added(&'a str, Option<u64>),
}

/// One hunk: where it starts in each text (when known) and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk<'a> {
    /// `(old_start, new_start)`, 1-based, when the file's line numbers are known.
    pub start: Option<(u64, u64)>,
    pub lines: Vec<Line<'a>>,
}

/// Cells of the comparison table above which the two texts are shown as all removed and all
/// added instead of compared line by line (a 2,000-line rewrite costs 4 million cells).
const MAX_CELLS: usize = 4_000_000;

/// The line diff of `old` and `new` (a longest common subsequence of lines, after the common
/// first and last lines are set aside). Lines keep no line ending; no line numbers.
pub(crate) fn lines<'a>(old: &'a str, new: &'a str) -> Vec<Line<'a>> {
    let a: Vec<&str> = split(old);
    let b: Vec<&str> = split(new);
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut out: Vec<Line<'a>> = a[..prefix].iter().map(|l| Line::Same(l, None)).collect();
    if am.len().saturating_mul(bm.len()) > MAX_CELLS {
        out.extend(am.iter().map(|l| Line::Removed(l, None)));
        out.extend(bm.iter().map(|l| Line::Added(l, None)));
    } else {
        out.extend(lcs_diff(am, bm));
    }
    out.extend(a[a.len() - suffix..].iter().map(|l| Line::Same(l, None)));
    out
}

/// Lines of a text without their endings; an empty text has no line.
fn split(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    text.strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// The classic dynamic-programming LCS, removals before additions within a change.
fn lcs_diff<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Line<'a>> {
    let (n, m) = (a.len(), b.len());
    // len[i][j]: LCS length of a[i..] and b[j..].
    let width = m + 1;
    let mut len = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            len[i * width + j] = if a[i] == b[j] {
                len[(i + 1) * width + j + 1] + 1
            } else {
                len[(i + 1) * width + j].max(len[i * width + j + 1])
            };
        }
    }
    let mut out = Vec::with_capacity(n + m);
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push(Line::Same(a[i], None));
            i += 1;
            j += 1;
        } else if j == m || (i < n && len[(i + 1) * width + j] >= len[i * width + j + 1]) {
            out.push(Line::Removed(a[i], None));
            i += 1;
        } else {
            out.push(Line::Added(b[j], None));
            j += 1;
        }
    }
    out
}

/// The hunks of a `structuredPatch` (`[{oldStart, newStart, lines: [" x", "-y", "+z"]}]`),
/// numbered; `None` when it is not that shape.
pub(crate) fn structured_patch(patch: &Value) -> Option<Vec<Hunk<'_>>> {
    let hunks = patch.as_array().filter(|a| !a.is_empty())?;
    hunks
        .iter()
        .map(|h| {
            let old_start = h.get("oldStart")?.as_u64()?;
            let new_start = h.get("newStart")?.as_u64()?;
            let (mut o, mut n) = (old_start, new_start);
            let mut lines = Vec::new();
            for l in h.get("lines")?.as_array()? {
                let l = l.as_str()?;
                let mut chars = l.chars();
                let rest = chars.as_str().get(1..).unwrap_or("");
                match chars.next() {
                    Some('-') => {
                        lines.push(Line::Removed(rest, Some(o)));
                        o += 1;
                    }
                    Some('+') => {
                        lines.push(Line::Added(rest, Some(n)));
                        n += 1;
                    }
                    // "\ No newline at end of file": a note, not a line of either text.
                    Some('\\') => {}
                    _ => {
                        lines.push(Line::Same(rest, Some((o, n))));
                        o += 1;
                        n += 1;
                    }
                }
            }
            Some(Hunk {
                start: Some((old_start, new_start)),
                lines,
            })
        })
        .collect()
}

/// Lines of context kept around a change when a comparison is cut into hunks.
const CONTEXT: usize = 3;

/// `lines` cut into hunks: changes with [`CONTEXT`] lines around them, long unchanged
/// stretches left out.
pub(crate) fn hunks<'a>(lines: &[Line<'a>]) -> Vec<Hunk<'a>> {
    let changed: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !matches!(l, Line::Same(..)))
        .map(|(i, _)| i)
        .collect();
    if changed.is_empty() {
        return Vec::new();
    }
    // Ranges [from, to) of lines to keep, merged when they touch.
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for &c in &changed {
        let from = c.saturating_sub(CONTEXT);
        let to = (c + CONTEXT + 1).min(lines.len());
        match ranges.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => ranges.push((from, to)),
        }
    }
    ranges
        .into_iter()
        .map(|(from, to)| Hunk {
            start: None,
            lines: lines[from..to].to_vec(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(lines: &[Line<'_>]) -> String {
        lines
            .iter()
            .map(|l| match l {
                Line::Same(t, _) => format!(" {t}"),
                Line::Removed(t, _) => format!("-{t}"),
                Line::Added(t, _) => format!("+{t}"),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_changed_line_is_removed_then_added() {
        let d = lines("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(show(&d), " a\n-b\n+B\n c");
    }

    #[test]
    fn insertions_and_deletions_keep_common_lines() {
        let d = lines("one\ntwo\nthree\nfour", "zero\none\nthree\nfour\nfive");
        assert_eq!(show(&d), "+zero\n one\n-two\n three\n four\n+five");
    }

    #[test]
    fn empty_sides_are_all_added_or_removed() {
        assert_eq!(show(&lines("", "x\ny")), "+x\n+y");
        assert_eq!(show(&lines("x\n", "")), "-x");
        assert!(lines("", "").is_empty());
    }

    #[test]
    fn crlf_endings_compare_as_lines() {
        assert_eq!(show(&lines("a\r\nb\r\n", "a\r\nc\r\n")), " a\n-b\n+c");
    }

    #[test]
    fn huge_rewrites_are_not_compared_cell_by_cell() {
        let old: String = (0..3000).map(|i| format!("o{i}\n")).collect();
        let new: String = (0..3000).map(|i| format!("n{i}\n")).collect();
        let d = lines(&old, &new);
        assert_eq!(d.len(), 6000);
        assert!(matches!(d[0], Line::Removed("o0", None)));
        assert!(matches!(d[3000], Line::Added("n0", None)));
    }

    #[test]
    fn hunks_keep_three_lines_of_context() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new = old.replace("10\n", "ten\n");
        let h = hunks(&lines(&old, &new));
        assert_eq!(h.len(), 1);
        assert_eq!(show(&h[0].lines), " 7\n 8\n 9\n-10\n+ten\n 11\n 12\n 13");
        // Two changes far apart are two hunks.
        let new: String = (1..=20)
            .map(|i| match i {
                1 => "one\n".to_owned(),
                10 => "ten\n".to_owned(),
                20 => "twenty\n".to_owned(),
                i => format!("{i}\n"),
            })
            .collect();
        let h = hunks(&lines(&old, &new));
        assert_eq!(h.len(), 3, "{h:?}");
        assert_eq!(show(&h[0].lines), "-1\n+one\n 2\n 3\n 4");
        assert_eq!(show(&h[2].lines), " 17\n 18\n 19\n-20\n+twenty");
    }

    #[test]
    fn structured_patches_are_numbered() {
        let patch = serde_json::json!([{
            "oldStart": 10, "oldLines": 3, "newStart": 12, "newLines": 3,
            "lines": [" keep", "-old", "+new", "\\ No newline at end of file", " end"]
        }]);
        let h = structured_patch(&patch).unwrap();
        assert_eq!(h[0].start, Some((10, 12)));
        assert_eq!(
            h[0].lines,
            vec![
                Line::Same("keep", Some((10, 12))),
                Line::Removed("old", Some(11)),
                Line::Added("new", Some(13)),
                Line::Same("end", Some((12, 14))),
            ]
        );
        assert!(structured_patch(&serde_json::json!([])).is_none());
        assert!(structured_patch(&serde_json::json!([{"lines": []}])).is_none());
        assert!(structured_patch(&serde_json::json!("x")).is_none());
    }
}
