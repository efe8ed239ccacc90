//! A small HTML writer that escapes by default: text goes through [`Html::text`] (escaped),
//! markup only through [`Html::raw`], which takes `&'static str` so that nothing read at run
//! time (a transcript, a query string) can reach the page unescaped.

use std::fmt::Write as _;

/// An HTML fragment under construction.
#[derive(Debug, Default)]
pub struct Html(String);

/// At most `max` characters of `text`, with `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// Bidirectional controls that would reorder the text around them (an RTL override inside a
/// file name makes `exe.txt` read as `txt.exe`): shown as visible code points instead.
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Appends `text` to `out`, escaped for both element content and quoted attribute values.
pub fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\0' => out.push('\u{FFFD}'),
            c if is_bidi_control(c) => {
                let _ = write!(out, "[U+{:04X}]", u32::from(c));
            }
            c => out.push(c),
        }
    }
}

/// `text` escaped (see [`escape_into`]).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    escape_into(&mut out, text);
    out
}

/// Percent-encodes one URL path segment or query value (everything but unreserved bytes).
pub fn url_part(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

impl Html {
    /// An empty fragment.
    pub fn new() -> Self {
        Html(String::with_capacity(4096))
    }

    /// Appends trusted markup written in the source code.
    pub fn raw(&mut self, markup: &'static str) -> &mut Self {
        self.0.push_str(markup);
        self
    }

    /// Appends untrusted text, escaped.
    pub fn text(&mut self, text: &str) -> &mut Self {
        escape_into(&mut self.0, text);
        self
    }

    /// Appends a number.
    pub fn num(&mut self, n: impl std::fmt::Display) -> &mut Self {
        let _ = write!(self.0, "{n}");
        self
    }

    /// Appends another fragment (already escaped when it was built).
    pub fn append(&mut self, other: &Html) -> &mut Self {
        self.0.push_str(&other.0);
        self
    }

    /// Appends HTML this crate produced by escaping (the Markdown renderer's output).
    pub(crate) fn trusted(&mut self, markup: &str) -> &mut Self {
        self.0.push_str(markup);
        self
    }

    /// Appends `text` as a URL path segment or query value: percent-encoded, then escaped.
    pub fn url(&mut self, text: &str) -> &mut Self {
        self.0.push_str(&url_part(text));
        self
    }

    /// The markup.
    pub fn into_string(self) -> String {
        self.0
    }

    /// The markup written so far, leaving the fragment empty (a streamed page sends it and
    /// writes on).
    pub(crate) fn take(&mut self) -> String {
        std::mem::take(&mut self.0)
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn clip_counts_characters() {
        assert_eq!(clip("héllo", 3), "hél…");
        assert_eq!(clip("hé", 3), "hé");
    }

    use super::*;

    #[test]
    fn text_is_escaped() {
        let mut h = Html::new();
        h.raw("<p title=\"")
            .text("\"><script>x</script>'&")
            .raw("\">");
        assert_eq!(
            h.into_string(),
            "<p title=\"&quot;&gt;&lt;script&gt;x&lt;/script&gt;&#39;&amp;\">"
        );
    }

    #[test]
    fn bidi_controls_are_shown() {
        assert_eq!(escape("a\u{202E}txt.exe"), "a[U+202E]txt.exe");
        assert_eq!(escape("\u{2067}x\u{2069}"), "[U+2067]x[U+2069]");
    }

    #[test]
    fn url_parts_are_encoded() {
        assert_eq!(url_part("a b/c?d&e\"<"), "a%20b%2Fc%3Fd%26e%22%3C");
        assert_eq!(url_part("-home-x_y.z~"), "-home-x_y.z~");
    }
}
