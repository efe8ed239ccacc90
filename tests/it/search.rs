//! Full-text search over hand-made sessions: what is indexed, ranking, snippets, filters,
//! incremental upkeep on import/append/delete, `reindex`, and hostile queries.

use crate::support;
use serde_json::{json, Value};
use sessiondb::search::{self, SearchQuery};
use sessiondb::{metadata, query, Store};
use std::path::Path;

fn user(uuid: &str, parent: Option<&str>, text: &str) -> Value {
    json!({"type":"user","uuid":uuid,"parentUuid":parent,"sessionId":"s","timestamp":format!("2026-01-01T00:00:0{}Z", uuid.len() % 10),
           "message":{"role":"user","content":text}})
}

fn assistant(uuid: &str, parent: &str, blocks: Value) -> Value {
    json!({"type":"assistant","uuid":uuid,"parentUuid":parent,"sessionId":"s","timestamp":"2026-01-01T00:00:09Z",
           "message":{"id":format!("msg-{uuid}"),"role":"assistant","content":blocks}})
}

fn write_session(project: &Path, sid: &str, records: &[Value]) {
    std::fs::create_dir_all(project).expect("mkdir");
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(project.join(format!("{sid}.jsonl")), text).expect("write");
}

const A: &str = "aaaaaaaa-0000-4000-8000-000000000001";
const B: &str = "bbbbbbbb-0000-4000-8000-000000000002";
const C: &str = "cccccccc-0000-4000-8000-000000000003";

/// Three sessions with known text, imported into a fresh store.
fn corpus() -> (tempfile::TempDir, Store) {
    let (dir, store) = support::temp_store();
    let project = dir.path().join("projects/-work-demo");
    write_session(
        &project,
        A,
        &[
            user("a1", None, "How do I configure the flux capacitor?"),
            assistant(
                "a2",
                "a1",
                json!([{"type":"thinking","thinking":"secret musings"},
                       {"type":"text","text":"Set the flux capacitor to 1.21 gigawatts."}]),
            ),
        ],
    );
    write_session(
        &project,
        B,
        &[
            user("b1", None, "flux flux flux capacitor"),
            assistant(
                "b2",
                "b1",
                json!([{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"launch zeppelin"}}]),
            ),
            json!({"type":"user","uuid":"b3","parentUuid":"b2","sessionId":"s",
                   "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1",
                              "content":"the dirigible has landed"}]}}),
            json!({"type":"user","uuid":"b4","parentUuid":"b3","isMeta":true,"sessionId":"s",
                   "message":{"role":"user","content":"meta caveat about flux"}}),
        ],
    );
    write_session(
        &project,
        C,
        &[user("c1", None, "Un café crème, s'il vous plaît 😀")],
    );
    support::import(&store, &[dir.path().join("projects").as_path()]);
    (dir, store)
}

fn run(store: &Store, q: SearchQuery) -> Vec<search::Hit> {
    search::search(&store.reader().expect("reader"), &q).expect("search never fails")
}

fn text(t: &str) -> SearchQuery {
    SearchQuery {
        text: t.to_owned(),
        ..SearchQuery::default()
    }
}

fn uuids(hits: &[search::Hit]) -> Vec<&str> {
    hits.iter().filter_map(|h| h.uuid.as_deref()).collect()
}

#[test]
fn ranks_by_bm25_with_marked_snippets() {
    let (_dir, store) = corpus();
    let hits = run(&store, text("flux capacitor"));
    assert_eq!(uuids(&hits), ["b1", "a1", "a2"], "{hits:#?}");
    assert!(hits.windows(2).all(|w| w[0].rank <= w[1].rank));
    assert_eq!(hits[0].snippet, "**flux** **flux** **flux** **capacitor**");
    assert!(hits[1].snippet.contains("the **flux** **capacitor**?"));
    assert_eq!(hits[0].session_id, B);
    assert_eq!(hits[0].role, "user");
    assert_eq!(hits[0].title.as_deref(), Some("flux flux flux capacitor"));
    // Thinking and meta records are not indexed.
    assert!(run(&store, text("musings")).is_empty());
    assert!(run(&store, text("caveat")).is_empty());
}

#[test]
fn filters_by_role_project_tag_and_tools() {
    let (_dir, store) = corpus();
    let role = |r: &str| SearchQuery {
        role: Some(r.to_owned()),
        ..text("flux")
    };
    assert_eq!(uuids(&run(&store, role("assistant"))), ["a2"]);
    assert_eq!(uuids(&run(&store, role("user"))), ["b1", "a1"]);
    assert!(run(&store, text("zeppelin")).is_empty());
    assert!(run(&store, text("dirigible")).is_empty());
    let tools = |t: &str| SearchQuery {
        tools: true,
        ..text(t)
    };
    assert_eq!(uuids(&run(&store, tools("zeppelin"))), ["b2"]);
    assert_eq!(uuids(&run(&store, tools("dirigible landed"))), ["b3"]);
    let other = SearchQuery {
        project: Some("-elsewhere".into()),
        ..text("flux")
    };
    assert!(run(&store, other).is_empty());
    let session = query::resolve_session(&store.reader().expect("r"), A).expect("A");
    metadata::tag_session(&store, &session, Some("physics")).expect("tag");
    let tagged = SearchQuery {
        tag: Some("physics".into()),
        ..text("flux")
    };
    assert_eq!(uuids(&run(&store, tagged)), ["a1", "a2"]);
    let limited = SearchQuery {
        limit: Some(1),
        ..text("flux")
    };
    assert_eq!(run(&store, limited).len(), 1);
}

#[test]
fn diacritics_fold() {
    let (_dir, store) = corpus();
    assert_eq!(uuids(&run(&store, text("cafe"))), ["c1"]);
    assert_eq!(uuids(&run(&store, text("CRÈME"))), ["c1"]);
}

#[test]
fn hostile_queries_never_fail() {
    let (_dir, store) = corpus();
    let long = "flux ".repeat(2048);
    let hostile = [
        "\"",
        "\"\"",
        "*",
        "flux*",
        "NEAR(",
        "NEAR(flux capacitor, 2)",
        "-",
        "-flux",
        "a",
        "ab",
        "😀",
        "AND",
        "OR flux",
        "NOT",
        "flux AND",
        "(",
        ")",
        "{body}: flux",
        "tools:flux",
        "^flux",
        "'; DROP TABLE rows; --",
        "%_\\",
        "\u{0}",
        "s'il",
        long.as_str(),
    ];
    for q in hostile {
        let hits = search::search(&store.reader().expect("reader"), &text(q));
        assert!(hits.is_ok(), "{q:?}: {hits:?}");
        let with_tools = SearchQuery {
            tools: true,
            ..text(q)
        };
        assert!(search::search(&store.reader().expect("reader"), &with_tools).is_ok());
    }
    // Operators are words, not syntax: "flux AND" needs the word "and".
    assert!(run(&store, text("flux AND")).is_empty());
    assert_eq!(run(&store, text("-flux")).len(), 3);
    assert_eq!(run(&store, text(&long)).len(), 3);
    assert!(run(&store, text("a")).is_empty());
    assert!(run(&store, text("😀")).is_empty());
    // 10 KB of text from the corpus is a legal query too.
    let ten_kb = "How do I configure the flux capacitor? ".repeat(260);
    assert!(ten_kb.len() > 10_000);
    assert!(search::search(&store.reader().expect("reader"), &text(&ten_kb)).is_ok());
}

#[test]
fn index_follows_appends_deletes_and_reindex() {
    let (dir, store) = corpus();
    let file = dir.path().join(format!("projects/-work-demo/{A}.jsonl"));
    let mut text_now = std::fs::read_to_string(&file).expect("read");
    text_now.push_str(&format!(
        "{}\n",
        user("a3", Some("a2"), "what about the hoverboard")
    ));
    std::fs::write(&file, text_now).expect("append");
    assert!(run(&store, text("hoverboard")).is_empty());
    support::import(&store, &[dir.path().join("projects").as_path()]);
    assert_eq!(uuids(&run(&store, text("hoverboard"))), ["a3"]);

    let before = run(&store, text("flux"));
    let report = search::reindex(&store).expect("reindex");
    assert_eq!(report.sessions, 3);
    assert_eq!(run(&store, text("flux")), before);
    store
        .write(|tx| {
            tx.execute(
                "INSERT INTO rows_fts (rows_fts) VALUES ('integrity-check')",
                [],
            )?;
            Ok(())
        })
        .expect("index is consistent");

    let session = query::resolve_session(&store.reader().expect("r"), B).expect("B");
    metadata::delete_session(&store, &session).expect("delete");
    assert_eq!(uuids(&run(&store, text("flux"))), ["a1", "a2"]);
    store
        .write(|tx| {
            tx.execute(
                "INSERT INTO rows_fts (rows_fts) VALUES ('integrity-check')",
                [],
            )?;
            Ok(())
        })
        .expect("index is consistent after delete");
}

/// A line queued for the index and removed before the queue is indexed never reaches the
/// index, and the index stays consistent.
#[test]
fn queued_lines_removed_before_indexing_leave_no_trace() {
    let (_dir, store) = corpus();
    store
        .write(|tx| {
            let transcript: i64 =
                tx.query_row("SELECT min(id) FROM transcripts", [], |r| r.get(0))?;
            tx.execute(
                "INSERT INTO rows (transcript_id, ordinal, raw, type, status)
                 VALUES (?1, 1000, ?2, 'user', 0)",
                rusqlite::params![
                    transcript,
                    br#"{"type":"user","message":{"content":"ephemeral words"}}"#.to_vec()
                ],
            )?;
            tx.execute("DELETE FROM rows WHERE ordinal = 1000", [])?;
            sessiondb::search::index_pending(tx)?;
            tx.execute(
                "INSERT INTO rows_fts (rows_fts) VALUES ('integrity-check')",
                [],
            )?;
            Ok(())
        })
        .expect("consistent");
    assert!(run(&store, text("ephemeral")).is_empty());
    let pending: i64 = store
        .reader()
        .expect("r")
        .query_row("SELECT count(*) FROM search_pending", [], |r| r.get(0))
        .expect("count");
    assert_eq!(pending, 0);
}

/// Lines written through the record API wait in the queue; the next search (after
/// `catch_up`, as the CLI does) finds them.
#[test]
fn appended_lines_are_found_by_the_next_search() {
    let (_dir, store) = corpus();
    let session = query::resolve_session(&store.reader().expect("r"), A).expect("A");
    store
        .append(&session, &[user("a9", None, "the zeppelin manifest")])
        .expect("append");
    assert!(run(&store, text("zeppelin")).is_empty(), "still queued");
    assert_eq!(search::catch_up(&store).expect("catch up"), 1);
    assert_eq!(uuids(&run(&store, text("zeppelin"))), ["a9"]);
    assert_eq!(search::catch_up(&store).expect("nothing left"), 0);
}

/// Every indexable row's text as the `search_source` view computes it, beside what
/// `jsonl::search_text` computes from the stored bytes: they must be identical wherever
/// the Rust side answers (import indexes that text, and deletes go through the view).
/// Returns (rows compared, rows left to the view).
fn compare_text_with_view(store: &Store) -> (usize, usize) {
    let reader = store.reader().expect("r");
    let mut stmt = reader
        .prepare(
            "SELECT r.id, line(r.raw, r.dict), s.id, CAST(s.body AS BLOB), CAST(s.tools AS BLOB) FROM rows r
             LEFT JOIN search_source s ON s.id = r.id
             WHERE r.type IN ('user', 'assistant') AND r.status = 0 AND r.is_meta = 0",
        )
        .expect("prepare");
    type Row = (i64, Vec<u8>, Option<i64>, Option<Vec<u8>>, Option<Vec<u8>>);
    let rows: Vec<Row> = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .expect("query")
        .collect::<rusqlite::Result<_>>()
        .expect("rows");
    let (mut same, mut left) = (0, 0);
    for (id, raw, in_view, body, tools) in rows {
        match sessiondb::jsonl::search_text(&raw) {
            Some(text) => {
                assert!(in_view.is_some(), "row {id} is not in the view");
                let bytes = |s: Option<String>| s.map(String::into_bytes);
                assert_eq!(bytes(text.body), body, "body of row {id}");
                assert_eq!(bytes(text.tools), tools, "tools of row {id}");
                same += 1;
            }
            None => left += 1,
        }
    }
    (same, left)
}

/// The Rust extraction gives exactly the view's text on the whole corpus and on odd lines.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn rust_search_text_equals_the_view() {
    let (dir, store) = support::temp_store();
    let project = dir.path().join("projects/-work-odd");
    let odd = [
        r#"{"type":"user","message":{"content":"plain"}}"#,
        r#"{"type":"user","message":{"content":""}}"#,
        r#"{"type":"user","message":{"content":[]}}"#,
        r#"{"type":"user","message":{"content":[{"type":"text","text":""}]}}"#,
        r#"{"type":"user","message":{"content":[{"type":"text","text":""},{"type":"text","text":"b"}]}}"#,
        r#"{"type":"user","message":{"content":[{"type":"text"},{"type":"text","text":null},"x",3,{"type":"text","text":"a\nb \"q\" \u00e9\ud83d\ude00"}]}}"#,
        r#"{"type":"user","message":{"content":[{"type":"text","text":5}]}}"#,
        r#"{"type":"user","message":{"content":[{"type":"te\u0078t","text":"esc"}]}}"#,
        r#"{"type":"user","message":{"content":{"a":1}}}"#,
        r#"{"type":"user","message":"str"}"#,
        r#"{"type":"user","message":{"content":"one","content":"two"}}"#,
        r#"{"type":"user","message":{"content":"a\u0000b"}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"ls -la","n":1.50,"e":"\"\\\/\u0001","a":[1, 2, {"x" : null}]}}]}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","input":"just text"},{"type":"tool_use","name":null},{"type":"tool_use","name":"X","input":[]}]}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"X","input":7}]}}"#,
        r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"out"},{"type":"tool_result","content":[{"type":"text","text":"a"},{"type":"image"},{"text":"c"},"s",{"text":null}]},{"type":"tool_result","content":[]},{"type":"tool_result"},{"type":"tool_result","content":{"text":"x"}}]}}"#,
        r#"{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"image"}]},{"type":"text","text":"t"}]}}"#,
        r#"{"type":"user","message":{"content":[{"type":"tool_result","content":""}]}}"#,
        r#"{"type":"user", "message": {"content": [ {"type": "text", "text": "spaced"} ]} }"#,
        "\u{feff}{\"type\":\"user\",\"message\":{\"content\":\"bom\"}}",
        "{\"type\":\"user\",\"message\":{\"content\":\"cr\"}}\r",
        r#"{"type":"user","message":{"content":"lone \ud800 surrogate"}}"#,
    ];
    std::fs::create_dir_all(&project).expect("mkdir");
    let lines: String = odd.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(project.join(format!("{A}.jsonl")), lines).expect("write");
    support::import(&store, &[dir.path().join("projects").as_path()]);
    let (same, left) = compare_text_with_view(&store);
    assert!(
        same >= 14 && left == 8,
        "{same} compared, {left} left to the view"
    );
    // The lines left to the view are indexed from it.
    assert_index_consistent(&store);
    assert_eq!(run(&store, text("esc")).len(), 1);

    let Some(shared) = support::shared_dir("the corpus search text comparison") else {
        return;
    };
    let (_dir, store) = support::temp_store();
    support::import(&store, &[shared.join("corpus/claude-code").as_path()]);
    let (same, left) = compare_text_with_view(&store);
    eprintln!("corpus: {same} rows identical, {left} left to the view");
    assert!(
        same > 1000 && left * 100 < same,
        "{same} compared, {left} left"
    );
    // Indexed from Rust, taken out through the view: the index stays consistent.
    assert_index_consistent(&store);
    let sessions: Vec<String> = store
        .reader()
        .expect("r")
        .prepare("SELECT session_id FROM sessions ORDER BY id")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<rusqlite::Result<_>>()
        .expect("sessions");
    for sid in sessions.iter().step_by(2) {
        let session = query::resolve_session(&store.reader().expect("r"), sid).expect("session");
        metadata::delete_session(&store, &session).expect("delete");
    }
    assert_index_consistent(&store);
    search::reindex(&store).expect("reindex");
    assert_index_consistent(&store);
}

/// FTS5's own check of the index against the `search_source` view, and an empty queue.
fn assert_index_consistent(store: &Store) {
    store
        .write(|tx| {
            tx.execute(
                "INSERT INTO rows_fts (rows_fts) VALUES ('integrity-check')",
                [],
            )?;
            Ok(())
        })
        .expect("index is consistent");
    assert_eq!(support::count(store, "search_pending"), 0);
}

/// An import killed with SIGKILL at several stages (see `support::KILL_POINTS`) leaves rows
/// and index consistent: the next search catches up on the queue, and FTS5's integrity check
/// passes.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn a_killed_import_leaves_the_index_consistent() {
    let Some(shared) = support::shared_dir("the killed-import test") else {
        return;
    };
    let corpus = shared.join("corpus/claude-code");
    let mut killed = 0;
    for wal_bytes in support::KILL_POINTS {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("s.db");
        killed += usize::from(support::import_killed_at(&db, &corpus, wal_bytes));
        if !db.exists() {
            continue;
        }
        let store = Store::open(&db).expect("open after kill");
        search::catch_up(&store).expect("catch up");
        assert_index_consistent(&store);
        let (same, _) = compare_text_with_view(&store);
        let rows = support::count(&store, "rows");
        assert!(
            rows == 0 || same > 0 || rows < 100,
            "{rows} rows, {same} compared"
        );
    }
    assert!(killed > 0, "no import was killed before it ended");
}

/// A line with a lone surrogate escape is found, and its snippet is readable.
#[test]
fn a_lone_surrogate_does_not_break_a_search() {
    let (dir, store) = support::temp_store();
    let project = dir.path().join("projects/-work-odd");
    std::fs::create_dir_all(&project).expect("mkdir");
    std::fs::write(
        project.join("cccccccc-0000-4000-8000-000000000003.jsonl"),
        "{\"type\":\"user\",\"uuid\":\"s1\",\"parentUuid\":null,\"message\":{\"role\":\"user\",\"content\":\"broken \\ud800 quasar\"}}\n",
    )
    .expect("write");
    support::import(&store, &[dir.path().join("projects").as_path()]);
    let hits = run(&store, text("quasar"));
    assert_eq!(uuids(&hits), ["s1"]);
    assert!(hits[0].snippet.contains("quasar"));
}

/// A title matches a word as typed: `%`, `_` and `\` in a word are characters, not
/// patterns (titles are found with `LIKE`), and case is folded as SQLite's `lower` folds it.
#[test]
fn title_words_are_literal() {
    let (_dir, store) = corpus();
    let rename = |id: &str, title: &str| {
        let session = query::resolve_session(&store.reader().expect("r"), id).expect("session");
        metadata::rename_session(&store, &session, title).expect("rename");
        // Each rename is the newest change of its session: a later one sorts first.
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    rename(B, "a_b 50% back\\slash");
    rename(C, "axb 500 backslash");
    let titled = |t: &str, limit: i64| -> Vec<String> {
        let q = SearchQuery {
            limit: Some(limit),
            ..text(t)
        };
        run(&store, q)
            .into_iter()
            .filter(|h| h.role == search::TITLE_ROLE)
            .map(|h| h.session_id)
            .collect()
    };
    // One title asked for: the newest whose title holds the word, not the newest that a
    // pattern would match.
    assert_eq!(titled("a_b", 1), [B]);
    assert_eq!(titled("50%", 1), [B]);
    assert_eq!(titled("back\\slash", 1), [B]);
    assert_eq!(titled("AXB", 1), [C]);
    assert_eq!(titled("A_B", 20), [B]);
    assert!(titled("%", 20).is_empty());
    assert!(titled("_", 20).is_empty());
    // The titles' index follows a rename: the old title is no longer found, the new one is.
    rename(B, "quokka lagoon");
    assert!(titled("a_b", 20).is_empty());
    assert_eq!(titled("quok*", 20), [B]);
    assert_eq!(titled("LAGOON", 20), [B]);
}

/// A filter that drops most of the best-ranked matches (here a role: a hundred prompts
/// rank before the one reply) still finds the hits beyond them: the bounded first ranking
/// is followed by an unbounded one.
#[test]
fn a_filter_that_drops_the_best_matches_still_finds_the_rest() {
    let (dir, store) = support::temp_store();
    let project = dir.path().join("projects/-work-zoo");
    let mut records = Vec::new();
    let mut parent: Option<String> = None;
    for i in 0..100 {
        let uuid = format!("u{i:03}");
        records.push(user(&uuid, parent.as_deref(), "zebra zebra zebra"));
        parent = Some(uuid);
    }
    records.push(assistant(
        "reply",
        parent.as_deref().expect("a parent"),
        json!([{"type":"text","text":"a zebra among many other words in a longer reply"}]),
    ));
    write_session(&project, A, &records);
    support::import(&store, &[dir.path().join("projects").as_path()]);
    let replies = |limit: i64| SearchQuery {
        role: Some("assistant".to_owned()),
        limit: Some(limit),
        ..text("zebra")
    };
    assert_eq!(uuids(&run(&store, replies(1))), ["reply"]);
    assert_eq!(uuids(&run(&store, replies(20))), ["reply"]);
    let prompts = SearchQuery {
        role: Some("user".to_owned()),
        limit: Some(1000),
        ..text("zebra")
    };
    assert_eq!(run(&store, prompts).len(), 100);
    // All of them (`search --limit 0`).
    let all = SearchQuery {
        limit: Some(i64::MAX),
        ..text("zebra")
    };
    assert_eq!(run(&store, all).len(), 101);
}
