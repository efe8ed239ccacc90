//! Timestamps without a calendar crate: ISO 8601 text ↔ epoch milliseconds (UTC).

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn digits(s: &[u8], n: usize) -> Option<i64> {
    if s.len() < n || !s[..n].iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        s[..n]
            .iter()
            .fold(0i64, |acc, b| acc * 10 + i64::from(b - b'0')),
    )
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// Parses ISO 8601 the way Python's `datetime.fromisoformat` (3.11) reads Claude Code's
/// timestamps: `YYYY-MM-DD`, then optionally a separator and `hh[:mm[:ss[.fraction]]]`,
/// then `Z` or `±hh[:mm]`. Text without an offset is taken as UTC. Returns epoch
/// milliseconds (the fraction truncated), or `None` when the text is not such a time.
pub fn parse_iso8601_ms(text: &str) -> Option<i64> {
    let s = text.as_bytes();
    let year = digits(s, 4)?;
    if s.get(4) != Some(&b'-') || s.get(7) != Some(&b'-') {
        return None;
    }
    let month = u32::try_from(digits(&s[5..], 2)?).ok()?;
    let day = u32::try_from(digits(&s[8..], 2)?).ok()?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let mut ms = days_from_civil(year, month, day) * 86_400_000;
    let mut rest = &s[10..];
    if rest.is_empty() {
        return Some(ms);
    }
    // Any one character separates date and time in Python 3.11.
    let sep_len = text[10..].chars().next().map_or(1, char::len_utf8);
    rest = &rest[sep_len..];
    let hour = digits(rest, 2)?;
    rest = &rest[2..];
    let (mut minute, mut second, mut micros) = (0, 0, 0);
    if rest.first() == Some(&b':') {
        minute = digits(&rest[1..], 2)?;
        rest = &rest[3..];
        if rest.first() == Some(&b':') {
            second = digits(&rest[1..], 2)?;
            rest = &rest[3..];
            if matches!(rest.first(), Some(b'.' | b',')) {
                let n = rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
                if n == 0 {
                    return None;
                }
                let frac = &rest[1..1 + n];
                let mut us = 0i64;
                for i in 0..6 {
                    us = us * 10 + frac.get(i).map_or(0, |b| i64::from(b - b'0'));
                }
                micros = us;
                rest = &rest[1 + n..];
            }
        }
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    ms += hour * 3_600_000 + minute * 60_000 + second * 1000 + micros / 1000;
    match rest {
        [] | [b'Z'] => Some(ms),
        [sign @ (b'+' | b'-'), tail @ ..] => {
            let oh = digits(tail, 2)?;
            let om = match &tail[2..] {
                [] => 0,
                [b':', m @ ..] if m.len() == 2 => digits(m, 2)?,
                m if m.len() == 2 => digits(m, 2)?,
                _ => return None,
            };
            let offset = (oh * 60 + om) * 60_000;
            Some(if *sign == b'+' {
                ms - offset
            } else {
                ms + offset
            })
        }
        _ => None,
    }
}

/// Formats epoch milliseconds as `YYYY-MM-DDThh:mm:ss.fffZ`.
pub fn format_ms(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// A time a user gives to a listing filter (`--since`, `until=`): an RFC 3339 time or date,
/// epoch milliseconds, or an age before now (`45s`, `30m`, `12h`, `3d`, `2w`). `None` when
/// it is none of these.
pub fn parse_time_filter(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Some(ms) = parse_iso8601_ms(text) {
        return Some(ms);
    }
    if let Ok(ms) = text.parse::<i64>() {
        return Some(ms);
    }
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (n, unit) = text.split_at(split);
    let n: i64 = n.parse().ok()?;
    let unit_ms = match unit {
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 7 * 86_400_000,
        _ => return None,
    };
    Some(now_ms() - n * unit_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_claude_code_timestamps() {
        let cases: &[(&str, Option<i64>)] = &[
            ("1970-01-01T00:00:00.000Z", Some(0)),
            ("2026-06-06T05:37:35.221Z", Some(1_780_724_255_221)),
            ("2026-06-06T05:37:35.221999Z", Some(1_780_724_255_221)),
            ("2026-06-06T07:37:35.221+02:00", Some(1_780_724_255_221)),
            ("2026-06-06T05:37:35Z", Some(1_780_724_255_000)),
            ("2026-06-06", Some(1_780_704_000_000)),
            ("2024-02-29T00:00:00Z", Some(1_709_164_800_000)),
            ("2023-02-29T00:00:00Z", None),
            ("yesterday", None),
            ("2026-06-06T25:00:00Z", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_iso8601_ms(text), *want, "{text}");
        }
    }

    #[test]
    fn formats_round_trip() {
        for ms in [0, 1_780_724_255_221, 951_782_400_000, -86_400_000] {
            assert_eq!(parse_iso8601_ms(&format_ms(ms)), Some(ms));
        }
    }

    /// The calendar arithmetic checked against jiff's, over 20,000 instants from 1900 to
    /// 2300, every day of 1999-2100 (leap years, invalid days), and offsets of ±14 h.
    #[test]
    fn agrees_with_jiff() {
        use jiff::tz::{Offset, TimeZone};
        let text_of = |dt: jiff::civil::DateTime, zone: &str| {
            format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}{zone}",
                dt.year(),
                dt.month(),
                dt.day(),
                dt.hour(),
                dt.minute(),
                dt.second(),
                dt.millisecond()
            )
        };
        let (lo, hi) = (-2_208_988_800_000i64, 10_413_792_000_000i64);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ms = lo + (x % (hi - lo) as u64) as i64;
            let ts = jiff::Timestamp::from_millisecond(ms).expect("in range");
            let utc = ts.to_zoned(TimeZone::UTC).datetime();
            assert_eq!(format_ms(ms), text_of(utc, "Z"), "{ms}");
            let minutes = (x >> 40) as i32 % (14 * 60 + 1) * if x & 1 == 0 { 1 } else { -1 };
            let offset = Offset::from_seconds(minutes * 60).expect("offset");
            let local = ts.to_zoned(TimeZone::fixed(offset)).datetime();
            let sign = if minutes < 0 { '-' } else { '+' };
            let zone = format!("{sign}{:02}:{:02}", minutes.abs() / 60, minutes.abs() % 60);
            let text = text_of(local, &zone);
            assert_eq!(parse_iso8601_ms(&text), Some(ms), "{text}");
        }
        for y in 1999..=2100i16 {
            for m in 1..=12i8 {
                for d in 1..=31i8 {
                    let text = format!("{y:04}-{m:02}-{d:02}");
                    let want = jiff::civil::Date::new(y, m, d).ok().map(|date| {
                        date.to_zoned(TimeZone::UTC)
                            .expect("in range")
                            .timestamp()
                            .as_millisecond()
                    });
                    assert_eq!(parse_iso8601_ms(&text), want, "{text}");
                }
            }
        }
    }

    #[test]
    fn time_filters() {
        assert_eq!(parse_time_filter("1700000000000"), Some(1_700_000_000_000));
        assert!(parse_time_filter("2026-01-31").is_some());
        let day_ago = parse_time_filter("1d").expect("an age");
        assert!((now_ms() - day_ago - 86_400_000).abs() < 60_000);
        assert_eq!(parse_time_filter("3 parsecs"), None);
        assert_eq!(parse_time_filter("d"), None);
    }
}
