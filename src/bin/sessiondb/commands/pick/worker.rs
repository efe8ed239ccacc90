//! The picker's reader: a thread that owns the store and answers the screen's requests
//! (a page of the listing, a search, a preview), so that typing never waits for the
//! database. Only the newest request of each kind is answered; a listing comes in pages,
//! the first one small so that the first screen shows at once.

use sessiondb::query::{SessionFilter, SessionInfo};
use sessiondb::sdk::SessionMessage;
use sessiondb::search::{Hit, SearchQuery};
use sessiondb::SessionDb;
use std::sync::mpsc::{Receiver, Sender, TryRecvError};

/// The first page of a listing: what fills a screen.
const FIRST_PAGE: i64 = 100;
/// Later pages: big enough that 10,000 sessions take ten queries, small enough that a new
/// request waits for one page at most.
const PAGE: i64 = 1000;
/// At most this many search hits are asked for.
const SEARCH_HITS: i64 = 400;
/// The preview's messages: the last this many.
const PREVIEW_MESSAGES: i64 = 12;

/// What the screen asks for. `generation` tells answers to an older request apart.
pub enum Request {
    /// The sessions `filter` lists, newest first, in pages.
    List {
        filter: SessionFilter,
        generation: u64,
    },
    /// The search hits of `query` (its text is the key of the answer).
    Search { query: SearchQuery },
    /// The last messages of one session.
    Preview { project: String, session_id: String },
}

/// What the reader answers.
pub enum Reply {
    /// One more page of the listing of `generation`; `done` on its last.
    Page {
        generation: u64,
        sessions: Vec<SessionInfo>,
        done: bool,
    },
    /// The hits of the search for `text`.
    Hits { text: String, hits: Vec<Hit> },
    /// The last messages of a session.
    Preview {
        project: String,
        session_id: String,
        messages: Vec<SessionMessage>,
    },
    /// A request failed: what it was, and why.
    Failed { what: &'static str, error: String },
}

/// Starts the reader on `db`; it ends when the screen drops its sender.
pub fn start(db: SessionDb) -> (Sender<Request>, Receiver<Reply>) {
    let (requests, inbox) = std::sync::mpsc::channel();
    let (outbox, replies) = std::sync::mpsc::channel();
    std::thread::spawn(move || serve(&db, &inbox, &outbox));
    (requests, replies)
}

/// The requests waiting, the newest of each kind.
#[derive(Default)]
struct Work {
    /// The listing being loaded, and how far.
    list: Option<(SessionFilter, u64, i64)>,
    search: Option<SearchQuery>,
    preview: Option<(String, String)>,
}

impl Work {
    fn take(&mut self, request: Request) {
        match request {
            Request::List { filter, generation } => self.list = Some((filter, generation, 0)),
            Request::Search { query } => self.search = Some(query),
            Request::Preview {
                project,
                session_id,
            } => self.preview = Some((project, session_id)),
        }
    }

    fn is_empty(&self) -> bool {
        self.list.is_none() && self.search.is_none() && self.preview.is_none()
    }
}

fn serve(db: &SessionDb, inbox: &Receiver<Request>, outbox: &Sender<Reply>) {
    let mut work = Work::default();
    loop {
        if work.is_empty() {
            match inbox.recv() {
                Ok(request) => work.take(request),
                Err(_) => return,
            }
        }
        loop {
            match inbox.try_recv() {
                Ok(request) => work.take(request),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return,
            }
        }
        // The first page of a listing first (the screen is empty without it), then the
        // preview and the search, then the rest of the listing, a page at a time.
        let first_page = matches!(work.list, Some((_, _, 0)));
        let reply = if first_page || (work.preview.is_none() && work.search.is_none()) {
            work.list
                .clone()
                .map(|(filter, generation, _)| page(db, &filter, generation, &mut work))
        } else if let Some((project, session_id)) = work.preview.take() {
            Some(preview(db, project, session_id))
        } else {
            work.search.take().map(|query| search(db, query))
        };
        if let Some(reply) = reply {
            if outbox.send(reply).is_err() {
                return;
            }
        }
    }
}

/// The next page of the listing in `work`, which moves on (or ends) with it.
fn page(db: &SessionDb, filter: &SessionFilter, generation: u64, work: &mut Work) -> Reply {
    let offset = work.list.as_ref().map_or(0, |l| l.2);
    let size = if offset == 0 { FIRST_PAGE } else { PAGE };
    let mut paged = filter.clone();
    paged.limit = Some(size);
    paged.offset = Some(offset);
    match db.sessions(&paged) {
        Ok(sessions) => {
            let done = (sessions.len() as i64) < size;
            work.list = (!done).then(|| (filter.clone(), generation, offset + size));
            Reply::Page {
                generation,
                sessions,
                done,
            }
        }
        Err(e) => {
            work.list = None;
            Reply::Failed {
                what: "listing",
                error: e.to_string(),
            }
        }
    }
}

fn search(db: &SessionDb, mut query: SearchQuery) -> Reply {
    query.limit = Some(SEARCH_HITS);
    query.marks = Some((String::new(), String::new()));
    match db.search(&query) {
        Ok(found) => Reply::Hits {
            text: query.text,
            hits: found.hits,
        },
        Err(e) => Reply::Failed {
            what: "search",
            error: e.to_string(),
        },
    }
}

fn preview(db: &SessionDb, project: String, session_id: String) -> Reply {
    let read = || -> sessiondb::Result<Vec<SessionMessage>> {
        let session = db.db().find_exact_session(&project, &session_id)?;
        let count = db.db().session_info(&session, None)?.message_count;
        let offset = (count - PREVIEW_MESSAGES).max(0);
        let mut messages = db.db().session_messages(&session, None, offset)?;
        if messages.is_empty() && offset > 0 {
            // The catalog's count and the conversation's differ (a branched session).
            messages = db.db().session_messages(&session, None, 0)?;
        }
        let keep = messages.len().saturating_sub(PREVIEW_MESSAGES as usize);
        messages.drain(..keep);
        Ok(messages)
    };
    match read() {
        Ok(messages) => Reply::Preview {
            project,
            session_id,
            messages,
        },
        Err(e) => Reply::Failed {
            what: "preview",
            error: e.to_string(),
        },
    }
}
