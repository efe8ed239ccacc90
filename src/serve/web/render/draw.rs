//! HTML pieces the tool renderer draws with: a file line, a link that can only be
//! `http(s)`, a diff table, an inline image, numbers with separators. Text from the
//! transcript goes through the escaping writer only.

use super::diff::{self, Line};
use super::{s, CUT};
use crate::serve::web::html::Html;
use crate::serve::web::markdown::safe_link;
use serde_json::Value;

/// The start of a file path line, `<p class="file"><code>path</code>`: the caller adds
/// to it and closes it.
pub(super) fn file_line(h: &mut Html, path: &str) {
    h.raw("<p class=\"file\"><code>").text(path).raw("</code>");
}

/// A link to an `http(s)` URL that opens without telling the target where it came from;
/// any other URL is shown as text.
pub(super) fn link(h: &mut Html, url: &str, label: &str) {
    let lower = url.to_ascii_lowercase();
    if safe_link(url) && (lower.starts_with("https://") || lower.starts_with("http://")) {
        h.raw("<a href=\"")
            .text(url)
            .raw("\" rel=\"noopener noreferrer\" target=\"_blank\">")
            .text(label)
            .raw("</a>");
    } else {
        h.text(label);
    }
}

/// A unified diff as a table: old and new line numbers (when known), the sign and the line.
pub(super) fn diff_table(h: &mut Html, hunks: &[diff::Hunk<'_>]) {
    if hunks.is_empty() {
        h.raw("<p class=\"note\">No change.</p>");
        return;
    }
    h.raw("<table class=\"diff\"><tbody>");
    let mut chars = 0;
    for (n, hunk) in hunks.iter().enumerate() {
        if n > 0 || hunk.start.is_some() {
            h.raw("<tr class=\"hunk\"><td colspan=\"4\">");
            match hunk.start {
                Some((o, new)) => {
                    h.raw("@@ line ").num(o);
                    if o != new {
                        h.raw(" → ").num(new);
                    }
                    h.raw(" @@");
                }
                None => {
                    h.raw("⋯");
                }
            }
            h.raw("</td></tr>");
        }
        for line in &hunk.lines {
            let (class, sign, old, new, text) = match line {
                Line::Same(t, at) => ("same", " ", at.map(|a| a.0), at.map(|a| a.1), *t),
                Line::Removed(t, at) => ("del", "-", *at, None, *t),
                Line::Added(t, at) => ("add", "+", None, *at, *t),
            };
            chars += text.len();
            if chars > CUT * 4 {
                h.raw("<tr class=\"hunk\"><td colspan=\"4\">… the rest of the change is in the call's input</td></tr></tbody></table>");
                return;
            }
            h.raw("<tr class=\"").raw(class).raw("\"><td class=\"ln\">");
            if let Some(o) = old {
                h.num(o);
            }
            h.raw("</td><td class=\"ln\">");
            if let Some(n) = new {
                h.num(n);
            }
            h.raw("</td><td class=\"sign\">")
                .raw(sign)
                .raw("</td><td class=\"code\">")
                .text(text)
                .raw("</td></tr>");
        }
    }
    h.raw("</tbody></table>");
}

/// `1234567` → `1,234,567`.
pub(crate) fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// An image block, shown inline when it is base64 data of a raster type.
pub(super) fn image(h: &mut Html, b: &Value) {
    let source = b.get("source").unwrap_or(&Value::Null);
    let media = s(source, "media_type").unwrap_or("");
    let data = s(source, "data").unwrap_or("");
    let raster = matches!(
        media,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    );
    let base64 = !data.is_empty()
        && data
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='));
    if s(source, "type") == Some("base64") && raster && base64 {
        h.raw("<figure class=\"image\"><img alt=\"Image from the transcript\" loading=\"lazy\" src=\"data:")
            .text(media)
            .raw(";base64,")
            .text(data)
            .raw("\"></figure>");
    } else {
        h.raw("<p class=\"note\">Image (")
            .text(if media.is_empty() { "not shown" } else { media })
            .raw(")</p>");
    }
}
