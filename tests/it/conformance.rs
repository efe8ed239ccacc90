//! One suite, both backends: every check here runs against the SQLite store and, when
//! `SESSIONDB_TEST_PG` names a server, against a PostgreSQL team store, and where a check
//! has an answer both must give the same one.

use crate::support::*;
use serde_json::Value;
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
            b.db.export_session(&session, &mut out).expect("export");
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
            b.db.export_tree(out.path(), None).expect("export tree");
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
