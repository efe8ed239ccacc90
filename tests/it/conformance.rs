//! One suite, both backends: every check here runs against the SQLite store and, when
//! `SESSIONDB_TEST_PG` names a server, against a PostgreSQL team store, and where a check
//! has an answer both must give the same one.

use crate::support::*;
use serde_json::Value;
use sessiondb::export::OnDamage;
use sessiondb::model::NoProgress;
use sessiondb::query::{SessionFilter, SessionInfo};
use sessiondb::resume::ResumeOptions;
use sessiondb::Db;
use std::path::{Path, PathBuf};

/// A store under test with what keeps it alive.
pub struct Backend {
    pub name: &'static str,
    pub db: Db,
    _dir: tempfile::TempDir,
    _pg: Option<PgTestDb>,
}

/// A fresh SQLite store and, when a server is configured, a fresh team store.
pub fn backends(what: &str) -> Vec<Backend> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sessions.db");
    let mut out = vec![Backend {
        name: "sqlite",
        db: Db::open(path.to_str().expect("utf-8 temp path")).expect("open sqlite"),
        _dir: dir,
        _pg: None,
    }];
    if let Some(pg) = pg_db(what) {
        out.push(Backend {
            name: "postgres",
            db: Db::open(&pg.url).expect("open postgres"),
            _dir: tempfile::tempdir().expect("temp dir"),
            _pg: Some(pg),
        });
    }
    out
}

impl Backend {
    /// Makes the store empty again: a new SQLite file, or the team store's tables emptied.
    pub fn reset(&mut self) {
        match &self._pg {
            Some(pg) => pg.empty(),
            None => {
                let dir = tempfile::tempdir().expect("temp dir");
                let path = dir.path().join("sessions.db");
                self.db = Db::open(path.to_str().expect("utf-8")).expect("open sqlite");
                self._dir = dir;
            }
        }
    }
}

fn import_all(b: &Backend, paths: &[PathBuf]) -> sessiondb::model::ImportReport {
    b.db.import_paths(paths, &NoProgress)
        .unwrap_or_else(|e| panic!("{}: import: {e}", b.name))
}

/// Every listed and hidden session, without the team store's origin fields.
fn listing(b: &Backend) -> Vec<SessionInfo> {
    let mut all =
        b.db.list_sessions(&SessionFilter {
            include_hidden: true,
            ..SessionFilter::default()
        })
        .unwrap_or_else(|e| panic!("{}: list: {e}", b.name));
    for s in &mut all {
        s.origin_host = None;
        s.origin_user = None;
    }
    all
}

fn corpus_files(shared: &Path) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(shared.join("corpus/claude-code"))
        .expect("corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus has transcripts");
    files
}

#[test]
fn corpus_round_trips_and_lists_alike_on_every_backend() {
    let Some(shared) = shared_dir("the conformance corpus round trip") else {
        return;
    };
    let files = corpus_files(&shared);
    let mut listings = Vec::new();
    for b in backends("corpus_round_trips_and_lists_alike_on_every_backend") {
        let first = import_all(&b, &files);
        assert_eq!(first.files_failed, 0, "{}: {:?}", b.name, first.errors);
        for file in &files {
            let id = file.file_stem().expect("stem").to_string_lossy();
            let session =
                b.db.resolve_session(&format!("claude-code/{id}"))
                    .unwrap_or_else(|e| panic!("{}: {id}: {e}", b.name));
            let mut out = Vec::new();
            b.db.export_session(&session, &mut out, OnDamage::Fail)
                .expect("export");
            assert!(
                out == std::fs::read(file).expect("read"),
                "{}: {} does not round-trip",
                b.name,
                file.display()
            );
        }
        let again = import_all(&b, &files);
        assert_eq!(
            again.new_rows, 0,
            "{}: importing twice adds nothing",
            b.name
        );
        assert_eq!(again.files_unchanged, files.len() as u64, "{}", b.name);
        listings.push((b.name, listing(&b)));
    }
    for pair in listings.windows(2) {
        assert_eq!(
            pair[0].1, pair[1].1,
            "{} and {} list differently",
            pair[0].0, pair[1].0
        );
    }
}

#[test]
fn oracle_trees_round_trip_and_list_alike_on_every_backend() {
    let Some(shared) = shared_dir("the conformance oracle tree round trip") else {
        return;
    };
    let mut cases: Vec<_> = std::fs::read_dir(shared.join("oracle/cases"))
        .expect("cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("projects").is_dir())
        .collect();
    cases.sort();
    assert!(!cases.is_empty());
    slow(
        "conformance::oracle_trees_round_trip_and_list_alike_on_every_backend",
        "imports and exports every oracle case on each backend",
    );
    for b in backends("oracle_trees_round_trip_and_list_alike_on_every_backend") {
        for case in &cases {
            let projects = case.join("projects");
            // One store per backend for all cases: each case's tree goes to its own folder.
            let report = import_all(&b, std::slice::from_ref(&projects));
            assert_eq!(
                report.files_failed,
                0,
                "{}: {}: {:?}",
                b.name,
                case.display(),
                report.errors
            );
            let again = import_all(&b, std::slice::from_ref(&projects));
            assert_eq!(
                again.new_rows,
                0,
                "{}: {}: re-import added rows",
                b.name,
                case.display()
            );
        }
    }
    // Each case on an empty store, so that the exported tree is the case's alone.
    let mut stores = backends("oracle_trees_round_trip_and_list_alike_on_every_backend (trees)");
    for case in &cases {
        let projects = case.join("projects");
        let mut listings = Vec::new();
        for b in &mut stores {
            b.reset();
            import_all(b, std::slice::from_ref(&projects));
            let out = tempfile::tempdir().expect("temp dir");
            b.db.export_tree(out.path(), None, false)
                .expect("export tree");
            assert_same_tree(&projects, out.path());
            listings.push((b.name, listing(b)));
        }
        for pair in listings.windows(2) {
            assert_eq!(
                pair[0].1,
                pair[1].1,
                "{}: {} and {} list differently",
                case.display(),
                pair[0].0,
                pair[1].0
            );
        }
    }
}

/// Every resume/continue/fork case of the oracle pack: the resumed API view is what the real
/// CLI sent, on every backend, and both backends restore the same state.
#[test]
fn oracle_resume_cases_on_every_backend() {
    let Some(shared) = shared_dir("the conformance oracle resume cases") else {
        return;
    };
    let mut stores = backends("oracle_resume_cases_on_every_backend");
    let mut failures = Vec::new();
    for case in crate::resume_cli::cases(&shared) {
        let dir = tempfile::tempdir().expect("tmp");
        let projects = crate::resume_cli::lay_out(&case, dir.path());
        let project = case.str("project_dir_name").expect("project");
        let target = case.str("target_session_id").expect("target");
        let options = ResumeOptions {
            at: case.str("resume_session_at").map(str::to_owned),
            interactive: case.json.get("interactive").and_then(Value::as_bool) == Some(true),
            continue_interrupted: case
                .json
                .get("env")
                .and_then(|e| e.get("CLAUDE_CODE_RESUME_INTERRUPTED_TURN"))
                .and_then(Value::as_str)
                == Some("1"),
            ..ResumeOptions::default()
        };
        let mut states = Vec::new();
        for b in &mut stores {
            b.reset();
            import_all(b, std::slice::from_ref(&projects));
            if case.str("mode") == Some("continue") {
                match b.db.continue_target(project) {
                    Ok(s) if s.session_id == target => {}
                    other => failures.push(format!(
                        "{}: {}: continue picked {other:?}, not {target}",
                        case.name(),
                        b.name
                    )),
                }
            }
            let session =
                b.db.resolve_session(&format!("{project}/{target}"))
                    .expect("session");
            match b.db.resume(&session, &options) {
                Ok(resumed) => {
                    if Value::Array(resumed.api_view()) != case.expected_view() {
                        failures.push(format!(
                            "{}: {}: API view differs from the CLI's",
                            case.name(),
                            b.name
                        ));
                    }
                    let state = serde_json::to_value(&resumed).expect("json");
                    states.push((b.name, state));
                }
                Err(e) => failures.push(format!("{}: {}: {e}", case.name(), b.name)),
            }
        }
        for pair in states.windows(2) {
            if pair[0].1 != pair[1].1 {
                failures.push(format!(
                    "{}: {} and {} restore different states",
                    case.name(),
                    pair[0].0,
                    pair[1].0
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A search hit by session and line.
type HitKey = (String, Option<String>);

/// Search answers: the same lines match on both backends (ranking ties may be ordered
/// differently, and the scores are the engines' own, so the hits are compared as sets).
/// Lines whose searchable text only SQLite's JSON functions can tell (a NUL inside a string,
/// a duplicate or escaped key: `jsonl::search_text` gives `None`) are left out of the
/// comparison: the team store reads them with serde instead (docs/postgres.md).
#[test]
fn search_finds_the_same_lines_on_every_backend() {
    let Some(shared) = shared_dir("the conformance search") else {
        return;
    };
    let files = corpus_files(&shared);
    let queries = [
        ("test", false),
        ("error", true),
        ("function return", false),
        ("cargo build", true),
        ("README", false),
    ];
    // The uuids of the lines only SQLite's JSON functions can read.
    let mut uncertain = std::collections::HashSet::new();
    for file in &files {
        let bytes = std::fs::read(file).expect("read");
        for line in sessiondb::jsonl::split_lines(&bytes) {
            let record = sessiondb::jsonl::parse_record(line.bytes);
            let uuid = record
                .as_ref()
                .and_then(|r| r.get("uuid"))
                .and_then(Value::as_str);
            if let Some(uuid) = uuid {
                if sessiondb::jsonl::search_text(line.bytes).is_none() {
                    uncertain.insert(uuid.to_owned());
                }
            }
        }
    }
    assert!(uncertain.len() < 50, "{} uncertain lines", uncertain.len());
    let mut answers: Vec<(&str, Vec<Vec<HitKey>>)> = Vec::new();
    for b in backends("search_finds_the_same_lines_on_every_backend") {
        import_all(&b, &files);
        let mut per_query = Vec::new();
        for (text, tools) in queries {
            let (hits, stale) =
                b.db.search(&sessiondb::search::SearchQuery {
                    text: text.to_owned(),
                    tools,
                    limit: Some(100_000),
                    ..Default::default()
                })
                .unwrap_or_else(|e| panic!("{}: search {text:?}: {e}", b.name));
            assert!(stale.is_none(), "{}: {stale:?}", b.name);
            let mut found: Vec<HitKey> = hits
                .into_iter()
                .filter(|h| !h.uuid.as_ref().is_some_and(|u| uncertain.contains(u)))
                .map(|h| (h.session_id, h.uuid))
                .collect();
            found.sort();
            assert!(!found.is_empty(), "{}: {text:?} finds nothing", b.name);
            per_query.push(found);
        }
        answers.push((b.name, per_query));
    }
    for pair in answers.windows(2) {
        for (i, (text, _)) in queries.iter().enumerate() {
            let (a, b) = (&pair[0].1[i], &pair[1].1[i]);
            let only_a: Vec<_> = a.iter().filter(|h| !b.contains(h)).take(3).collect();
            let only_b: Vec<_> = b.iter().filter(|h| !a.contains(h)).take(3).collect();
            assert!(
                only_a.is_empty() && only_b.is_empty(),
                "{text:?}: {} finds {} lines, {} finds {}; only {}: {only_a:?}; only {}: {only_b:?}",
                pair[0].0,
                a.len(),
                pair[1].0,
                b.len(),
                pair[0].0,
                pair[1].0
            );
        }
    }
}

/// Rename, tag and delete: the same records are appended, the catalog follows, the export
/// shows the new lines after the imported bytes, and a deleted session is gone.
#[test]
fn rename_tag_and_delete_on_every_backend() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sample-projects");
    let mut results = Vec::new();
    for b in backends("rename_tag_and_delete_on_every_backend") {
        import_all(&b, std::slice::from_ref(&samples));
        let all = listing(&b);
        assert_eq!(all.len(), 2, "{}", b.name);
        let id = all[0].session_id.clone();
        let session = b.db.resolve_session(&id).expect("session");
        let mut before = Vec::new();
        b.db.export_session(&session, &mut before, OnDamage::Fail)
            .expect("export");
        let renamed =
            b.db.rename_session(&session, "  A new title ")
                .expect("rename");
        let tagged = b.db.tag_session(&session, Some("exp-1")).expect("tag");
        assert!(b.db.rename_session(&session, "   ").is_err(), "{}", b.name);
        let info = b.db.session_info(&session, None).expect("info");
        assert_eq!(
            info.custom_title.as_deref(),
            Some("A new title"),
            "{}",
            b.name
        );
        assert_eq!(info.summary.as_deref(), Some("A new title"), "{}", b.name);
        assert_eq!(info.tag.as_deref(), Some("exp-1"), "{}", b.name);
        // Found by its new title, and filtered by its tag.
        assert_eq!(
            b.db.resolve_session("A new title").expect("by title"),
            session
        );
        let tagged_only =
            b.db.list_sessions(&SessionFilter {
                tag: Some("exp-1".into()),
                ..SessionFilter::default()
            })
            .expect("list");
        assert_eq!(tagged_only.len(), 1, "{}", b.name);
        let mut after = Vec::new();
        b.db.export_session(&session, &mut after, OnDamage::Fail)
            .expect("export");
        let mut want = before.clone();
        if !want.ends_with(b"\n") && !want.is_empty() {
            want.push(b'\n');
        }
        want.extend_from_slice(format!("{renamed}\n{tagged}\n").as_bytes());
        assert!(after == want, "{}: export after rename and tag", b.name);
        b.db.tag_session(&session, None).expect("clear tag");
        assert_eq!(b.db.session_info(&session, None).expect("info").tag, None);
        let resumed =
            b.db.resume(&session, &ResumeOptions::default())
                .expect("resume");
        let report = b.db.delete_session(&session).expect("delete");
        assert!(report.rows > 0, "{}", b.name);
        assert!(b.db.resolve_session(&id).is_err(), "{}: deleted", b.name);
        assert_eq!(listing(&b).len(), 1, "{}", b.name);
        results.push((
            b.name,
            renamed,
            tagged,
            serde_json::to_value(&resumed.metadata).expect("json"),
        ));
    }
    for pair in results.windows(2) {
        assert_eq!(pair[0].1, pair[1].1);
        assert_eq!(pair[0].2, pair[1].2);
        assert_eq!(
            pair[0].3, pair[1].3,
            "{} and {} restore different metadata",
            pair[0].0, pair[1].0
        );
    }
}

/// A user record of session `session` as Claude Code writes one, with its newline.
fn user_record(session: &str, uuid: &str, parent: Option<&str>, text: &str) -> String {
    let line = serde_json::json!({
        "type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": session,
        "cwd": "/w", "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": text},
    });
    format!("{line}\n")
}

/// A file rewritten on disk becomes a new version on both stores, the lines sessiondb wrote
/// into the old version (an `append`) carried over unless the new file holds them; a file
/// gone from disk is marked vanished with its lines kept. Both stores give the same exports
/// and the same counts at every step.
#[test]
fn rewritten_and_vanished_files_on_every_backend() {
    const SESSION: &str = "7e57ab1e-0000-4000-8000-000000000017";
    let mut results = Vec::new();
    for b in backends("rewritten_and_vanished_files_on_every_backend") {
        let root = tempfile::tempdir().expect("temp dir");
        let project = root.path().join("-w");
        std::fs::create_dir_all(&project).expect("project dir");
        let path = project.join(format!("{SESSION}.jsonl"));
        let first = user_record(SESSION, "u1", None, "one")
            + &user_record(SESSION, "u2", Some("u1"), "two");
        std::fs::write(&path, &first).expect("write");
        let roots = [root.path().to_path_buf()];
        import_all(&b, &roots);
        let session = b.db.resolve_session(SESSION).expect("session");
        let local = serde_json::json!({"type": "user", "uuid": "L1",
            "message": {"role": "user", "content": "written through sessiondb"}});
        b.db.append_with(&session, &[local], &Default::default())
            .expect("append");
        // Claude Code rewrites the file (the second line changed, a third added).
        let second = user_record(SESSION, "u1", None, "one")
            + &user_record(SESSION, "u2", Some("u1"), "two, edited")
            + &user_record(SESSION, "u3", Some("u2"), "three");
        std::fs::write(&path, &second).expect("rewrite");
        let rewritten = import_all(&b, &roots);
        assert_eq!(rewritten.files_rewritten, 1, "{}: {rewritten:?}", b.name);
        assert_eq!(rewritten.local_rows_kept, 1, "{}: {rewritten:?}", b.name);
        let export = |b: &Backend| {
            let mut out = Vec::new();
            b.db.export_session(&session, &mut out, OnDamage::Fail)
                .expect("export");
            String::from_utf8(out).expect("utf-8")
        };
        let after_rewrite = export(&b);
        assert!(
            after_rewrite.starts_with(&second),
            "{}: {after_rewrite}",
            b.name
        );
        assert_eq!(after_rewrite.matches("\"L1\"").count(), 1, "{}", b.name);
        // A rewrite that holds the local line itself (same uuid) carries nothing over.
        let held = after_rewrite
            .lines()
            .last()
            .expect("the local line")
            .to_owned();
        let third = user_record(SESSION, "u1", None, "one, again") + &held + "\n";
        std::fs::write(&path, &third).expect("rewrite again");
        let again = import_all(&b, &roots);
        assert_eq!(again.files_rewritten, 1, "{}: {again:?}", b.name);
        assert_eq!(again.local_rows_kept, 0, "{}: {again:?}", b.name);
        assert_eq!(export(&b), third, "{}", b.name);
        // The file goes away: marked vanished, its lines kept, once.
        std::fs::remove_file(&path).expect("remove");
        let gone = import_all(&b, &roots);
        assert_eq!(gone.vanished_files, 1, "{}: {gone:?}", b.name);
        assert_eq!(import_all(&b, &roots).vanished_files, 0, "{}", b.name);
        let info = b.db.session_info(&session, None).expect("info");
        assert_eq!(info.source_state, "vanished", "{}", b.name);
        assert_eq!(export(&b), third, "{}: lines kept", b.name);
        results.push((b.name, after_rewrite));
    }
    for pair in results.windows(2) {
        assert_eq!(
            pair[0].1, pair[1].1,
            "{} and {} differ",
            pair[0].0, pair[1].0
        );
    }
}
