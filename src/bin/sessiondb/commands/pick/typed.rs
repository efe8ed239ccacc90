//! What the user typed into the picker, taken apart: filters (`project:foo tag:x branch:main
//! host:laptop since:3d until:2026-01-31`) and the words to look for; and how well a
//! session's titles match those words (fuzzy, for the sessions already listed).

use sessiondb::query::SessionFilter;

/// The filter names the picker knows, as typed before the `:`.
pub const FILTERS: &[&str] = &["project", "tag", "branch", "host", "since", "until"];

/// The typed line taken apart.
#[derive(Debug, Default, Clone)]
pub struct Typed {
    /// The listing filter the `name:value` words make.
    pub filter: SessionFilter,
    /// The other words, in the order typed.
    pub words: Vec<String>,
    /// Why a filter was left out (`since:yesterday` is not a time), for the status line.
    pub problems: Vec<String>,
}

/// The part of a [`SessionFilter`] the picker sets, comparable: a change means the list
/// must be loaded again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FilterKey(Vec<Option<String>>);

impl Typed {
    /// Takes `line` apart. A word `name:value` with a known name is a filter (the last one
    /// of a name wins); anything else, `foo:bar` included, is a word to look for.
    pub fn parse(line: &str) -> Typed {
        let mut typed = Typed::default();
        for word in line.split_whitespace() {
            let Some((name, value)) = word
                .split_once(':')
                .filter(|(name, _)| FILTERS.contains(name))
            else {
                typed.words.push(word.to_owned());
                continue;
            };
            if value.is_empty() {
                continue; // still being typed
            }
            let f = &mut typed.filter;
            match name {
                "project" => f.project_contains = Some(value.to_owned()),
                "tag" => f.tag = Some(value.to_owned()),
                "branch" => f.branch = Some(value.to_owned()),
                "host" => f.host = Some(value.to_owned()),
                _ => match sessiondb::time::parse_time_filter(value) {
                    Some(ms) if name == "since" => f.since = Some(ms),
                    Some(ms) => f.until = Some(ms),
                    None => typed.problems.push(format!(
                        "{name}:{value} is not a time (try 3d, 12h or 2026-01-31)"
                    )),
                },
            }
        }
        typed
    }

    /// Whether any filter is set (then search hits are kept only for listed sessions).
    pub fn filtered(&self) -> bool {
        self.key().0.iter().any(Option::is_some)
    }

    /// What decides the list, comparable.
    pub fn key(&self) -> FilterKey {
        let f = &self.filter;
        FilterKey(vec![
            f.project_contains.clone(),
            f.tag.clone(),
            f.branch.clone(),
            f.host.clone(),
            f.since.map(|t| t.to_string()),
            f.until.map(|t| t.to_string()),
        ])
    }

    /// The full-text query for the words: each word a prefix (`checkp` finds
    /// `checkpoint`), as the user types. Words of one letter are left to the fuzzy match
    /// (a one-letter prefix matches most of the index); `None` when no word is left.
    pub fn search_text(&self) -> Option<String> {
        let words: Vec<String> = self
            .words
            .iter()
            .map(|w| w.trim_end_matches('*'))
            .filter(|w| w.chars().count() >= 2)
            .map(|w| format!("{w}*"))
            .collect();
        (!words.is_empty()).then(|| words.join(" "))
    }
}

/// How well `words` (lower-cased) match `text` (lower-cased), higher is better; `None`
/// unless every word matches. A word scores most where a word of the text starts with it,
/// less anywhere inside the text, least as its letters in order within a short stretch
/// (`rfctr` in `refactor`): what a fuzzy finder does, over titles and first prompts.
pub fn fuzzy_score(text: &str, words: &[String]) -> Option<u32> {
    let mut total = 0;
    for word in words {
        total += word_score(text, word)?;
    }
    Some(total)
}

fn word_score(text: &str, word: &str) -> Option<u32> {
    if word.is_empty() {
        return Some(0);
    }
    let starts_word = |at: usize| {
        !text[..at]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
    };
    let mut inside = false;
    for (at, _) in text.match_indices(word) {
        if starts_word(at) {
            return Some(30);
        }
        inside = true;
    }
    if inside {
        return Some(20);
    }
    let letters = word.chars().count();
    subsequence_span(text, word, 3 * letters)
        .map(|span| 10u32.saturating_sub(span as u32 / 4).max(1))
}

/// Whether the characters of `word` occur in `text` in order, however far apart: what a
/// longer query can only narrow (see [`fuzzy_candidate`]).
pub fn is_subsequence(text: &str, word: &str) -> bool {
    let mut want = word.chars().peekable();
    for c in text.chars() {
        if want.peek().is_none() {
            break;
        }
        if want.peek() == Some(&c) {
            want.next();
        }
    }
    want.peek().is_none()
}

/// Whether `text` can match `words` at all: every word's characters in order. A query
/// that only adds characters or words matches a subset of what this admits, so the picker
/// narrows the sessions it scores as the user types.
pub fn fuzzy_candidate(text: &str, words: &[String]) -> bool {
    words.iter().all(|w| is_subsequence(text, w))
}

/// The shortest stretch of `text` (in characters), at most `limit`, holding the characters
/// of `word` in order, when one does.
fn subsequence_span(text: &str, word: &str, limit: usize) -> Option<usize> {
    let mut chars = word.chars();
    let first = chars.next()?;
    let rest: Vec<char> = chars.collect();
    let mut best: Option<usize> = None;
    for (start, _) in text.char_indices().filter(|(_, c)| *c == first) {
        let mut want = rest.iter().peekable();
        let mut span = 1;
        if want.peek().is_some() {
            for c in text[start..].chars().skip(1) {
                span += 1;
                if span > limit {
                    break;
                }
                if want.peek() == Some(&&c) {
                    want.next();
                    if want.peek().is_none() {
                        break;
                    }
                }
            }
        }
        if want.peek().is_none() && span <= limit {
            best = Some(best.map_or(span, |b| b.min(span)));
            if span == rest.len() + 1 {
                break;
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_and_words_are_told_apart() {
        let t = Typed::parse("project:myapp  flaky tag:review test http://x branch:");
        assert_eq!(t.filter.project_contains.as_deref(), Some("myapp"));
        assert_eq!(t.filter.tag.as_deref(), Some("review"));
        assert_eq!(
            t.filter.branch, None,
            "a filter still being typed is no filter"
        );
        assert_eq!(t.words, ["flaky", "test", "http://x"]);
        assert!(t.filtered());
        assert!(!Typed::parse("just words").filtered());
    }

    #[test]
    fn times_are_checked() {
        let t = Typed::parse("since:3d until:soon");
        assert!(t.filter.since.is_some());
        assert_eq!(t.filter.until, None);
        assert_eq!(t.problems.len(), 1);
        assert!(t.problems[0].contains("until:soon"), "{:?}", t.problems);
    }

    #[test]
    fn every_word_searches_as_a_prefix() {
        assert_eq!(
            Typed::parse("checkp a flaky* tag:x")
                .search_text()
                .as_deref(),
            Some("checkp* flaky*")
        );
        assert_eq!(Typed::parse("a b").search_text(), None);
    }

    #[test]
    fn fuzzy_prefers_word_starts_then_substrings_then_letters_in_order() {
        let words = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        let text = "refactor the checkpoint writer";
        let start = fuzzy_score(text, &words("check")).unwrap();
        let inside = fuzzy_score(text, &words("point")).unwrap();
        let letters = fuzzy_score(text, &words("rfctr")).unwrap();
        assert!(start > inside && inside > letters && letters > 0);
        assert_eq!(fuzzy_score(text, &words("check nothing")), None);
        assert_eq!(
            fuzzy_score(text, &words("rtw")),
            None,
            "letters too far apart"
        );
    }
}
