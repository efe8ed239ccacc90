//! A narrowed search (the MCP `find` tool's filters: branch, host, times, sub-agents, the
//! calling session) answers exactly what the whole search answers with those hits left
//! out, in the same order and up to the limit, on every backend: the filters are applied
//! while the hits are ranked, so a selective one must neither drop a hit that exists nor
//! keep one it should not.

use crate::conformance::backends;
use crate::support::{corpus_files, shared_dir};
use sessiondb::model::NoProgress;
use sessiondb::query::SessionFilter;
use sessiondb::search::{Hit, Narrowing, SearchQuery};
use sessiondb::time::parse_iso8601_ms;
use std::collections::HashMap;

/// Branch and last change of each session, by project and id.
type Sessions = HashMap<(String, String), (Option<String>, i64)>;

/// The first `limit` hits of `all` that `n` keeps, by the catalog's branch and last change
/// of their sessions: the rule written once more, apart from the code under test.
fn reference(n: &Narrowing, all: &[Hit], sessions: &Sessions, limit: usize) -> Vec<Hit> {
    all.iter()
        .filter(|h| {
            let (branch, last_modified) = sessions
                .get(&(h.project.clone(), h.session_id.clone()))
                .cloned()
                .unwrap_or((None, 0));
            let when = h
                .timestamp
                .as_deref()
                .and_then(parse_iso8601_ms)
                .unwrap_or(last_modified);
            !(n.main_only && h.agent_id.is_some())
                && n.without_session.as_deref() != Some(h.session_id.as_str())
                && n.branch.as_ref().is_none_or(|b| branch.as_ref() == Some(b))
                && n.since.is_none_or(|s| when >= s)
                && n.until.is_none_or(|u| when <= u)
        })
        .take(limit)
        .cloned()
        .collect()
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
pub fn narrowed_searches_answer_as_the_whole_search_filtered_on_every_backend() {
    let Some(shared) = shared_dir("the narrowed search") else {
        return;
    };
    let files = corpus_files(&shared);
    for b in backends("narrowed_searches_answer_as_the_whole_search_filtered_on_every_backend") {
        b.db.import_paths(&files, &NoProgress)
            .unwrap_or_else(|e| panic!("{}: import: {e}", b.name));
        let listed =
            b.db.list_sessions(&SessionFilter {
                include_hidden: true,
                ..SessionFilter::default()
            })
            .expect("list");
        let sessions: Sessions = listed
            .iter()
            .map(|s| {
                (
                    (s.project.clone(), s.session_id.clone()),
                    (s.git_branch.clone(), s.last_modified),
                )
            })
            .collect();
        // The most common branch: selective, and with enough hits to fill a page.
        let mut branches: HashMap<&str, usize> = HashMap::new();
        for s in &listed {
            if let Some(branch) = s.git_branch.as_deref() {
                *branches.entry(branch).or_default() += 1;
            }
        }
        let branch = branches
            .iter()
            .max_by_key(|(b, n)| (**n, std::cmp::Reverse(**b)))
            .map(|(b, _)| (*b).to_owned())
            .expect("the corpus records branches");
        for (text, tools) in [("test", false), ("error", true)] {
            let whole = SearchQuery {
                text: text.to_owned(),
                tools,
                limit: Some(1_000_000),
                ..SearchQuery::default()
            };
            let (all, _) = b.db.search(&whole).expect("search");
            assert!(all.len() > 100, "{}: {text:?} finds {}", b.name, all.len());
            let mut times: Vec<i64> = all
                .iter()
                .filter_map(|h| h.timestamp.as_deref().and_then(parse_iso8601_ms))
                .collect();
            times.sort_unstable();
            let (early, late) = (times[times.len() / 3], times[2 * times.len() / 3]);
            let narrowings = [
                Narrowing {
                    main_only: true,
                    ..Narrowing::default()
                },
                Narrowing {
                    branch: Some(branch.clone()),
                    ..Narrowing::default()
                },
                Narrowing {
                    since: Some(late),
                    ..Narrowing::default()
                },
                Narrowing {
                    since: Some(early),
                    until: Some(late),
                    main_only: true,
                    ..Narrowing::default()
                },
                Narrowing {
                    branch: Some(branch.clone()),
                    since: Some(early),
                    without_session: Some(all[0].session_id.clone()),
                    ..Narrowing::default()
                },
                Narrowing {
                    branch: Some("no-such-branch".to_owned()),
                    ..Narrowing::default()
                },
            ];
            for n in &narrowings {
                for limit in [1, 21, 1_000_000] {
                    let q = SearchQuery {
                        limit: Some(limit),
                        ..whole.clone()
                    };
                    let (got, _) = b.db.search_narrowed(&q, n).expect("narrowed search");
                    let want = reference(n, &all, &sessions, limit as usize);
                    assert_eq!(
                        got.iter()
                            .map(|h| (&h.session_id, &h.uuid))
                            .collect::<Vec<_>>(),
                        want.iter()
                            .map(|h| (&h.session_id, &h.uuid))
                            .collect::<Vec<_>>(),
                        "{}: {text:?} tools {tools}, {n:?}, limit {limit}",
                        b.name
                    );
                    assert_eq!(got, want, "{}: {text:?}, {n:?}, limit {limit}", b.name);
                }
            }
            // Some narrowing drops hits and some keeps a full page, or the test says little.
            let (on_branch, _) =
                b.db.search_narrowed(&whole, &narrowings[1])
                    .expect("narrowed search");
            assert!(
                on_branch.len() >= 21 && on_branch.len() < all.len(),
                "{}: {text:?}: {} of {} hits on {branch}",
                b.name,
                on_branch.len(),
                all.len()
            );
            // A host no session came from: nothing (a SQLite store records no host).
            let elsewhere = Narrowing {
                host: Some("no-such-host.example".to_owned()),
                ..Narrowing::default()
            };
            assert!(b
                .db
                .search_narrowed(&whole, &elsewhere)
                .expect("host")
                .0
                .is_empty());
        }
    }
}

/// The lines that name a phrase (the MCP `files` tool's walk) are the lines a search with
/// tool text finds, newest stored first, the cap keeping the newest, on every backend.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
pub fn mentions_are_the_lines_a_search_finds_newest_first_on_every_backend() {
    let Some(shared) = shared_dir("the mentions walk") else {
        return;
    };
    let files = corpus_files(&shared);
    for b in backends("mentions_are_the_lines_a_search_finds_newest_first_on_every_backend") {
        b.db.import_paths(&files, &NoProgress)
            .unwrap_or_else(|e| panic!("{}: import: {e}", b.name));
        for text in ["README.md", "package.json", "CLAUDE.md"] {
            let all = b.db.mentions(text, None, 1_000_000).expect("mentions");
            assert!(
                all.len() > 20,
                "{}: {text:?} is named {} times",
                b.name,
                all.len()
            );
            assert!(
                all.windows(2).all(|w| w[0].line > w[1].line),
                "{}: newest first",
                b.name
            );
            let (hits, _) =
                b.db.search(&SearchQuery {
                    text: text.to_owned(),
                    tools: true,
                    limit: Some(1_000_000),
                    ..SearchQuery::default()
                })
                .expect("search");
            let mut want: Vec<(String, Option<String>)> = hits
                .into_iter()
                .filter(|h| h.role != sessiondb::search::TITLE_ROLE)
                .map(|h| (h.session_id, h.uuid))
                .collect();
            let mut got: Vec<(String, Option<String>)> = all
                .iter()
                .map(|m| (m.session_id.clone(), m.uuid.clone()))
                .collect();
            want.sort();
            got.sort();
            assert_eq!(got, want, "{}: {text:?}", b.name);
            let newest = b.db.mentions(text, None, 7).expect("capped");
            assert_eq!(newest, all[..7], "{}: {text:?}", b.name);
            let project = &all[0].project;
            let within =
                b.db.mentions(text, Some(project), 1_000_000)
                    .expect("project");
            assert_eq!(
                within,
                all.iter()
                    .filter(|m| &m.project == project)
                    .cloned()
                    .collect::<Vec<_>>()
            );
            assert!(b
                .db
                .mentions(text, Some("-no-such-project"), 10)
                .expect("none")
                .is_empty());
        }
    }
}
