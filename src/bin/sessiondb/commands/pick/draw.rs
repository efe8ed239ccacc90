//! The picker's screen: the typed line, the list of sessions, the preview of the selected
//! one, and a line of keys (or the newest problem). Every transcript string (titles,
//! prompts, messages, project names and paths) is made safe before it is drawn: control
//! characters become `�` and bidirectional-text controls their code points (`[U+202E]`),
//! so that a transcript cannot move the cursor, recolour the screen or reorder what is
//! shown.

use super::app::{App, Row};
use crate::human;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use serde_json::Value;

/// What the screen needs besides the state: for ages and paths.
pub struct Context {
    pub now_ms: i64,
    pub tz: jiff::tz::TimeZone,
    pub home: Option<String>,
}

/// Transcript text made safe for one line of the screen, as every verb shows it (see
/// [`human::one_line`]).
pub fn clean(text: &str) -> String {
    human::one_line(text)
}

/// A path as a prompt shows it: `~/…` under the home folder, else whole.
fn short_path(path: &str, home: Option<&str>) -> String {
    match home.filter(|h| h.len() > 1) {
        Some(home) if path == home => "~".to_owned(),
        Some(home) => match path.strip_prefix(home).and_then(|r| r.strip_prefix('/')) {
            Some(rest) => format!("~/{rest}"),
            None => path.to_owned(),
        },
        None => path.to_owned(),
    }
}

/// `text` cut to `max` columns from its start (`…/src/app`): the end of a path says most.
fn fit_tail(text: &str, max: usize) -> String {
    if human::width(text) <= max || max == 0 {
        return text.to_owned();
    }
    let reversed: String = text.chars().rev().collect();
    let cut = human::fit(&reversed, max);
    let kept: String = cut.trim_end_matches('…').chars().rev().collect();
    format!("…{kept}")
}

/// Draws the whole screen; `app.top` follows the selection.
pub fn frame(f: &mut Frame, app: &App, top: &mut usize, cx: &Context) {
    let [input, body, help] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(f.area());
    let wide = body.width >= 100;
    let parts = Layout::default()
        .direction(if wide {
            Direction::Horizontal
        } else {
            Direction::Vertical
        })
        .constraints([Constraint::Percentage(55), Constraint::Percentage(45)])
        .split(body);
    draw_input(f, app, input);
    draw_list(f, app, parts[0], top, cx);
    draw_preview(f, app, parts[1], cx);
    let help_line = match &app.problem {
        Some(problem) => Line::from(clean(problem)).red(),
        None => Line::from(
            "Enter launch · Ctrl-O launch here · ↑↓ move · Esc quit · \
             filters: project: tag: branch: host: since: until:",
        )
        .dim(),
    };
    f.render_widget(Paragraph::new(help_line), help);
}

fn draw_input(f: &mut Frame, app: &App, area: Rect) {
    let loading = if !app.pool_done {
        " loading…"
    } else if app.searching() {
        " searching…"
    } else {
        ""
    };
    let count = format!("{}/{}{loading}", app.rows.len(), app.pool.len());
    let room = (area.width as usize).saturating_sub(human::width(&count) + 3);
    let typed = fit_tail(&clean(&app.input), room);
    let [left, right] = Layout::horizontal([
        Constraint::Min(1),
        Constraint::Length(human::width(&count) as u16 + 1),
    ])
    .areas(area);
    f.render_widget(
        Paragraph::new(Line::from(vec!["> ".bold(), Span::raw(typed.clone())])),
        left,
    );
    f.render_widget(
        Paragraph::new(Line::from(count).dim()).right_aligned(),
        right,
    );
    f.set_cursor_position((left.x + 2 + human::width(&typed) as u16, left.y));
}

fn draw_list(f: &mut Frame, app: &App, area: Rect, top: &mut usize, cx: &Context) {
    let height = area.height as usize;
    if app.selected < *top {
        *top = app.selected;
    } else if app.selected >= *top + height {
        *top = app.selected + 1 - height;
    }
    *top = (*top).min(app.rows.len().saturating_sub(1));
    let width = area.width as usize;
    let lines: Vec<Line> = app
        .rows
        .iter()
        .enumerate()
        .skip(*top)
        .take(height)
        .map(|(i, row)| {
            let text = row_text(app, row, width.saturating_sub(2), cx);
            if i == app.selected {
                Line::from(format!("> {text}"))
                    .style(Style::default().add_modifier(Modifier::REVERSED))
            } else {
                Line::from(format!("  {text}"))
            }
        })
        .collect();
    let empty = app.rows.is_empty() && app.pool_done && !app.searching();
    let lines = if empty {
        vec![Line::from("  no sessions match").dim()]
    } else {
        lines
    };
    f.render_widget(Paragraph::new(lines), area);
}

/// One row: age, folder, title (and the matched text of a search hit).
fn row_text(app: &App, row: &Row, width: usize, cx: &Context) -> String {
    let info = row.info.map(|i| &app.pool[i]);
    let hit = row.hit.map(|h| &app.hits[h]);
    let age = match (info, hit) {
        (Some(s), _) => human::age(cx.now_ms, s.last_modified, &cx.tz),
        (None, Some(h)) => h
            .timestamp
            .as_deref()
            .and_then(sessiondb::time::parse_iso8601_ms)
            .map_or_else(|| "-".to_owned(), |ms| human::age(cx.now_ms, ms, &cx.tz)),
        _ => "-".to_owned(),
    };
    let place = info.and_then(|s| s.cwd.as_deref()).map_or_else(
        || row.project.clone(),
        |cwd| short_path(cwd, cx.home.as_deref()),
    );
    let title = info
        .and_then(|s| s.title())
        .or_else(|| hit.and_then(|h| h.title.as_deref()))
        .unwrap_or("-");
    let mut text = format!(
        "{}  {}  {}",
        human::pad(&age, 10),
        human::pad(&fit_tail(&clean(&place), 22), 22),
        clean(title)
    );
    if let Some(h) = hit {
        text.push_str("  · ");
        text.push_str(&clean(&h.snippet));
    }
    human::fit(&text, width)
}

fn draw_preview(f: &mut Frame, app: &App, area: Rect, cx: &Context) {
    let block = Block::default().borders(Borders::LEFT | Borders::TOP);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(row) = app.current() else {
        return;
    };
    let width = (inner.width as usize).max(10);
    let mut head: Vec<Line> = Vec::new();
    let info = row.info.map(|i| &app.pool[i]);
    if let Some(s) = info {
        let title = s.title().unwrap_or("-");
        head.push(Line::from(human::fit(&clean(title), width)).bold());
        let place = s.cwd.as_deref().map_or_else(
            || clean(&s.project),
            |c| clean(&short_path(c, cx.home.as_deref())),
        );
        head.push(Line::from(fit_tail(&place, width)).dim());
        let mut facts = Vec::new();
        if let Some(b) = &s.git_branch {
            facts.push(format!("branch {}", clean(b)));
        }
        if let Some(t) = &s.tag {
            facts.push(format!("tag {}", clean(t)));
        }
        if let Some(h) = &s.origin_host {
            facts.push(format!("host {}", clean(h)));
        }
        facts.push(human::plural(s.message_count as u64, "message", "messages"));
        facts.push(human::age(cx.now_ms, s.last_modified, &cx.tz));
        head.push(Line::from(human::fit(&facts.join(" · "), width)).dim());
    }
    head.push(Line::from(human::fit(&clean(&row.session_id), width)).dim());
    let room = (inner.height as usize).saturating_sub(head.len() + 1);
    let mut body: Vec<Line> = Vec::new();
    // Where each message starts in `body`.
    let mut starts: Vec<usize> = Vec::new();
    match &app.preview {
        Some(p) if p.project == row.project && p.session_id == row.session_id => {
            for m in &p.messages {
                let (label, style) = match m.kind.as_str() {
                    "user" => ("you", Style::default().cyan().bold()),
                    "assistant" => ("claude", Style::default().green().bold()),
                    other => (other, Style::default().bold()),
                };
                starts.push(body.len());
                body.push(Line::from(Span::styled(clean(label), style)));
                for text in message_lines(&m.message) {
                    for piece in wrap(&text, width) {
                        body.push(Line::from(piece));
                    }
                }
            }
            if body.is_empty() {
                body.push(Line::from("no messages").dim());
            }
        }
        _ => body.push(Line::from("…").dim()),
    }
    // The last messages: the end of the conversation, as much as fits, from the start of a
    // message (unless the last one alone is longer than the pane).
    let cut = body.len().saturating_sub(room);
    let skip = starts.into_iter().find(|&at| at >= cut).unwrap_or(cut);
    let mut lines = head;
    lines.push(Line::from(""));
    lines.extend(body.into_iter().skip(skip));
    f.render_widget(Paragraph::new(lines), inner);
}

/// The lines a message shows in the preview: its text, one line per tool call and result.
fn message_lines(message: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    let text_lines = |text: &str, lines: &mut Vec<String>| {
        lines.extend(text.lines().filter(|l| !l.trim().is_empty()).map(clean));
    };
    match message.get("content") {
        Some(Value::String(text)) => text_lines(text, &mut lines),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                let field = |key: &str| b.get(key).and_then(Value::as_str).unwrap_or("");
                match field("type") {
                    "text" => text_lines(field("text"), &mut lines),
                    "thinking" | "redacted_thinking" => lines.push("[thinking]".to_owned()),
                    "tool_use" => {
                        let input = b.get("input").unwrap_or(&Value::Null);
                        let arg = crate::commands::messages::main_argument(input);
                        let arg = arg.lines().next().unwrap_or("");
                        lines.push(clean(&format!("→ {} {arg}", field("name"))));
                    }
                    "tool_result" => {
                        let text = crate::commands::messages::result_text(b.get("content"));
                        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                        lines.push(clean(&format!("← {first}")));
                    }
                    "image" => lines.push("[image]".to_owned()),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    lines
}

/// A line broken into pieces of at most `width` columns.
fn wrap(text: &str, width: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthChar;
    let mut out = Vec::new();
    let mut piece = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width && !piece.is_empty() {
            out.push(std::mem::take(&mut piece));
            used = 0;
        }
        piece.push(c);
        used += w;
    }
    if !piece.is_empty() {
        out.push(piece);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_text_cannot_steer_the_screen() {
        let hostile = "a\u{1b}[2Jb\u{202E}cba\u{2066}d\re\u{7}";
        let shown = clean(hostile);
        assert!(
            !shown
                .chars()
                .any(|c| c.is_control() || human::is_bidi_control(c)),
            "{shown:?}"
        );
        assert_eq!(shown, "a\u{FFFD}[2Jb[U+202E]cba[U+2066]d e\u{FFFD}");
    }

    #[test]
    fn paths_keep_their_end() {
        assert_eq!(
            short_path("/home/me/src/app", Some("/home/me")),
            "~/src/app"
        );
        assert_eq!(short_path("/home/mel/x", Some("/home/me")), "/home/mel/x");
        assert_eq!(fit_tail("/very/long/path/to/app", 8), "…/to/app");
        assert_eq!(wrap("abcdef", 4), ["abcd", "ef"]);
    }
}
