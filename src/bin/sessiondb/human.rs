//! Words and numbers for people: plurals, sizes, rates, ages, short ids, and transcript text
//! made safe to show on one line. Pure functions, so each rule has its unit test.

use jiff::tz::TimeZone;
use unicode_width::UnicodeWidthChar;

/// `1 file`, `2 files`, `0 files`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A size in decimal units: `812 B`, `4.2 KB`, `42 MB`, `1.1 GB` (two significant digits
/// below 10, whole numbers above).
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 999.5 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    if value < 9.95 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

/// A throughput in MB/s: whole numbers from 10 up, one decimal below.
pub fn rate(mb_per_s: f64) -> String {
    if mb_per_s >= 9.95 {
        format!("{mb_per_s:.0} MB/s")
    } else {
        format!("{mb_per_s:.1} MB/s")
    }
}

/// A duration in seconds, as people read it: `0.42 s`, `8.8 s`, `26 s`.
pub fn seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{s:.2} s")
    } else if s < 9.95 {
        format!("{s:.1} s")
    } else {
        format!("{s:.0} s")
    }
}

/// How long ago `then_ms` was, seen at `now_ms`: `just now`, `5m ago`, `3h ago`, `2d ago`;
/// a week or more ago (or in the future), the local date in `tz` (`2026-11-02`).
pub fn age(now_ms: i64, then_ms: i64, tz: &TimeZone) -> String {
    let ago = now_ms - then_ms;
    const MIN: i64 = 60_000;
    match ago {
        0..MIN => "just now".to_owned(),
        MIN..3_600_000 => format!("{}m ago", ago / MIN),
        3_600_000..86_400_000 => format!("{}h ago", ago / 3_600_000),
        86_400_000..604_800_000 => format!("{}d ago", ago / 86_400_000),
        _ => local_date(then_ms, tz),
    }
}

/// The local calendar date of an instant, `YYYY-MM-DD`.
pub fn local_date(ms: i64, tz: &TimeZone) -> String {
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(t) => t.to_zoned(tz.clone()).strftime("%Y-%m-%d").to_string(),
        Err(_) => "-".to_owned(),
    }
}

/// A recorded ISO 8601 timestamp as local date and time to the second
/// (`2026-11-02 14:03:22`); the text as it is when it is not a time.
pub fn local_time(iso: &str, tz: &TimeZone) -> String {
    match sessiondb::time::parse_iso8601_ms(iso).map(jiff::Timestamp::from_millisecond) {
        Some(Ok(t)) => t
            .to_zoned(tz.clone())
            .strftime("%Y-%m-%d %H:%M:%S")
            .to_string(),
        _ => one_line(iso),
    }
}

/// The time zone for dates shown: `TZ` when set, else the system's; UTC if neither can be
/// read.
pub fn time_zone() -> TimeZone {
    zone_from_files().unwrap_or_else(|| TimeZone::try_system().unwrap_or(TimeZone::UTC))
}

/// The zone's rules read straight from its one file (or `TZ`'s POSIX rule). jiff's own
/// lookup also names the zone, which walks the whole zoneinfo tree: 42 directory reads,
/// a visible share of a `sessions --limit 1` that should take a few milliseconds.
fn zone_from_files() -> Option<TimeZone> {
    const ZONEINFO: &str = "/usr/share/zoneinfo";
    let Some(tz) = std::env::var_os("TZ") else {
        let bytes = std::fs::read("/etc/localtime").ok()?;
        return TimeZone::tzif("Local", &bytes).ok();
    };
    let tz = tz.to_str()?;
    let name = tz.strip_prefix(':').unwrap_or(tz);
    if name.is_empty() {
        return Some(TimeZone::UTC);
    }
    let file = if name.starts_with('/') {
        std::path::PathBuf::from(name)
    } else if !name.split('/').any(|part| part == "..") {
        std::path::Path::new(ZONEINFO).join(name)
    } else {
        return None;
    };
    match std::fs::read(&file) {
        Ok(bytes) => TimeZone::tzif(name, &bytes).ok(),
        Err(_) => TimeZone::posix(name).ok(),
    }
}

/// The length of the shortest prefix of `id` that no other id shares, at least `min` (git's
/// rule): one more than the longest common prefix with its sorted neighbours.
pub fn unique_prefix_len(id: &str, before: Option<&str>, after: Option<&str>, min: usize) -> usize {
    let common = |other: Option<&str>| {
        other.map_or(0, |o| {
            id.bytes()
                .zip(o.bytes())
                .take_while(|(a, b)| a == b)
                .count()
        })
    };
    let want = common(before).max(common(after)) + 1;
    let len = want.max(min).min(id.len());
    // Never cut inside a UTF-8 character (ids are ASCII, but the store does not insist).
    (len..=id.len())
        .find(|&n| id.is_char_boundary(n))
        .unwrap_or(id.len())
}

/// Transcript text made safe for one line of a terminal: line breaks and tabs become
/// spaces, other control characters (escape sequences included) become `�`, bidirectional
/// controls `[U+202E]`, and runs of spaces collapse.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.trim().chars() {
        let c = match c {
            '\n' | '\r' | '\t' => ' ',
            c if c.is_control() => '\u{FFFD}',
            c if is_bidi_control(c) => {
                push_code_point(&mut out, c);
                space = false;
                continue;
            }
            c => c,
        };
        if c == ' ' {
            if space {
                continue;
            }
            space = true;
        } else {
            space = false;
        }
        out.push(c);
    }
    out
}

/// Transcript text made safe for one line, as it is otherwise (no trimming, no collapsing):
/// line breaks and tabs become spaces, other control characters `�`, bidirectional controls
/// `[U+202E]`.
pub fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => out.push('\u{FFFD}'),
            c if is_bidi_control(c) => push_code_point(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// Bidirectional controls, which would reorder the text around them on a terminal (an RTL
/// override makes `exe.txt` read as `txt.exe`): the set the web pages show as code points
/// (`serve::web::html`), shown the same way here (issue 28, item 7).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Appends `c` as visible text: `[U+202E]`.
fn push_code_point(out: &mut String, c: char) {
    out.push_str(&format!("[U+{:04X}]", u32::from(c)));
}

/// Transcript text made safe for a terminal over several lines: line breaks and tabs kept,
/// other control characters (escape sequences included) shown as `�`, bidirectional controls
/// as `[U+202E]`.
pub fn safe_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c if is_bidi_control(c) => push_code_point(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// Columns `text` takes on a terminal.
pub fn width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `text` cut to at most `max` columns, ending in `…` when cut. Never wraps.
pub fn fit(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > max - 1 {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// `text` padded with spaces to `cols` columns (cut first when longer).
pub fn pad(text: &str, cols: usize) -> String {
    let text = fit(text, cols);
    let w = width(&text);
    format!("{text}{}", " ".repeat(cols.saturating_sub(w)))
}

/// How many whitespace-separated words `text` has.
pub fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

#[cfg(test)]
mod tests {
    #[test]
    fn bidi_controls_are_shown_as_code_points() {
        assert_eq!(
            super::one_line(" a\u{202E}txt.exe\u{1b}[0m "),
            "a[U+202E]txt.exe\u{FFFD}[0m"
        );
        assert_eq!(super::inline("x\u{2066}y\n"), "x[U+2066]y ");
        assert_eq!(super::safe_text("x\u{200F}y\n"), "x[U+200F]y\n");
    }

    use super::*;

    #[test]
    fn plurals_sizes_and_rates() {
        assert_eq!(plural(1, "file", "files"), "1 file");
        assert_eq!(plural(0, "file", "files"), "0 files");
        assert_eq!(
            plural(2, "malformed line", "malformed lines"),
            "2 malformed lines"
        );
        let sizes = [
            (0, "0 B"),
            (999, "999 B"),
            (1000, "1.0 KB"),
            (4_200, "4.2 KB"),
            (42_000, "42 KB"),
            (999_400, "999 KB"),
            (999_600, "1.0 MB"),
            (1_100_000_000, "1.1 GB"),
            (12_345_678_901, "12 GB"),
        ];
        for (bytes, want) in sizes {
            assert_eq!(size(bytes), want, "{bytes}");
        }
        assert_eq!(rate(116.94), "117 MB/s");
        assert_eq!(rate(3.04), "3.0 MB/s");
        assert_eq!(seconds(0.123), "0.12 s");
        assert_eq!(seconds(8.76), "8.8 s");
        assert_eq!(seconds(26.2), "26 s");
    }

    #[test]
    fn ages_are_relative_then_local_dates() {
        let tz = TimeZone::fixed(jiff::tz::offset(9));
        let now = 1_780_000_000_000; // 2026-05-28T20:26:40Z = 2026-05-29 05:26 in Tokyo
        assert_eq!(age(now, now - 10_000, &tz), "just now");
        assert_eq!(age(now, now - 5 * 60_000, &tz), "5m ago");
        assert_eq!(age(now, now - 3 * 3_600_000 - 1, &tz), "3h ago");
        assert_eq!(age(now, now - 2 * 86_400_000, &tz), "2d ago");
        assert_eq!(age(now, now - 8 * 86_400_000, &tz), "2026-05-21");
        assert_eq!(age(now, now, &TimeZone::UTC), "just now");
        // The same instant is a different date in another zone.
        let utc = TimeZone::UTC;
        assert_eq!(local_date(now, &utc), "2026-05-28");
        assert_eq!(local_date(now, &tz), "2026-05-29");
        assert_eq!(
            local_time("2026-05-28T20:26:40.000Z", &tz),
            "2026-05-29 05:26:40"
        );
        assert_eq!(local_time("not a time\n", &tz), "not a time");
    }

    #[test]
    fn unique_prefixes_follow_git() {
        let id = "7c9d2e41-5b6a-4f80-9a1b-2c3d4e5f6a71";
        assert_eq!(unique_prefix_len(id, None, None, 8), 8);
        assert_eq!(
            unique_prefix_len(id, Some("7c9d2e40-0000"), Some("8e1f"), 8),
            8
        );
        assert_eq!(
            unique_prefix_len(id, Some("7c9d2e41-5b00"), None, 8),
            12,
            "shares 11 characters with its neighbour"
        );
        assert_eq!(unique_prefix_len("abc", Some("abb"), None, 8), 3);
    }

    #[test]
    fn transcript_text_cannot_steer_the_terminal() {
        assert_eq!(one_line("a\n\nb\tc  d"), "a b c d");
        assert_eq!(one_line("x\x1b[31mred\x07"), "x\u{FFFD}[31mred\u{FFFD}");
        assert_eq!(inline(" a\nb \x1b"), " a b \u{FFFD}");
        assert_eq!(safe_text("a\nb\x1b]0;t\x07"), "a\nb\u{FFFD}]0;t\u{FFFD}");
    }

    #[test]
    fn fitting_counts_columns() {
        assert_eq!(fit("hello world", 20), "hello world");
        assert_eq!(fit("hello world", 6), "hello…");
        assert_eq!(fit("日本語のタイトル", 7), "日本語…");
        assert_eq!(width(&fit("日本語のタイトル", 7)), 7);
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(words(" one two\nthree "), 3);
    }
}
