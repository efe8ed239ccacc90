//! Markdown from a transcript rendered safely: pulldown-cmark parses it, raw HTML is turned
//! into text, links keep only `http`, `https` and `mailto` targets (others become plain
//! text), and images become links (a page never loads a remote resource). pulldown-cmark's
//! writer escapes text and attribute values.

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

/// Whether a link target may become an `href`: an absolute `http(s)` or `mailto` URL.
pub fn safe_link(url: &str) -> bool {
    // Browsers ignore ASCII whitespace and control characters inside a scheme; refuse any.
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return false;
    }
    let lower = url.to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://") || lower.starts_with("mailto:")
}

/// Renders `text` as sanitised HTML.
pub fn render(text: &str) -> String {
    // Bidirectional overrides would reorder the rendered text: make them visible first.
    let shown;
    let text = if text.chars().any(super::html::is_bidi_control) {
        shown = show_bidi_controls(text);
        shown.as_str()
    } else {
        text
    };
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut dropped_link = false;
    let events = Parser::new_ext(text, options).filter_map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            if safe_link(&dest_url) {
                Some(Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    id,
                }))
            } else {
                dropped_link = true;
                None
            }
        }
        Event::End(TagEnd::Link) if dropped_link => {
            dropped_link = false;
            None
        }
        Event::Start(Tag::Image {
            dest_url,
            title,
            id,
            ..
        }) => {
            if safe_link(&dest_url) {
                Some(Event::Start(Tag::Link {
                    link_type: LinkType::Inline,
                    dest_url,
                    title,
                    id,
                }))
            } else {
                dropped_link = true;
                Some(Event::Text(CowStr::Borrowed("[image] ")))
            }
        }
        Event::End(TagEnd::Image) => {
            if dropped_link {
                dropped_link = false;
                None
            } else {
                Some(Event::End(TagEnd::Link))
            }
        }
        other => Some(other),
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

fn show_bidi_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if super::html::is_bidi_control(c) {
            out.push_str(&format!("[U+{:04X}]", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_becomes_text() {
        let out = render("hi <script>alert(1)</script>\n\n<img src=x onerror=alert(1)>");
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("<img"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
    }

    #[test]
    fn unsafe_links_lose_their_target() {
        for md in [
            "[x](javascript:alert(1))",
            "[x](JavaScript:alert(1))",
            "[x](java\tscript:alert(1))",
            "[x](data:text/html,<script>alert(1)</script>)",
            "[x](vbscript:msgbox)",
            "<javascript:alert(1)>",
            "[x][r]\n\n[r]: javascript:alert(1)",
        ] {
            let out = render(md);
            assert!(!out.contains("href"), "{md} → {out}");
        }
        assert!(render("[x](https://example.com/a?b=\"c\")")
            .contains("href=\"https://example.com/a?b=%22c%22\""));
    }

    #[test]
    fn images_become_links() {
        let out = render("![alt](https://example.com/x.png) ![b](javascript:x)");
        assert!(!out.contains("<img"), "{out}");
        assert!(
            out.contains("<a href=\"https://example.com/x.png\">alt</a>"),
            "{out}"
        );
        assert!(out.contains("[image] b"), "{out}");
    }

    #[test]
    fn bidi_overrides_are_visible() {
        assert!(render("invoice\u{202E}gpj.exe").contains("invoice[U+202E]gpj.exe"));
    }

    #[test]
    fn markdown_still_renders() {
        let out = render("# T\n\n**b** `c<d>`\n\n```rs\nfn a() {}\n```\n\n- i");
        assert!(out.contains("<h1>T</h1>"), "{out}");
        assert!(out.contains("<strong>b</strong>"), "{out}");
        assert!(out.contains("<code>c&lt;d&gt;</code>"), "{out}");
        assert!(out.contains("<li>i</li>"), "{out}");
    }
}
