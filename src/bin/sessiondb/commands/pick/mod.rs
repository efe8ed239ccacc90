//! `sessiondb pick [QUERY…]`: a terminal picker over every stored session. Type to narrow
//! (titles and first prompts fuzzily at once, the whole text by prefix once typing pauses;
//! `project:` `tag:` `branch:` `host:` `since:` `until:` filter), see the selected
//! session's last messages, and hand it to Claude Code with Enter (in its folder) or Ctrl-O
//! (here), as `launch` does.
//!
//! The screen never waits for the store: a reader thread ([`worker`]) answers listing
//! pages, searches and previews, the first page small so that the first screen shows as
//! soon as the store is open.

mod app;
mod draw;
mod typed;
mod worker;

use crate::cli_pick::PickArgs;
use crate::output::Usage;
use app::{App, Outcome};
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use ratatui::crossterm::{execute, terminal};
use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

/// How long the screen waits for a key before it looks for the reader's answers again,
/// while an answer is awaited (a page, a search, a preview) and while none is. The reader
/// cannot wake a wait for keys, and a thread reading keys would take them from Claude Code
/// once it runs.
const POLL_AWAITING: Duration = Duration::from_millis(3);
const POLL_IDLE: Duration = Duration::from_millis(50);

pub fn run(db: &Path, args: PickArgs) -> anyhow::Result<()> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(Usage(
            "pick needs a terminal (standard input and output); in a script use \
             `sessiondb sessions` or `sessiondb search`"
                .to_owned(),
        )
        .into());
    }
    let store = sessiondb::SessionDb::from(super::open_db_read(db)?);
    let (requests, replies) = worker::start(store);
    let mut app = App::new(requests, args.query.join(" "));
    let outcome = {
        let mut screen = Screen::enter()?;
        screen.run(&mut app, &replies)?
    };
    drop(app);
    match outcome {
        Outcome::Quit => std::process::exit(130),
        Outcome::Launch {
            project,
            session_id,
            here,
        } => super::launch::run(
            db,
            crate::cli_setup::LaunchArgs {
                session: format!("{project}/{session_id}"),
                cwd: None,
                here,
                fork: false,
                print: false,
                claude_args: Vec::new(),
            },
        ),
    }
}

/// The terminal in the picker's mode (raw, the alternate screen); left as it was on drop,
/// and on a panic.
struct Screen {
    terminal: ratatui::Terminal<ratatui::backend::CrosstermBackend<std::io::Stdout>>,
}

impl Screen {
    fn enter() -> anyhow::Result<Screen> {
        terminal::enable_raw_mode()?;
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            leave();
            previous(info);
        }));
        execute!(std::io::stdout(), terminal::EnterAlternateScreen)?;
        let backend = ratatui::backend::CrosstermBackend::new(std::io::stdout());
        let terminal = ratatui::Terminal::new(backend).inspect_err(|_| leave())?;
        Ok(Screen { terminal })
    }

    /// The loop: draw when something changed, take the reader's answers and the keys.
    fn run(
        &mut self,
        app: &mut App,
        replies: &std::sync::mpsc::Receiver<worker::Reply>,
    ) -> anyhow::Result<Outcome> {
        let mut cx = draw::Context {
            now_ms: now_ms(),
            tz: crate::human::time_zone(),
            home: std::env::var("HOME").ok(),
        };
        let mut top = 0;
        let mut dirty = true;
        loop {
            if dirty {
                cx.now_ms = now_ms();
                self.terminal.draw(|f| draw::frame(f, app, &mut top, &cx))?;
                dirty = false;
            }
            while let Ok(reply) = replies.try_recv() {
                app.reply(reply);
                dirty = true;
            }
            let wait = if app.awaiting() {
                POLL_AWAITING
            } else {
                POLL_IDLE
            };
            // Every key already typed (a paste, fast typing) before the next draw.
            let mut ready = event::poll(wait)?;
            while ready {
                match event::read()? {
                    Event::Key(key) if key.kind != KeyEventKind::Release => {
                        let page = self.terminal.size()?.height.saturating_sub(3) as usize;
                        if let Some(outcome) = app.key(key, page.max(1)) {
                            return Ok(outcome);
                        }
                        dirty = true;
                    }
                    Event::Resize(..) => dirty = true,
                    _ => {}
                }
                ready = event::poll(Duration::ZERO)?;
            }
            app.tick();
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        leave();
        let _ = self.terminal.show_cursor();
    }
}

/// Back to the terminal as it was: the main screen, cooked mode.
fn leave() {
    let _ = execute!(std::io::stdout(), terminal::LeaveAlternateScreen);
    let _ = terminal::disable_raw_mode();
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
