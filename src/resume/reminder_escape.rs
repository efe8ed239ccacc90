//! Escaping text that goes inside a `<system-reminder>`: hook output and file text must not
//! be able to close the reminder early. Shared by the attachment renderers.

/// Escapes a `<` that opens or closes a `system-reminder` tag (case-insensitive, spaces
/// and `/` allowed in between, a word boundary after), so hook output cannot end the
/// reminder early.
pub(crate) fn escape_reminder_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if c == '<' && opens_reminder_tag(&text[i + 1..]) {
            out.push_str("&lt;");
        } else {
            out.push(c);
        }
    }
    out
}

/// Escapes the `<` of every closing `system-reminder` tag (`</system-reminder`, spaces
/// allowed around the `/`, any case), as the CLI does to file text inside a reminder.
pub(crate) fn escape_reminder_close(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        // Only after a `<` (one byte) is `i + 1` sure to start a character: the text after
        // any other character was sliced here, a panic inside a multi-byte one (fuzzing).
        let closes = c == '<' && {
            let rest = &text[i + 1..];
            rest.trim_start().starts_with('/') && opens_reminder_tag(rest)
        };
        if closes {
            out.push_str("&lt;");
        } else {
            out.push(c);
        }
    }
    out
}

fn opens_reminder_tag(rest: &str) -> bool {
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('/').map_or(rest, str::trim_start);
    rest.get(..15)
        .is_some_and(|t| t.eq_ignore_ascii_case("system-reminder"))
        && !rest[15..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Hook text as the CLI embeds it: reminder tags escaped, and a dangling `<` or `</` at
/// the very end escaped too.
pub(crate) fn hook_text(text: &str) -> String {
    let mut t = escape_reminder_tags(text);
    let tail = t.trim_end_matches(char::is_whitespace);
    let tail = tail
        .strip_suffix('/')
        .map_or(tail, |t| t.trim_end_matches(char::is_whitespace));
    if let Some(stem) = tail.strip_suffix('<') {
        let at = stem.len();
        t.replace_range(at..at + 1, "&lt;");
    }
    t
}
