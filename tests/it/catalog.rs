//! The catalog and the metadata verbs: listing filters and order, rename/tag/delete through
//! the library and the CLI, SESSION given as a custom title, vanished sources.

use crate::support::{self, sessiondb};
use serde_json::{json, Value};
use sessiondb::query::{self, SessionFilter};
use sessiondb::{metadata, Store};
use std::path::PathBuf;

const S1: &str = "11111111-0000-4000-8000-000000000001";
const S2: &str = "22222222-0000-4000-8000-000000000002";
const S3: &str = "33333333-0000-4000-8000-000000000003";

fn session_lines(sid: &str, branch: &str, prompt: &str, day: u32) -> String {
    let records = [
        json!({"type":"file-history-snapshot","messageId":"m","snapshot":{"timestamp":"2030-01-01T00:00:00Z"}}),
        json!({"type":"user","uuid":format!("{sid}-u"),"parentUuid":null,"sessionId":sid,
               "cwd":"/work/demo","gitBranch":branch,"timestamp":format!("2026-01-{day:02}T10:00:00Z"),
               "message":{"role":"user","content":prompt}}),
        json!({"type":"assistant","uuid":format!("{sid}-a"),"parentUuid":format!("{sid}-u"),"sessionId":sid,
               "cwd":"/work/demo","gitBranch":branch,"timestamp":format!("2026-01-{day:02}T10:00:05Z"),
               "message":{"id":"x","role":"assistant","content":[{"type":"text","text":"ok"}]}}),
    ];
    records.iter().map(|r| format!("{r}\n")).collect()
}

/// Three sessions in one project, with mtimes day 1 < day 2 < day 3.
fn tree() -> (tempfile::TempDir, Store, PathBuf) {
    let (dir, store) = support::temp_store();
    let project = dir.path().join("projects/-work-demo");
    std::fs::create_dir_all(&project).expect("mkdir");
    for (sid, branch, prompt, day) in [
        (S1, "main", "Fix the Parser bug", 1),
        (S2, "feature/x", "Write the release notes", 2),
        (S3, "main", "Plan the migration", 3),
    ] {
        let path = project.join(format!("{sid}.jsonl"));
        std::fs::write(&path, session_lines(sid, branch, prompt, day)).expect("write");
        let secs = 1_767_225_600 + u64::from(day) * 86_400;
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| {
                f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
            })
            .expect("mtime");
    }
    support::import(&store, &[dir.path().join("projects").as_path()]);
    (dir, store, project)
}

fn list(store: &Store, filter: SessionFilter) -> Vec<String> {
    query::list_sessions(&store.reader().expect("reader"), &filter)
        .expect("list")
        .into_iter()
        .map(|s| s.session_id)
        .collect()
}

fn resolve(store: &Store, arg: &str) -> sessiondb::Result<sessiondb::model::SessionRef> {
    query::resolve_session(&store.reader().expect("reader"), arg)
}

/// A session id stored in two projects is listed once without a project (the newer copy),
/// by the short listing's per-row test and by the long listing's, which first looks for an
/// id stored twice; with a project, each copy is its own.
#[test]
fn a_session_id_in_two_projects_is_listed_once() {
    let (dir, store, _) = tree();
    let other = dir.path().join("projects/-work-other");
    std::fs::create_dir_all(&other).expect("mkdir");
    let copy = other.join(format!("{S1}.jsonl"));
    std::fs::write(&copy, session_lines(S1, "main", "Fix the Parser bug", 9)).expect("write");
    support::import(&store, &[dir.path().join("projects").as_path()]);
    let projects = |filter: SessionFilter| -> Vec<(String, String)> {
        query::list_sessions(&store.reader().expect("reader"), &filter)
            .expect("list")
            .into_iter()
            .map(|s| (s.session_id, s.project))
            .collect()
    };
    let newest = (S1.to_owned(), "-work-other".to_owned());
    for limit in [None, Some(0), Some(2), Some(100), Some(101)] {
        let listed = projects(SessionFilter {
            limit,
            ..Default::default()
        });
        assert_eq!(
            listed.len(),
            if limit == Some(2) { 2 } else { 3 },
            "{limit:?}"
        );
        assert_eq!(listed[0], newest, "{limit:?}");
        assert_eq!(
            listed.iter().filter(|(id, _)| id == S1).count(),
            1,
            "{limit:?}"
        );
    }
    let demo = projects(SessionFilter {
        project: Some("-work-demo".into()),
        ..Default::default()
    });
    assert_eq!(demo.len(), 3);
}

#[test]
fn listing_is_newest_first_with_filters() {
    let (_dir, store, _) = tree();
    assert_eq!(list(&store, SessionFilter::default()), [S3, S2, S1]);
    let f = |f: SessionFilter| list(&store, f);
    assert_eq!(
        f(SessionFilter {
            branch: Some("main".into()),
            ..Default::default()
        }),
        [S3, S1]
    );
    assert_eq!(
        f(SessionFilter {
            name: Some("PARSER".into()),
            ..Default::default()
        }),
        [S1]
    );
    let day2 = sessiondb::time::parse_iso8601_ms("2026-01-03T00:00:00Z").expect("time");
    assert_eq!(
        f(SessionFilter {
            since: Some(day2),
            ..Default::default()
        }),
        [S3, S2]
    );
    assert_eq!(
        f(SessionFilter {
            until: Some(day2),
            ..Default::default()
        }),
        [S2, S1]
    );
    assert_eq!(
        f(SessionFilter {
            limit: Some(1),
            offset: Some(1),
            ..Default::default()
        }),
        [S2]
    );
    assert_eq!(
        f(SessionFilter {
            project: Some("-work-demo".into()),
            limit: Some(0),
            offset: Some(-1),
            ..Default::default()
        }),
        [S3, S2, S1]
    );
    let info = query::get_session_info(
        &store.reader().expect("r"),
        &resolve(&store, S1).expect("s1"),
        None,
    )
    .expect("info");
    assert_eq!(info.first_prompt.as_deref(), Some("Fix the Parser bug"));
    assert_eq!(info.summary.as_deref(), Some("Fix the Parser bug"));
    assert_eq!(info.git_branch.as_deref(), Some("main"));
    assert_eq!(info.cwd.as_deref(), Some("/work/demo"));
    // The first record's own timestamp, not the snapshot's nested one.
    assert_eq!(
        info.created_at,
        sessiondb::time::parse_iso8601_ms("2026-01-01T10:00:00Z")
    );
    assert_eq!(info.message_count, 2);
    assert_eq!(info.source_state, "present");
    assert!(info.listed);
}

#[test]
fn rename_tag_and_title_lookup() {
    let (_dir, store, _) = tree();
    let s1 = resolve(&store, S1).expect("s1");
    let s2 = resolve(&store, S2).expect("s2");
    metadata::rename_session(&store, &s1, "  Parser work  ").expect("rename");
    assert_eq!(
        list(&store, SessionFilter::default())[0],
        S1,
        "a write bumps the mtime"
    );
    assert_eq!(resolve(&store, "Parser work").expect("by title"), s1);
    assert!(
        resolve(&store, "parser work").is_err(),
        "titles match exactly"
    );
    metadata::rename_session(&store, &s2, "Parser work").expect("rename");
    assert!(matches!(
        resolve(&store, "Parser work"),
        Err(sessiondb::Error::AmbiguousSession { .. })
    ));
    assert!(metadata::rename_session(&store, &s1, "   ").is_err());

    metadata::tag_session(&store, &s2, Some(" exp\u{200b}-1 ")).expect("tag");
    let tagged = |t: &str| {
        list(
            &store,
            SessionFilter {
                tag: Some(t.into()),
                ..Default::default()
            },
        )
    };
    assert_eq!(tagged("exp-1"), [S2]);
    metadata::tag_session(&store, &s2, None).expect("clear");
    assert!(tagged("exp-1").is_empty());
    assert!(metadata::tag_session(&store, &s2, Some("\u{200b}")).is_err());
    let info = query::get_session_info(&store.reader().expect("r"), &s2, None).expect("info");
    assert_eq!(info.custom_title.as_deref(), Some("Parser work"));
    assert_eq!(info.tag, None);
}

#[test]
fn delete_removes_everything_keyed_to_the_session() {
    let (dir, store, project) = tree();
    let sub = project.join(S1).join("subagents");
    std::fs::create_dir_all(&sub).expect("mkdir");
    std::fs::write(
        sub.join("agent-abc.jsonl"),
        format!(
            "{}\n",
            json!({"type":"user","uuid":"x","isSidechain":true,"message":{"content":"sub"}})
        ),
    )
    .expect("agent");
    std::fs::write(sub.join("agent-abc.meta.json"), "{}").expect("meta");
    support::import(&store, &[dir.path().join("projects").as_path()]);
    let s1 = resolve(&store, S1).expect("s1");
    let info = query::get_session_info(&store.reader().expect("r"), &s1, None).expect("info");
    assert!(info.has_subagents);
    let report = metadata::delete_session(&store, &s1).expect("delete");
    assert_eq!(report.transcripts, 2);
    assert_eq!(report.files, 1);
    assert!(resolve(&store, S1).is_err());
    assert_eq!(list(&store, SessionFilter::default()), [S3, S2]);
    let conn = store.reader().expect("r");
    let left: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM transcripts t JOIN sessions s ON s.id = t.session_id
                      WHERE s.session_id = ?1)
                  + (SELECT count(*) FROM source_files WHERE path LIKE '%' || ?1 || '%')
                  + (SELECT count(*) FROM catalog WHERE session_id = ?1)",
            [S1],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(left, 0);
}

#[test]
fn vanished_sources_are_marked() {
    let (dir, store, project) = tree();
    std::fs::remove_file(project.join(format!("{S2}.jsonl"))).expect("rm");
    support::import(&store, &[dir.path().join("projects").as_path()]);
    let s2 = resolve(&store, S2).expect("still stored");
    let info = query::get_session_info(&store.reader().expect("r"), &s2, None).expect("info");
    assert_eq!(info.source_state, "vanished");
    assert!(info.listed);
}

#[test]
fn cli_verbs() {
    let (dir, store, _) = tree();
    drop(store);
    let db = dir.path().join("sessions.db");
    let out = sessiondb(&db, &["sessions", "--json", "--limit", "2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Value = serde_json::from_slice(&out.stdout).expect("json");
    let first = &listed[0];
    for key in [
        "session_id",
        "summary",
        "last_modified",
        "file_size",
        "custom_title",
        "first_prompt",
        "git_branch",
        "cwd",
        "tag",
        "created_at",
    ] {
        assert!(first.get(key).is_some(), "missing {key}");
    }
    assert_eq!(listed.as_array().map(Vec::len), Some(2));

    assert!(sessiondb(&db, &["rename", S2, "Release notes"])
        .status
        .success());
    assert!(sessiondb(&db, &["tag", "Release notes", "docs"])
        .status
        .success());
    let out = sessiondb(&db, &["info", "Release notes", "--json"]);
    let info: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(info["session_id"], S2);
    assert_eq!(info["tag"], "docs");
    let out = sessiondb(&db, &["sessions", "--tag", "docs", "--json"]);
    let tagged: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(tagged.as_array().map(Vec::len), Some(1));
    assert!(sessiondb(&db, &["tag", S2, "--clear"]).status.success());
    assert!(
        !sessiondb(&db, &["tag", S2]).status.success(),
        "TAG or --clear is required"
    );

    let out = sessiondb(&db, &["messages", S1, "--json"]);
    let msgs: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(msgs.as_array().map(Vec::len), Some(2));
    assert_eq!(msgs[0]["type"], "user");
    // The SDK's slice: offset -2, limit 1 is [-2:-1], the second-last message.
    let out = sessiondb(
        &db,
        &["messages", S1, "--limit", "1", "--offset", "-2", "--json"],
    );
    let msgs: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(msgs.as_array().map(Vec::len), Some(1));
    assert_eq!(msgs[0]["type"], "user");
    let out = sessiondb(&db, &["messages", S1, "--offset", "1", "--json"]);
    let msgs: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(msgs[0]["type"], "assistant");
    let out = sessiondb(&db, &["agents", S1, "--json"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");

    let out = sessiondb(&db, &["search", "release", "--json"]);
    assert!(out.status.success());
    // Operators are plain text: no syntax error, just nothing found (exit 1, as grep).
    let out = sessiondb(&db, &["search", "\"NEAR(", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    assert!(sessiondb(&db, &["reindex"]).status.success());

    let out = sessiondb(&db, &["delete", S3]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    assert!(
        sessiondb(&db, &["info", S3]).status.success(),
        "refused delete kept it"
    );
    assert!(sessiondb(&db, &["delete", S3, "--yes"]).status.success());
    assert!(!sessiondb(&db, &["info", S3]).status.success());
}

/// A session imported while it grows line by line (with torn last lines completed by the
/// next import) has the same catalog entry as the final file imported at once: the
/// incremental refresh equals a full one.
#[test]
fn incremental_refresh_equals_a_full_one() {
    let sid = "44444444-0000-4000-8000-000000000004";
    let lines: Vec<String> = [
        json!({"type":"file-history-snapshot","messageId":"m","snapshot":{"timestamp":"2030-01-01T00:00:00Z"}}),
        json!({"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-02-01T00:00:00Z",
               "message":{"role":"user","content":"<command-name>/clear</command-name>"}}),
        json!({"type":"user","uuid":"u2","parentUuid":"u1","gitBranch":"one","timestamp":"2026-02-01T00:00:01Z",
               "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}}),
        json!({"type":"user","uuid":"u3","parentUuid":"u2","cwd":"/late/cwd","gitBranch":"two",
               "timestamp":"2026-02-01T00:00:02Z","message":{"role":"user","content":"the real prompt"}}),
        json!({"type":"assistant","uuid":"a1","parentUuid":"u3","timestamp":"2026-02-01T00:00:03Z",
               "message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hi"}]}}),
        json!({"type":"summary","summary":"Own summary","leafUuid":"a1"}),
        json!({"type":"summary","summary":"Foreign summary","leafUuid":"elsewhere"}),
        json!({"type":"ai-title","aiTitle":"An AI title"}),
        json!({"type":"tag","tag":"t1","sessionId":sid}),
        json!({"type":"user","uuid":"u4","parentUuid":"a1","gitBranch":"","timestamp":"2026-02-01T00:00:04Z",
               "message":{"role":"user","content":"more"}}),
        json!({"type":"custom-title","customTitle":"User title","sessionId":sid}),
        json!({"type":"tag","tag":"","sessionId":sid}),
    ]
    .iter()
    .map(Value::to_string)
    .collect();
    let (dir, grown) = support::temp_store();
    let project = dir.path().join("p/-grow");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join(format!("{sid}.jsonl"));
    let info = |store: &Store| {
        let conn = store.reader().expect("r");
        let s = query::resolve_session(&conn, sid).expect("session");
        let mut i = query::get_session_info(&conn, &s, None).expect("info");
        i.last_modified = 0;
        i
    };
    for n in 1..=lines.len() {
        let mut text: String = lines[..n].iter().map(|l| format!("{l}\n")).collect();
        if n < lines.len() {
            // A torn next line, completed by the next round.
            text.push_str(&lines[n][..lines[n].len() / 2]);
        }
        std::fs::write(&file, &text).expect("write");
        support::import(&grown, &[file.as_path()]);
        let (fresh_dir, fresh) = support::temp_store();
        let copy = fresh_dir
            .path()
            .join("p/-grow")
            .join(format!("{sid}.jsonl"));
        std::fs::create_dir_all(copy.parent().expect("parent")).expect("mkdir");
        std::fs::write(&copy, &text).expect("copy");
        support::import(&fresh, &[copy.as_path()]);
        assert_eq!(info(&grown), info(&fresh), "after {n} lines");
    }
    let last = info(&grown);
    assert_eq!(last.first_prompt.as_deref(), Some("the real prompt"));
    assert_eq!(last.custom_title.as_deref(), Some("User title"));
    assert_eq!(last.git_branch.as_deref(), Some("two"));
    assert_eq!(last.cwd.as_deref(), Some("/late/cwd"));
    assert_eq!(last.tag, None);
}
