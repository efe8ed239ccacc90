//! A stored transcript's conversation written as its rows are read (issue 28, item 8): the
//! session page's transcript view, a sub-agent's page and their live refresh hold a page of
//! rows and a piece of the conversation, not the session.
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
use super::render::{Rec, Renderer, Usage, CONVERSATION_END, CONVERSATION_START};
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
    /// The sub-agent whose transcript it is (`None`: the main one).
    agent: Option<String>,
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
        Outline::of(db, transcript, None)
    }

    /// Reads the transcript of `session`'s sub-agent `agent` once.
    ///
    /// # Errors
    /// [`Error::NotFound`] when that sub-agent is not stored.
    pub(super) fn read_agent(db: &Db, session: &SessionRef, agent: &str) -> Result<Outline, Error> {
        let transcript = db.transcript_id(session, Some(agent))?.ok_or_else(|| {
            Error::NotFound(format!(
                "no sub-agent {agent} in session {}",
                session.session_id
            ))
        })?;
        Outline::of(db, Some(transcript), Some(agent.to_owned()))
    }

    fn of(db: &Db, transcript: Option<i64>, agent: Option<String>) -> Result<Outline, Error> {
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
            agent,
            ordinals,
            starts: cuts.starts(),
        })
    }

    /// How many records it has.
    pub(super) fn len(&self) -> usize {
        self.ordinals.len()
    }

    /// Writes the conversation (as [`Renderer::all`] with `lazy` folds would) into `h`,
    /// handing what `h` holds to `send` after each piece (the last piece stays in `h`);
    /// answers its token totals.
    pub(super) fn write(
        &self,
        db: &Db,
        session: &SessionRef,
        agents: &HashSet<String>,
        h: &mut Html,
        send: &mut dyn FnMut(String) -> Result<(), Error>,
    ) -> Result<Usage, Error> {
        let mut total = Usage::default();
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
                        total.add(&self.render(session, agents, &std::mem::take(&mut piece), h));
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
        total.add(&self.render(session, agents, &piece, h));
        h.raw(CONVERSATION_END);
        Ok(total)
    }

    /// One piece of the conversation, its folds loaded when opened.
    fn render(
        &self,
        session: &SessionRef,
        agents: &HashSet<String>,
        piece: &[Rec],
        h: &mut Html,
    ) -> Usage {
        let mut renderer = Renderer::new(session, self.agent.as_deref(), piece, agents.clone());
        renderer.lazy = true;
        renderer.items(h)
    }
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
    /// session and sub-agent pages sent before they were streamed), and its totals.
    fn whole(
        db: &Db,
        session: &SessionRef,
        agent: Option<&str>,
        agents: &HashSet<String>,
    ) -> (String, String) {
        let lines = db
            .transcript_lines(session, agent)
            .expect("lines")
            .unwrap_or_default();
        let records: Vec<Rec> = lines.into_iter().map(Rec::from_line).collect();
        let mut renderer = Renderer::new(session, agent, &records, agents.clone());
        renderer.lazy = true;
        let mut h = Html::new();
        let total = renderer.all(&mut h);
        let mut t = Html::new();
        total.write(&mut t);
        (h.into_string(), t.into_string())
    }

    /// [`Outline::write`]: the conversation and its totals, and the pieces it was sent in.
    fn streamed(
        db: &Db,
        session: &SessionRef,
        outline: &Outline,
        agents: &HashSet<String>,
    ) -> ((String, String), usize) {
        let mut sent = Vec::new();
        let mut h = Html::new();
        let total = outline
            .write(db, session, agents, &mut h, &mut |piece| {
                sent.push(piece);
                Ok(())
            })
            .expect("write");
        let mut t = Html::new();
        total.write(&mut t);
        let pieces = sent.len() + 1;
        ((sent.concat() + &h.into_string(), t.into_string()), pieces)
    }

    /// Every session and sub-agent of the corpus: the conversation written piece by piece,
    /// a page of rows at a time, is byte for byte the one written whole, with the same
    /// totals; the larger sessions are cut into many pieces.
    #[test]
    #[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
    fn every_corpus_conversation_streams_as_it_renders_whole() {
        let corpus =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/claude-code");
        assert!(corpus.is_dir(), "../shared is missing");
        let dir = tempfile::tempdir().expect("tempdir");
        // The corpus's sub-agent transcripts are files of their own there: here they are
        // also a session's sub-agents (with the largest transcript as one more).
        let mut files: Vec<_> = std::fs::read_dir(&corpus)
            .expect("corpus")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort_by_key(|p| std::fs::metadata(p).expect("size").len());
        let tree = dir.path().join("tree").join("-agents");
        let host = "66666666-6666-4666-8666-666666666666";
        std::fs::create_dir_all(tree.join(host).join("subagents")).expect("tree");
        let prompt = serde_json::json!({"type": "user", "uuid": "u1", "parentUuid": null,
            "sessionId": host, "timestamp": "2026-12-01T10:00:00.000Z",
            "message": {"role": "user", "content": "start the agents"}});
        std::fs::write(tree.join(format!("{host}.jsonl")), format!("{prompt}\n")).expect("write");
        let name =
            |p: &std::path::Path| p.file_name().expect("name").to_string_lossy().into_owned();
        let largest = files.last().expect("a corpus file");
        for (n, file) in files.iter().enumerate() {
            if name(file).contains("agent") || file == largest {
                let to = tree
                    .join(host)
                    .join("subagents")
                    .join(format!("agent-a{n:016x}.jsonl"));
                std::fs::copy(file, to).expect("copy");
            }
        }
        let store = crate::Store::open(dir.path().join("db.sqlite")).expect("store");
        crate::import::import_paths(
            &store,
            &[corpus, dir.path().join("tree")],
            &crate::model::NoProgress,
        )
        .expect("import the corpus");
        let db = Db::from(store);
        let sessions = db
            .list_sessions(&SessionFilter::default())
            .expect("sessions");
        let (mut compared, mut agents_compared, mut largest_pieces, mut largest) = (0, 0, 0, 0);
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
            let (got, pieces) = streamed(&db, &session, &outline, &agents);
            assert_eq!(
                got,
                whole(&db, &session, None, &agents),
                "{}",
                info.session_id
            );
            for agent in &agents {
                let outline = Outline::read_agent(&db, &session, agent).expect("outline");
                let (got, _) = streamed(&db, &session, &outline, &agents);
                let want = whole(&db, &session, Some(agent), &agents);
                assert_eq!(got, want, "{} agent {agent}", info.session_id);
                agents_compared += 1;
            }
            compared += 1;
            if info.file_size > largest {
                largest = info.file_size;
                largest_pieces = pieces;
            }
        }
        assert!(compared >= 20, "only {compared} sessions compared");
        assert!(
            agents_compared >= 3,
            "only {agents_compared} sub-agents compared"
        );
        assert!(
            largest > 1_000_000 && largest_pieces > 10,
            "the largest session ({largest} bytes) came in {largest_pieces} pieces"
        );
    }
}
