//! A stored transcript's conversation written as its rows are read (issue 28, item 8): the
//! session page's transcript view and its live refresh hold a page of rows and a piece of
//! the conversation, not the session.
//!
//! The transcript is read twice, a page of rows at a time: first for the ties between its
//! records ([`Cuts`]: ids and positions only), then again to write it, piece by piece, each
//! piece by its own renderer ([`super::render::cuts`] says why the bytes are those of one
//! renderer over the whole). The first reading ends before anything is sent, so a missing
//! or unreadable transcript is still an error page. Records appended between the readings
//! are left for the page's live refresh; a transcript that changed otherwise cuts the
//! transfer ([`crate::serve::stream`]).

use super::html::Html;
use super::render::cuts::Cuts;
use super::render::{Rec, Renderer, CONVERSATION_END, CONVERSATION_START};
use crate::backend::Db;
use crate::error::Error;
use crate::model::SessionRef;
use crate::query::StoredLine;
use std::collections::HashSet;

/// Rows read at a time.
const ROWS: usize = 64;

/// A transcript's records as the first reading found them.
pub(super) struct Outline {
    transcript: Option<i64>,
    /// Each record's line number.
    ordinals: Vec<i64>,
    /// Where pieces may start ([`Cuts::starts`]).
    starts: Vec<bool>,
}

impl Outline {
    /// Reads the main transcript of `session` once (`None`: it has none, the conversation
    /// is empty).
    pub(super) fn read(db: &Db, session: &SessionRef) -> Result<Outline, Error> {
        let transcript = db.transcript_id(session, None)?;
        let mut ordinals = Vec::new();
        let mut cuts = Cuts::default();
        if let Some(t) = transcript {
            each_page(db, t, usize::MAX, |lines| {
                for line in lines {
                    ordinals.push(line.ordinal);
                    cuts.see(&Rec::from_line(line));
                }
                Ok(())
            })?;
        }
        Ok(Outline {
            transcript,
            ordinals,
            starts: cuts.starts(),
        })
    }

    /// Writes the conversation (as [`Renderer::all`] with `lazy` folds would) into `h`,
    /// handing what `h` holds to `send` after each piece (the last piece stays in `h`).
    pub(super) fn write(
        &self,
        db: &Db,
        session: &SessionRef,
        agents: &HashSet<String>,
        h: &mut Html,
        send: &mut dyn FnMut(String) -> Result<(), Error>,
    ) -> Result<(), Error> {
        h.raw(CONVERSATION_START);
        let mut piece: Vec<Rec> = Vec::new();
        let mut at = 0;
        if let Some(t) = self.transcript {
            each_page(db, t, self.ordinals.len(), |lines| {
                for line in lines {
                    if self.ordinals.get(at) != Some(&line.ordinal) {
                        return Err(Error::NotFound(format!(
                            "session {} changed while its page was sent",
                            session.session_id
                        )));
                    }
                    if self.starts[at] && !piece.is_empty() {
                        render(session, agents, &std::mem::take(&mut piece), h);
                        send(h.take())?;
                    }
                    piece.push(Rec::from_line(line));
                    at += 1;
                }
                Ok(())
            })?;
        }
        if at < self.ordinals.len() {
            return Err(Error::NotFound(format!(
                "session {} lost lines while its page was sent",
                session.session_id
            )));
        }
        render(session, agents, &piece, h);
        h.raw(CONVERSATION_END);
        Ok(())
    }
}

/// One piece of the conversation, its folds loaded when opened.
fn render(session: &SessionRef, agents: &HashSet<String>, piece: &[Rec], h: &mut Html) {
    let mut renderer = Renderer::new(session, None, piece, agents.clone());
    renderer.lazy = true;
    renderer.items(h);
}

/// Hands the first `most` lines of transcript `t` to `each`, [`ROWS`] at a time.
fn each_page(
    db: &Db,
    t: i64,
    most: usize,
    mut each: impl FnMut(Vec<StoredLine>) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut after = -1;
    let mut left = most;
    while left > 0 {
        let lines = db.transcript_page(t, after, ROWS.min(left))?;
        let Some(last) = lines.last() else { break };
        after = last.ordinal;
        left -= lines.len();
        let full = lines.len() == ROWS;
        each(lines)?;
        if !full {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::SessionFilter;

    /// The conversation as one renderer over the whole transcript writes it (what the
    /// session page sent before it was streamed).
    fn whole(db: &Db, session: &SessionRef, agents: &HashSet<String>) -> String {
        let lines = db
            .transcript_lines(session, None)
            .expect("lines")
            .unwrap_or_default();
        let records: Vec<Rec> = lines.into_iter().map(Rec::from_line).collect();
        let mut renderer = Renderer::new(session, None, &records, agents.clone());
        renderer.lazy = true;
        let mut h = Html::new();
        renderer.all(&mut h);
        h.into_string()
    }

    /// Every session of the corpus: the conversation written piece by piece, a page of
    /// rows at a time, is byte for byte the one written whole; the larger sessions are cut
    /// into many pieces.
    #[test]
    #[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
    fn every_corpus_conversation_streams_as_it_renders_whole() {
        let corpus =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/claude-code");
        assert!(corpus.is_dir(), "../shared is missing");
        let dir = tempfile::tempdir().expect("tempdir");
        let store = crate::Store::open(dir.path().join("db.sqlite")).expect("store");
        crate::import::import_paths(&store, &[corpus], &crate::model::NoProgress)
            .expect("import the corpus");
        let db = Db::Sqlite(store);
        let sessions = db
            .list_sessions(&SessionFilter::default())
            .expect("sessions");
        let (mut compared, mut largest_pieces, mut largest) = (0, 0, 0);
        for info in sessions {
            let session = db
                .find_exact_session(&info.project, &info.session_id)
                .expect("session");
            let agents: HashSet<String> = db
                .list_subagents(&session)
                .expect("agents")
                .into_iter()
                .collect();
            let outline = Outline::read(&db, &session).expect("outline");
            let mut sent = Vec::new();
            let mut h = Html::new();
            outline
                .write(&db, &session, &agents, &mut h, &mut |piece| {
                    sent.push(piece);
                    Ok(())
                })
                .expect("write");
            let streamed = sent.concat() + &h.into_string();
            assert_eq!(
                streamed,
                whole(&db, &session, &agents),
                "{}",
                info.session_id
            );
            compared += 1;
            if info.file_size > largest {
                largest = info.file_size;
                largest_pieces = sent.len() + 1;
            }
        }
        assert!(compared >= 20, "only {compared} sessions compared");
        assert!(
            largest > 1_000_000 && largest_pieces > 10,
            "the largest session ({largest} bytes) came in {largest_pieces} pieces"
        );
    }
}
