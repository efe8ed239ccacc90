//! The picker's state: the typed line, the sessions listed, the search hits, the rows
//! shown and which one is selected, the preview; and what each key does to it.

use super::typed::{fuzzy_candidate, fuzzy_score, FilterKey, Typed};
use super::worker::{Reply, Request};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use sessiondb::query::{SessionFilter, SessionInfo};
use sessiondb::sdk::SessionMessage;
use sessiondb::search::{Hit, SearchQuery};
use std::collections::HashMap;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// How long typing must pause before a search is asked for: a search per key would queue
/// behind each other on a large store.
const SEARCH_PAUSE: Duration = Duration::from_millis(120);
/// How long the selection must rest before its preview is asked for.
const PREVIEW_PAUSE: Duration = Duration::from_millis(60);

/// One row of the list: a listed session, or a session only a search hit names (its
/// listing page not loaded yet).
pub struct Row {
    pub project: String,
    pub session_id: String,
    /// Index into [`App::pool`] when the session is listed.
    pub info: Option<usize>,
    /// The search hit that brought the session in, when the titles did not.
    pub hit: Option<usize>,
}

/// What the user chose.
pub enum Outcome {
    /// Esc or Ctrl-C.
    Quit,
    /// Enter (in the session's folder) or Ctrl-O (`here`).
    Launch {
        project: String,
        session_id: String,
        here: bool,
    },
}

/// A preview: the last messages of a session.
pub struct Preview {
    pub project: String,
    pub session_id: String,
    pub messages: Vec<SessionMessage>,
}

pub struct App {
    requests: Sender<Request>,
    /// The typed line.
    pub input: String,
    pub typed: Typed,
    generation: u64,
    listed_for: FilterKey,
    /// The sessions the filters list, newest first, as loaded so far.
    pub pool: Vec<SessionInfo>,
    /// Lower-cased titles and first prompt of each pooled session (what fuzzy matches).
    haystacks: Vec<String>,
    /// Pool positions by (project, session id).
    index: HashMap<(String, String), usize>,
    pub pool_done: bool,
    /// The pooled sessions that can still match the words (see [`fuzzy_candidate`]): the
    /// words, the positions, and how much of the pool they cover. Typing more only narrows
    /// them, so a key scores these instead of every session.
    narrowed: Option<(Vec<String>, Vec<usize>, usize)>,
    /// The hits of the newest search answered, and its text.
    pub hits: Vec<Hit>,
    hits_text: Option<String>,
    search_sent: Option<String>,
    pub rows: Vec<Row>,
    pub selected: usize,
    pub preview: Option<Preview>,
    preview_sent: Option<(String, String)>,
    moved_at: Instant,
    typed_at: Instant,
    /// The newest error, for the status line.
    pub problem: Option<String>,
}

impl App {
    pub fn new(requests: Sender<Request>, input: String) -> App {
        let mut app = App {
            requests,
            typed: Typed::default(),
            input,
            generation: 0,
            listed_for: FilterKey::default(),
            pool: Vec::new(),
            haystacks: Vec::new(),
            index: HashMap::new(),
            pool_done: false,
            narrowed: None,
            hits: Vec::new(),
            hits_text: None,
            search_sent: None,
            rows: Vec::new(),
            selected: 0,
            preview: None,
            preview_sent: None,
            moved_at: Instant::now(),
            typed_at: Instant::now(),
            problem: None,
        };
        app.typed = Typed::parse(&app.input);
        app.listed_for = app.typed.key();
        app.list();
        app
    }

    /// Asks for the listing of the current filters, from the start.
    fn list(&mut self) {
        self.generation += 1;
        self.pool.clear();
        self.haystacks.clear();
        self.index.clear();
        self.narrowed = None;
        self.pool_done = false;
        let filter = SessionFilter {
            limit: None,
            offset: None,
            ..self.typed.filter.clone()
        };
        let _ = self.requests.send(Request::List {
            filter,
            generation: self.generation,
        });
    }

    /// The line changed: filters that changed list again; words re-rank at once and
    /// search once typing pauses.
    fn retyped(&mut self) {
        self.typed = Typed::parse(&self.input);
        self.typed_at = Instant::now();
        self.problem = self.typed.problems.first().cloned();
        if self.typed.key() != self.listed_for {
            self.listed_for = self.typed.key();
            self.list();
        }
        self.rebuild();
        self.selected = 0;
        self.moved_at = Instant::now();
    }

    /// Takes in an answer of the reader.
    pub fn reply(&mut self, reply: Reply) {
        match reply {
            Reply::Page {
                generation,
                sessions,
                done,
            } if generation == self.generation => {
                for info in sessions {
                    let hay = [
                        info.custom_title.as_deref(),
                        info.ai_title.as_deref(),
                        info.summary.as_deref(),
                        info.first_prompt.as_deref(),
                    ]
                    .iter()
                    .flatten()
                    .map(|s| s.to_lowercase())
                    .collect::<Vec<_>>()
                    .join("\n");
                    self.index.insert(
                        (info.project.clone(), info.session_id.clone()),
                        self.pool.len(),
                    );
                    self.haystacks.push(hay);
                    self.pool.push(info);
                }
                self.pool_done = done;
                self.rebuild();
            }
            Reply::Page { .. } => {}
            Reply::Hits { text, hits } => {
                self.hits = hits;
                self.hits_text = Some(text);
                self.rebuild();
            }
            Reply::Preview {
                project,
                session_id,
                messages,
            } => {
                self.preview = Some(Preview {
                    project,
                    session_id,
                    messages,
                })
            }
            Reply::Failed { what, error } => self.problem = Some(format!("{what}: {error}")),
        }
    }

    /// The rows for the typed words: without words, the listing; with words, the listed
    /// sessions whose titles or first prompt match (best first, then newest), then the
    /// sessions the search found by their text.
    fn rebuild(&mut self) {
        let selected = self
            .current()
            .map(|r| (r.project.clone(), r.session_id.clone()));
        let words: Vec<String> = self.typed.words.iter().map(|w| w.to_lowercase()).collect();
        let words: Vec<String> = words
            .iter()
            .map(|w| w.trim_end_matches('*').to_owned())
            .filter(|w| !w.is_empty())
            .collect();
        let mut rows: Vec<Row> = Vec::new();
        if words.is_empty() {
            rows.extend(self.pool.iter().enumerate().map(|(i, s)| Row {
                project: s.project.clone(),
                session_id: s.session_id.clone(),
                info: Some(i),
                hit: None,
            }));
        } else {
            let candidates: Vec<usize> = match self.narrowed.take() {
                Some((before, found, upto))
                    if before.len() <= words.len()
                        && before
                            .iter()
                            .zip(&words)
                            .all(|(b, w)| w.starts_with(b.as_str())) =>
                {
                    found
                        .into_iter()
                        .chain(upto..self.pool.len())
                        .filter(|&i| fuzzy_candidate(&self.haystacks[i], &words))
                        .collect()
                }
                _ => (0..self.pool.len())
                    .filter(|&i| fuzzy_candidate(&self.haystacks[i], &words))
                    .collect(),
            };
            let mut scored: Vec<(u32, usize)> = candidates
                .iter()
                .filter_map(|&i| fuzzy_score(&self.haystacks[i], &words).map(|s| (s, i)))
                .collect();
            self.narrowed = Some((words.clone(), candidates, self.pool.len()));
            scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            rows.extend(scored.into_iter().map(|(_, i)| Row {
                project: self.pool[i].project.clone(),
                session_id: self.pool[i].session_id.clone(),
                info: Some(i),
                hit: None,
            }));
            if self.hits_text.is_some() && self.hits_text == self.typed.search_text() {
                let mut seen: std::collections::HashSet<(String, String)> = rows
                    .iter()
                    .map(|r| (r.project.clone(), r.session_id.clone()))
                    .collect();
                for (h, hit) in self.hits.iter().enumerate() {
                    let key = (hit.project.clone(), hit.session_id.clone());
                    let info = self.index.get(&key).copied();
                    // With filters set, only the sessions they list.
                    if (self.typed.filtered() && info.is_none()) || !seen.insert(key) {
                        continue;
                    }
                    rows.push(Row {
                        project: hit.project.clone(),
                        session_id: hit.session_id.clone(),
                        info,
                        hit: Some(h),
                    });
                }
            }
        }
        self.rows = rows;
        self.selected = selected
            .and_then(|(p, s)| {
                self.rows
                    .iter()
                    .position(|r| r.project == p && r.session_id == s)
            })
            .unwrap_or(self.selected)
            .min(self.rows.len().saturating_sub(1));
    }

    /// The selected row.
    pub fn current(&self) -> Option<&Row> {
        self.rows.get(self.selected)
    }

    /// Whether the shown search hits are those of the typed words (else a search is due).
    pub fn searching(&self) -> bool {
        self.typed.search_text().is_some() && self.hits_text != self.typed.search_text()
    }

    /// Whether an answer of the reader is awaited, or a request is about to be due.
    pub fn awaiting(&self) -> bool {
        let row = self
            .current()
            .map(|r| (r.project.clone(), r.session_id.clone()));
        let previewed = self
            .preview
            .as_ref()
            .map(|p| (p.project.clone(), p.session_id.clone()));
        !self.pool_done || self.searching() || (row.is_some() && row != previewed)
    }

    /// Sends the requests that are due: a search once typing paused, a preview once the
    /// selection rested.
    pub fn tick(&mut self) {
        let text = self.typed.search_text();
        if text.is_some() && text != self.search_sent && self.typed_at.elapsed() >= SEARCH_PAUSE {
            self.search_sent = text.clone();
            let query = SearchQuery {
                text: text.unwrap_or_default(),
                tag: self.typed.filter.tag.clone(),
                ..SearchQuery::default()
            };
            let _ = self.requests.send(Request::Search { query });
        }
        let want = self
            .current()
            .map(|r| (r.project.clone(), r.session_id.clone()));
        if let Some((project, session_id)) = want.clone() {
            if want != self.preview_sent && self.moved_at.elapsed() >= PREVIEW_PAUSE {
                self.preview_sent = want;
                let _ = self.requests.send(Request::Preview {
                    project,
                    session_id,
                });
            }
        }
    }

    fn launch(&self, here: bool) -> Option<Outcome> {
        self.current().map(|r| Outcome::Launch {
            project: r.project.clone(),
            session_id: r.session_id.clone(),
            here,
        })
    }

    fn select(&mut self, at: usize) {
        let at = at.min(self.rows.len().saturating_sub(1));
        if at != self.selected {
            self.selected = at;
            self.moved_at = Instant::now();
        }
    }

    /// What a key does; `Some` when the picker is done.
    pub fn key(&mut self, key: KeyEvent, page: usize) -> Option<Outcome> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Some(Outcome::Quit),
            KeyCode::Char('c') if ctrl => return Some(Outcome::Quit),
            KeyCode::Enter => return self.launch(key.modifiers.contains(KeyModifiers::ALT)),
            KeyCode::Char('o') if ctrl => return self.launch(true),
            KeyCode::Up => self.select(self.selected.saturating_sub(1)),
            KeyCode::Char('p') if ctrl => self.select(self.selected.saturating_sub(1)),
            KeyCode::Down => self.select(self.selected + 1),
            KeyCode::Char('n') if ctrl => self.select(self.selected + 1),
            KeyCode::PageUp => self.select(self.selected.saturating_sub(page)),
            KeyCode::PageDown => self.select(self.selected + page),
            KeyCode::Home => self.select(0),
            KeyCode::End => self.select(usize::MAX),
            KeyCode::Backspace => {
                self.input.pop();
                self.retyped();
            }
            KeyCode::Char('u') if ctrl => {
                self.input.clear();
                self.retyped();
            }
            KeyCode::Char('w') if ctrl => {
                let kept = self.input.trim_end().rfind(' ').map_or(0, |at| at + 1);
                self.input.truncate(kept);
                self.retyped();
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => {
                self.input.push(c);
                self.retyped();
            }
            _ => {}
        }
        None
    }
}
