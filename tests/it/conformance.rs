//! One suite, both backends: every check here runs against the SQLite store and, when
//! `SESSIONDB_TEST_PG` names a server, against a PostgreSQL team store, and where a check
//! has an answer both must give the same one. Without a server, the team-store half of
//! each shows as an ignored twin (see [`postgres_twins`]).

// Only the twins (no server configured) name these.
#[cfg(not(sessiondb_pg))]
use crate::resume_dangling::{
    a_missing_parent_is_walked_past_on_every_backend,
    a_parent_cycle_is_walked_past_on_every_backend,
};
#[cfg(not(sessiondb_pg))]
use crate::search_narrowed::{
    mentions_are_the_lines_a_search_finds_newest_first_on_every_backend,
    narrowed_searches_answer_as_the_whole_search_filtered_on_every_backend,
};
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

/// A fresh SQLite store and, when a server is configured (`sessiondb_pg`, see
/// `tools/build.rs`), a fresh team store; only the team store inside a `*_on_postgres_alone`
/// test.
pub fn backends(what: &str) -> Vec<Backend> {
    let mut out = Vec::new();
    if !POSTGRES_ALONE.get() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("sessions.db");
        out.push(Backend {
            name: "sqlite",
            db: Db::open(path.to_str().expect("utf-8 temp path")).expect("open sqlite"),
            _dir: dir,
            _pg: None,
        });
    }
    if cfg!(sessiondb_pg) || POSTGRES_ALONE.get() {
        let pg = pg_db(what).expect("a team store");
        out.push(Backend {
            name: "postgres",
            db: Db::open(&pg.url).expect("open postgres"),
            _dir: tempfile::tempdir().expect("temp dir"),
            _pg: Some(pg),
        });
    }
    out
}

thread_local! {
    /// Set by the `*_on_postgres_alone` twins: [`backends`] gives the team store only.
    static POSTGRES_ALONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Without a server (`sessiondb_pg` unset) each test here runs on SQLite alone; so that its
/// team-store half is not counted as passed, a twin `<test>_on_postgres_alone` shows as
/// ignored, and runs that half (on the team store alone, nothing to compare with) under
/// `--include-ignored` with `SESSIONDB_TEST_PG` set. With a server, the tests themselves run
/// both and compare.
macro_rules! postgres_twins {
    ($($test:ident => $twin:ident),* $(,)?) => {$(
        #[cfg(not(sessiondb_pg))]
        #[test]
        #[ignore = "needs PostgreSQL (SESSIONDB_TEST_PG): the team-store half of this test"]
        fn $twin() {
            POSTGRES_ALONE.set(true);
            $test();
        }
    )*};
}

postgres_twins! {
    corpus_round_trips_and_lists_alike_on_every_backend => corpus_round_trips_on_postgres_alone,
    oracle_trees_round_trip_and_list_alike_on_every_backend => oracle_trees_on_postgres_alone,
    oracle_resume_cases_on_every_backend => oracle_resume_cases_on_postgres_alone,
    search_finds_the_same_lines_on_every_backend => search_on_postgres_alone,
    rename_tag_and_delete_on_every_backend => rename_tag_and_delete_on_postgres_alone,
    sdk_goldens_messages_and_agents_on_every_backend => sdk_goldens_on_postgres_alone,
    every_fork_case_on_every_backend => every_fork_case_on_postgres_alone,
    sdk_forks_on_every_backend => sdk_forks_on_postgres_alone,
    fork_inherits_and_refuses_alike_on_every_backend => fork_inherits_on_postgres_alone,
    messages_agents_and_fork_through_the_cli_on_every_backend => cli_on_postgres_alone,
    appended_lines_are_found_by_the_next_search_on_every_backend => appended_lines_on_postgres_alone,
    rewritten_and_vanished_files_on_every_backend => rewritten_and_vanished_on_postgres_alone,
    sessions_are_found_by_id_prefix_and_project_on_every_backend => sessions_found_on_postgres_alone,
    a_growing_file_imports_only_its_new_lines_on_every_backend => a_growing_file_on_postgres_alone,
    a_missing_parent_is_walked_past_on_every_backend => a_missing_parent_on_postgres_alone,
    a_parent_cycle_is_walked_past_on_every_backend => a_parent_cycle_on_postgres_alone,
    narrowed_searches_answer_as_the_whole_search_filtered_on_every_backend =>
        narrowed_search_on_postgres_alone,
    mentions_are_the_lines_a_search_finds_newest_first_on_every_backend =>
        mentions_on_postgres_alone,
}

impl Backend {
    /// What `--db` names for the binary: the SQLite file, or the team store's URL.
    pub fn target(&self) -> PathBuf {
        match &self._pg {
            Some(pg) => PathBuf::from(&pg.url),
            None => self._dir.path().join("sessions.db"),
        }
    }

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

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn corpus_round_trips_and_lists_alike_on_every_backend() {
    let Some(shared) = shared_dir("the conformance corpus round trip") else {
        return;
    };
    let files = corpus_files(&shared);
    let mut listings = Vec::new();
    for b in backends("corpus_round_trips_and_lists_alike_on_every_backend") {
        let first = import_all(&b, &files);
        assert_eq!(first.files_failed, 0, "{}: {:?}", b.name, first.errors);
        // A file named on the command line whose name is not a session id is stored under
        // the id its records carry (issue 31).
        let named: std::collections::HashMap<&Path, &str> = first
            .named_by_records
            .iter()
            .map(|n| (n.path.as_path(), n.session_id.as_str()))
            .collect();
        for file in &files {
            let id = named.get(file.as_path()).map_or_else(
                || file.file_stem().expect("stem").to_string_lossy(),
                |id| std::borrow::Cow::Borrowed(*id),
            );
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
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
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
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
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
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
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

/// The SDK readers (`messages`, `agents`) against the Agent SDK's goldens on every backend:
/// every session's messages (whole and paged), its sub-agents and each sub-agent's messages
/// (whole and paged) are the SDK's (the goldens list no known difference for these), and
/// both backends answer alike.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn sdk_goldens_messages_and_agents_on_every_backend() {
    use crate::sdk_goldens::{compare_messages, ids, oracle_dir, paging_args, read_json};
    let Some((oracle, _)) = oracle_dir() else {
        return;
    };
    slow(
        "conformance::sdk_goldens_messages_and_agents_on_every_backend",
        "imports the SDK goldens' tree and reads every session on each backend",
    );
    let manifest = read_json(&oracle.join("manifest.json"));
    let tree = tempfile::tempdir().expect("temp dir");
    let projects = crate::sdk_goldens::rebuild_tree(&oracle, &manifest, tree.path());
    let mut goldens: Vec<PathBuf> = std::fs::read_dir(oracle.join("goldens/sessions"))
        .expect("sessions dir")
        .map(|e| e.expect("entry").path())
        .collect();
    goldens.sort();
    let mut answers = Vec::new();
    for b in backends("sdk_goldens_messages_and_agents_on_every_backend") {
        import_all(&b, std::slice::from_ref(&projects));
        let mut failures = Vec::new();
        let mut answer = Vec::new();
        let (mut agents_seen, mut messages_seen) = (0, 0);
        for path in &goldens {
            let g = read_json(path);
            let sid = g["session_id"].as_str().expect("sid");
            let project = g["project_dir"].as_str().expect("project");
            let session =
                b.db.resolve_session(&format!("{project}/{sid}"))
                    .unwrap_or_else(|e| panic!("{}: {sid}: {e}", b.name));
            let full = g["messages_full_payload"].as_bool().unwrap_or(false);
            let messages = b.db.session_messages(&session, None, 0).expect("messages");
            messages_seen += messages.len();
            if let Some(m) = compare_messages(&g["get_session_messages"], &messages, full) {
                failures.push(format!("{sid}: messages: {m}"));
            }
            answer.push(serde_json::to_value(&messages).expect("json"));
            for (key, want) in g["get_session_messages_paging"]
                .as_object()
                .expect("paging")
            {
                let (limit, offset) = paging_args(key);
                let got: Vec<String> =
                    b.db.session_messages(&session, limit, offset)
                        .expect("page")
                        .into_iter()
                        .map(|m| m.uuid)
                        .collect();
                if got != ids(want) {
                    failures.push(format!("{sid}: messages {key}: {got:?} != {want}"));
                }
            }
            let agents = b.db.list_subagents(&session).expect("agents");
            if serde_json::json!(agents) != g["list_subagents"] {
                failures.push(format!(
                    "{sid}: agents {agents:?} != {}",
                    g["list_subagents"]
                ));
            }
            answer.push(serde_json::json!(agents));
            for (agent, a) in g["subagents"].as_object().expect("subagents") {
                agents_seen += 1;
                let got =
                    b.db.subagent_messages(&session, agent, None, 0)
                        .expect("agent messages");
                if let Some(m) = compare_messages(&a["get_subagent_messages"], &got, false) {
                    failures.push(format!("{sid}/{agent}: {m}"));
                }
                answer.push(serde_json::to_value(&got).expect("json"));
                for (key, want) in a["paging"].as_object().expect("paging") {
                    let (limit, offset) = paging_args(key);
                    let got: Vec<String> =
                        b.db.subagent_messages(&session, agent, limit, offset)
                            .expect("page")
                            .into_iter()
                            .map(|m| m.uuid)
                            .collect();
                    if got != ids(want) {
                        failures.push(format!("{sid}/{agent}: {key}: {got:?} != {want}"));
                    }
                }
            }
            for agent in ["", "nope"] {
                let got =
                    b.db.subagent_messages(&session, agent, None, 0)
                        .expect("agent messages");
                assert!(got.is_empty(), "{}: {sid}: agent {agent:?}", b.name);
            }
        }
        assert!(
            failures.is_empty(),
            "{}: {} differences from the SDK:\n{}",
            b.name,
            failures.len(),
            failures.join("\n")
        );
        assert!(
            goldens.len() >= 40 && messages_seen > 1_000 && agents_seen >= 4,
            "{}: {} sessions, {messages_seen} messages, {agents_seen} agents compared",
            b.name,
            goldens.len()
        );
        answers.push((b.name, answer));
    }
    for pair in answers.windows(2) {
        assert!(
            pair[0].1 == pair[1].1,
            "{} and {} read different messages",
            pair[0].0,
            pair[1].0
        );
    }
}

/// The records of JSONL bytes, read as the store reads them (a lone surrogate escape too).
fn records(bytes: &[u8]) -> Vec<Value> {
    sessiondb::jsonl::split_lines(bytes)
        .filter(|l| !l.bytes.is_empty())
        .map(|l| sessiondb::jsonl::parse_record(l.bytes).expect("a JSON record"))
        .collect()
}

/// A fork's lines with the `pr-link` timestamp (the time of the fork) taken out: the rest
/// must be the same bytes on every backend.
fn fork_bytes(b: &Backend, session: &sessiondb::model::SessionRef) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    b.db.export_session(session, &mut out, OnDamage::Fail)
        .unwrap_or_else(|e| panic!("{}: export the fork: {e}", b.name));
    out.split(|c| *c == b'\n')
        .map(|line| match serde_json::from_slice::<Value>(line) {
            Ok(v) if v["type"] == "pr-link" => {
                serde_json::to_vec(&crate::fork::without(&v, "timestamp")).expect("json")
            }
            _ => line.to_vec(),
        })
        .collect()
}

/// The fork id used where a case names none: the same on every backend, so that the
/// forks' bytes can be compared.
const FORK_ID: &str = "f0000000-0000-4000-8000-00000000f0f0";

/// Every oracle case forked on every backend (ended at the case's `--resume-session-at`):
/// the fork resumes to what the real CLI sent for the source, its origin is recorded, both
/// backends write the same bytes, and for the fork cases the re-recorded messages are the
/// ones the CLI wrote into its own fork file (same keys in the same order, same values but
/// `promptId`).
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn every_fork_case_on_every_backend() {
    use crate::fork::{cli_fork_file, flags, jsonl, without};
    use sessiondb::fork::ForkOptions;
    let Some(shared) = shared_dir("the conformance fork cases") else {
        return;
    };
    slow(
        "conformance::every_fork_case_on_every_backend",
        "imports, forks and resumes every oracle case on each backend",
    );
    let mut stores = backends("every_fork_case_on_every_backend");
    let mut failures = Vec::new();
    let (mut checked, mut against_cli) = (0, 0);
    for case in crate::resume_cli::cases(&shared) {
        let dir = tempfile::tempdir().expect("tmp");
        let projects = crate::resume_cli::lay_out(&case, dir.path());
        let project = case.str("project_dir_name").expect("project");
        let target = case.str("target_session_id").expect("target");
        let fork_case = case.str("mode") == Some("fork");
        let new_id = match case.str("new_session_id") {
            Some(id) if fork_case => id,
            _ => FORK_ID,
        };
        let cli_file = if fork_case {
            cli_fork_file(&shared, &case)
        } else {
            None
        };
        let mut written = Vec::new();
        for b in &mut stores {
            b.reset();
            import_all(b, std::slice::from_ref(&projects));
            let source =
                b.db.resolve_session(&format!("{project}/{target}"))
                    .expect("session");
            let options = ForkOptions {
                up_to: case.str("resume_session_at").map(str::to_owned),
                session_id: Some(new_id.to_owned()),
                ..ForkOptions::default()
            };
            let forked = match b.db.fork(&source, &options) {
                Ok(f) => f,
                Err(e) => {
                    failures.push(format!("{}: {}: fork: {e}", case.name(), b.name));
                    continue;
                }
            };
            assert_eq!(forked.session_id, new_id);
            let view =
                b.db.resume(&forked.session, &flags(&case))
                    .expect("resume the fork")
                    .api_view();
            if Value::Array(view) != case.expected_view() {
                failures.push(format!("{}: {}: API view differs", case.name(), b.name));
            }
            let origin =
                b.db.fork_origin(&forked.session)
                    .expect("origin")
                    .expect("a fork has an origin");
            assert_eq!(
                (origin.session_id.as_str(), origin.up_to.as_deref()),
                (target, options.up_to.as_deref()),
                "{}: {}",
                case.name(),
                b.name
            );
            // A second fork with the same id is refused and writes nothing.
            assert!(b.db.fork(&source, &options).is_err(), "{}", b.name);
            let bytes = fork_bytes(b, &forked.session);
            if let Some(cli_file) = &cli_file {
                let source_uuids: std::collections::HashSet<String> = jsonl(
                    &std::fs::read(projects.join(project).join(format!("{target}.jsonl")))
                        .expect("source"),
                )
                .iter()
                .filter_map(|r| r["uuid"].as_str().map(str::to_owned))
                .collect();
                let theirs: Vec<Value> = jsonl(&std::fs::read(cli_file).expect("cli file"))
                    .into_iter()
                    .filter(|r| r["uuid"].as_str().is_some_and(|u| source_uuids.contains(u)))
                    .collect();
                let ours: Vec<Value> = jsonl(&bytes.join(&b'\n'))
                    .into_iter()
                    .filter(|r| r["uuid"].is_string())
                    .collect();
                let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
                let same = ours.len() == theirs.len()
                    && ours.iter().zip(&theirs).all(|(o, t)| {
                        keys(o) == keys(t) && without(o, "promptId") == without(t, "promptId")
                    });
                if !same {
                    failures.push(format!(
                        "{}: {}: the fork's messages are not the CLI's",
                        case.name(),
                        b.name
                    ));
                }
                against_cli += 1;
            }
            written.push((b.name, bytes));
        }
        checked += 1;
        for pair in written.windows(2) {
            if pair[0].1 != pair[1].1 {
                failures.push(format!(
                    "{}: {} and {} write different forks",
                    case.name(),
                    pair[0].0,
                    pair[1].0
                ));
            }
        }
    }
    assert!(checked >= 60, "only {checked} cases");
    assert!(
        against_cli >= 5,
        "only {against_cli} CLI fork files compared"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `--up-to` and `--title` as the SDK's `fork_session` on every backend: the fork's visible
/// messages are the ones the SDK's fork copied, the title is trimmed, the origin recorded.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn sdk_forks_on_every_backend() {
    use sessiondb::fork::ForkOptions;
    let Some(shared) = shared_dir("the conformance SDK forks") else {
        return;
    };
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(shared.join("oracle/sdk/mutations/index.json")).expect("index"),
    )
    .expect("json");
    let mut stores = backends("sdk_forks_on_every_backend");
    let mut failures = Vec::new();
    let mut checked = 0;
    for s in index["sessions"].as_array().expect("sessions") {
        let sid = s["session_id"].as_str().expect("sid");
        let mutations: Value = serde_json::from_str(
            &std::fs::read_to_string(
                shared.join(format!("oracle/sdk/mutations/{sid}/mutations.json")),
            )
            .expect("mutations"),
        )
        .expect("json");
        let dir = tempfile::tempdir().expect("tmp");
        let Some(projects) = crate::fork::mutation_session(&shared, sid, dir.path()) else {
            continue;
        };
        for b in &mut stores {
            b.reset();
            import_all(b, std::slice::from_ref(&projects));
            let source = b.db.resolve_session(sid).expect("session");
            for fork in mutations["forks"].as_array().expect("forks") {
                let kwargs = &fork["kwargs"];
                let options = ForkOptions {
                    up_to: kwargs["up_to_message_id"].as_str().map(str::to_owned),
                    title: kwargs["title"].as_str().map(str::to_owned),
                    session_id: None,
                };
                let forked = b.db.fork(&source, &options).expect("fork");
                let visible: Vec<String> =
                    b.db.session_messages(&forked.session, None, 0)
                        .expect("messages")
                        .into_iter()
                        .map(|m| m.uuid)
                        .collect();
                let want: Vec<String> = fork["fork_messages_forkedFrom"]
                    .as_array()
                    .expect("forkedFrom")
                    .iter()
                    .map(|v| v.as_str().expect("uuid").to_owned())
                    .collect();
                checked += 1;
                if visible != want {
                    failures.push(format!(
                        "{}: {sid} {}: {} visible messages, the SDK's fork has {}",
                        b.name,
                        fork["call"],
                        visible.len(),
                        want.len()
                    ));
                }
                let info = b.db.session_info(&forked.session, None).expect("info");
                if let Some(title) = &options.title {
                    assert_eq!(
                        info.custom_title.as_deref(),
                        Some(title.trim()),
                        "{}",
                        b.name
                    );
                }
                let origin =
                    b.db.fork_origin(&forked.session)
                        .expect("origin")
                        .expect("a fork has an origin");
                assert_eq!(origin.session_id, sid, "{}", b.name);
                assert_eq!(origin.up_to, options.up_to, "{}", b.name);
            }
        }
    }
    assert!(checked >= 15, "only {checked} SDK forks compared");
    assert!(failures.is_empty(), "{failures:#?}");
}

/// What a fork inherits and drops, and its refusals, on every backend: the same records
/// (title, pr-link with a fresh timestamp, re-keyed replacements; no worktree state,
/// no plan slug, no tag), byte for byte but for that timestamp.
#[test]
fn fork_inherits_and_refuses_alike_on_every_backend() {
    use sessiondb::fork::ForkOptions;
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("projects/-w");
    std::fs::create_dir_all(&project).expect("mkdir");
    let sid = "s0000000-0000-4000-8000-000000000001";
    // A message spelled in ways the in-memory view cannot keep: the fork must keep them.
    let spelled = r#""content":"h\u00e9llo \ud800","n":1.50"#;
    let small = crate::fork::SMALL.replace(r#""content":"hello""#, spelled);
    assert_ne!(small, crate::fork::SMALL);
    std::fs::write(project.join(format!("{sid}.jsonl")), small).expect("write");
    let mut written = Vec::new();
    for b in backends("fork_inherits_and_refuses_alike_on_every_backend") {
        import_all(&b, &[dir.path().join("projects")]);
        let source = b.db.resolve_session(sid).expect("session");
        let forked =
            b.db.fork(
                &source,
                &ForkOptions {
                    session_id: Some(FORK_ID.to_owned()),
                    ..ForkOptions::default()
                },
            )
            .expect("fork");
        let lines = records(&fork_bytes(&b, &forked.session).join(&b'\n'));
        let kinds: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
        assert_eq!(
            kinds,
            [
                "custom-title",
                "pr-link",
                "content-replacement",
                "user",
                "assistant"
            ],
            "{}",
            b.name
        );
        assert_eq!(lines[2]["sessionId"], FORK_ID, "{}", b.name);
        assert!(lines[3].get("slug").is_none(), "{}", b.name);
        assert_eq!(lines[4]["requestSessionId"], sid, "{}", b.name);
        let mut exported = Vec::new();
        b.db.export_session(&forked.session, &mut exported, OnDamage::Fail)
            .expect("export");
        let pr_link = &records(&exported)[1];
        assert!(
            pr_link["timestamp"].is_string() && pr_link["timestamp"] != "2026-01-01T00:00:00.000Z",
            "{}: pr-link gets a fresh timestamp: {pr_link}",
            b.name
        );
        let exported = String::from_utf8_lossy(&exported);
        assert!(
            exported.contains(spelled),
            "{}: the message keeps its stored bytes",
            b.name
        );
        let resumed =
            b.db.resume(&forked.session, &ResumeOptions::default())
                .expect("resume");
        assert!(
            resumed.metadata.get("worktree_state").is_none(),
            "{}",
            b.name
        );
        assert_eq!(resumed.content_replacements.len(), 1, "{}", b.name);
        let info = b.db.session_info(&forked.session, None).expect("info");
        assert_eq!(
            info.custom_title.as_deref(),
            Some("Old title"),
            "{}",
            b.name
        );
        assert_eq!(info.tag, None, "{}: the tag stays with the source", b.name);
        // Refusals: a used id, a record that is not in the session, an empty title.
        let refused = |options: ForkOptions| b.db.fork(&source, &options).err();
        let used = refused(ForkOptions {
            session_id: Some(FORK_ID.to_owned()),
            ..ForkOptions::default()
        });
        assert!(
            matches!(&used, Some(sessiondb::Error::Invalid(m)) if m.contains("already used")),
            "{}: {used:?}",
            b.name
        );
        let unknown = refused(ForkOptions {
            up_to: Some("nope".to_owned()),
            ..ForkOptions::default()
        });
        assert!(
            unknown.is_some_and(|e| e.to_string().contains("nope")),
            "{}",
            b.name
        );
        assert!(
            refused(ForkOptions {
                title: Some("  ".to_owned()),
                ..ForkOptions::default()
            })
            .is_some(),
            "{}",
            b.name
        );
        assert_eq!(
            listing(&b).len(),
            2,
            "{}: only the first fork was stored",
            b.name
        );
        written.push((b.name, fork_bytes(&b, &forked.session)));
    }
    for pair in written.windows(2) {
        assert!(
            pair[0].1 == pair[1].1,
            "{} and {} write different forks",
            pair[0].0,
            pair[1].0
        );
    }
}

/// `messages`, `agents` and `fork` through the binary on every backend print the same
/// answers; `fork --write-back` on a team store warns and writes nothing to the files.
#[test]
fn messages_agents_and_fork_through_the_cli_on_every_backend() {
    let session = "8e1f3a52-6c7b-4091-8b2c-3d4e5f6a7b82";
    let mut outputs = Vec::new();
    for b in backends("messages_agents_and_fork_through_the_cli_on_every_backend") {
        let db = b.target();
        // A copy each: the fork is written back beside the imported files by default.
        let copy = tempfile::tempdir().expect("tmp");
        crate::support::copy_tree(&samples(), copy.path());
        sessiondb_ok(&db, &["import".as_ref(), copy.path().as_os_str()]);
        let agents = sessiondb_ok(&db, &["agents", session, "--json"]);
        let ids: Vec<String> = serde_json::from_slice(&agents).expect("agents JSON");
        assert_eq!(ids.len(), 1, "{}: {ids:?}", b.name);
        let plain = sessiondb_ok(&db, &["agents", session]);
        let messages = sessiondb_ok(&db, &["messages", session, "--json"]);
        let all: Vec<Value> = serde_json::from_slice(&messages).expect("messages JSON");
        assert!(all.len() > 2, "{}", b.name);
        let paged = sessiondb_ok(
            &db,
            &[
                "messages", session, "--json", "--limit", "2", "--offset", "1",
            ],
        );
        let paged: Vec<Value> = serde_json::from_slice(&paged).expect("JSON");
        assert_eq!(paged[..], all[1..3], "{}", b.name);
        let agent = sessiondb_ok(&db, &["messages", session, "--agent", &ids[0], "--json"]);
        assert!(
            serde_json::from_slice::<Vec<Value>>(&agent).is_ok_and(|a| !a.is_empty()),
            "{}",
            b.name
        );
        let text = sessiondb_ok(&db, &["messages", session, "--no-pager"]);
        let out = sessiondb(
            &db,
            &[
                "fork",
                session,
                "--json",
                "--session-id",
                FORK_ID,
                "--title",
                "Branch",
            ],
        );
        assert!(
            out.status.success(),
            "{}: {}",
            b.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let forked: Value = serde_json::from_slice(&out.stdout).expect("fork JSON");
        assert_eq!(forked["session_id"], FORK_ID, "{}", b.name);
        let fork_messages = sessiondb_ok(&db, &["messages", FORK_ID, "--json"]);
        if b.name == "postgres" {
            let out = sessiondb(&db, &["fork", session, "--write-back"]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{err}");
            assert!(err.contains("not written back"), "{err}");
        }
        outputs.push((
            b.name,
            [
                agents,
                plain,
                messages,
                agent,
                text,
                out.stdout,
                fork_messages,
            ],
        ));
    }
    for pair in outputs.windows(2) {
        for (i, what) in [
            "agents --json",
            "agents",
            "messages --json",
            "messages --agent",
            "messages",
            "fork --json",
            "messages of the fork",
        ]
        .iter()
        .enumerate()
        {
            assert!(
                pair[0].1[i] == pair[1].1[i],
                "{what}: {} and {} print differently:\n{}\n---\n{}",
                pair[0].0,
                pair[1].0,
                String::from_utf8_lossy(&pair[0].1[i]),
                String::from_utf8_lossy(&pair[1].1[i])
            );
        }
    }
}

/// A line appended through the record API (which, on a team store, leaves its search vector
/// to the queue) is found by the very next search, as on SQLite.
#[test]
fn appended_lines_are_found_by_the_next_search_on_every_backend() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sample-projects");
    let mut answers = Vec::new();
    for b in backends("appended_lines_are_found_by_the_next_search_on_every_backend") {
        import_all(&b, std::slice::from_ref(&samples));
        let session = listing(&b)[0].session_id.clone();
        let session = b.db.resolve_session(&session).expect("session");
        let find = |text: &str| -> Vec<(String, Option<String>)> {
            let (hits, stale) =
                b.db.search(&sessiondb::search::SearchQuery {
                    text: text.to_owned(),
                    ..Default::default()
                })
                .unwrap_or_else(|e| panic!("{}: search {text:?}: {e}", b.name));
            assert!(stale.is_none(), "{}: {stale:?}", b.name);
            hits.into_iter().map(|h| (h.session_id, h.uuid)).collect()
        };
        assert!(find("quokkalantern").is_empty(), "{}", b.name);
        let entries = [
            serde_json::json!({"type": "user", "uuid": "11111111-1111-4111-8111-111111111111",
                "message": {"role": "user", "content": "where is the quokkalantern?"}}),
            serde_json::json!({"type": "assistant", "uuid": "22222222-2222-4222-8222-222222222222",
                "message": {"role": "assistant", "content": [
                    {"type": "text", "text": "Behind the Quokkalantern shed, with the café."}]}}),
        ];
        b.db.append_with(&session, &entries, &Default::default())
            .unwrap_or_else(|e| panic!("{}: append: {e}", b.name));
        let found = find("quokkalantern");
        assert_eq!(found.len(), 2, "{}: {found:?}", b.name);
        assert_eq!(find("quokkalantern cafe").len(), 1, "{}", b.name);
        // Another append after a search: queued and found again.
        let more = [serde_json::json!({"type": "user",
            "uuid": "33333333-3333-4333-8333-333333333333",
            "message": {"role": "user", "content": "one more quokkalantern"}})];
        b.db.append_with(&session, &more, &Default::default())
            .expect("append");
        let mut found = find("quokkalantern");
        found.sort();
        assert_eq!(found.len(), 3, "{}: {found:?}", b.name);
        answers.push((b.name, found));
    }
    for pair in answers.windows(2) {
        assert_eq!(pair[0].1, pair[1].1, "{} and {}", pair[0].0, pair[1].0);
    }
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
        let first =
            user_line(SESSION, "u1", None, "one") + &user_line(SESSION, "u2", Some("u1"), "two");
        std::fs::write(&path, &first).expect("write");
        let roots = [root.path().to_path_buf()];
        import_all(&b, &roots);
        let session = b.db.resolve_session(SESSION).expect("session");
        let local = serde_json::json!({"type": "user", "uuid": "L1",
            "message": {"role": "user", "content": "written through sessiondb"}});
        b.db.append_with(&session, &[local], &Default::default())
            .expect("append");
        // Claude Code rewrites the file (the second line changed, a third added).
        let second = user_line(SESSION, "u1", None, "one")
            + &user_line(SESSION, "u2", Some("u1"), "two, edited")
            + &user_line(SESSION, "u3", Some("u2"), "three");
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
        let third = user_line(SESSION, "u1", None, "one, again") + &held + "\n";
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

/// Finding a session by what a user typed: a whole id, an id in one project, a unique and
/// an ambiguous prefix, an id stored in two projects, a title, nothing. Both stores give
/// the same session or the same kind of refusal (the team store compares ids by their
/// bytes, through migration V6's index).
#[test]
fn sessions_are_found_by_id_prefix_and_project_on_every_backend() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sample-projects/-home-dev-weather-app")
        .join("7c9d2e41-5b6a-4f80-9a1b-2c3d4e5f6a71.jsonl");
    let tree = tempfile::tempdir().expect("temp dir");
    let ids = [
        ("-p-alpha", "aaaa1111-0000-4000-8000-000000000001"),
        ("-p-alpha", "aaaa2222-0000-4000-8000-000000000002"),
        ("-p-beta", "aaaa1111-0000-4000-8000-000000000001"),
        ("-p-beta", "bbbb3333-0000-4000-8000-000000000003"),
    ];
    for (project, id) in ids {
        let dir = tree.path().join(project);
        std::fs::create_dir_all(&dir).expect("project dir");
        std::fs::copy(&source, dir.join(format!("{id}.jsonl"))).expect("copy");
    }
    let asked = [
        "bbbb3333-0000-4000-8000-000000000003",
        "bbbb",
        "aaaa2",
        "aaaa",
        "aaaa1111-0000-4000-8000-000000000001",
        "-p-beta/aaaa1111-0000-4000-8000-000000000001",
        "-p-alpha/aaaa1",
        "-p-beta/aaaa2",
        "%",
        "zzzz",
    ];
    let mut results = Vec::new();
    for b in backends("sessions_are_found_by_id_prefix_and_project_on_every_backend") {
        import_all(&b, &[tree.path().to_path_buf()]);
        let found: Vec<String> = asked
            .iter()
            .map(|arg| match b.db.resolve_session(arg) {
                Ok(s) => format!("{arg}: {}/{}", s.project, s.session_id),
                Err(sessiondb::Error::AmbiguousSession { .. }) => format!("{arg}: ambiguous"),
                Err(sessiondb::Error::SessionNotFound(_)) => format!("{arg}: not found"),
                Err(e) => panic!("{}: {arg}: {e}", b.name),
            })
            .collect();
        assert_eq!(
            found[..3],
            [
                "bbbb3333-0000-4000-8000-000000000003: -p-beta/bbbb3333-0000-4000-8000-000000000003",
                "bbbb: -p-beta/bbbb3333-0000-4000-8000-000000000003",
                "aaaa2: -p-alpha/aaaa2222-0000-4000-8000-000000000002",
            ],
            "{}",
            b.name
        );
        assert_eq!(found[9], "zzzz: not found", "{}", b.name);
        results.push((b.name, found));
    }
    for pair in results.windows(2) {
        assert_eq!(
            pair[0].1, pair[1].1,
            "{} and {} differ",
            pair[0].0, pair[1].0
        );
    }
}

/// A transcript that grows between imports, as Claude Code writes it: each import stores
/// only what was added, an unterminated last line that grows is stored complete, blank and
/// malformed lines keep their bytes and their line numbers. The file passes 256 KiB early,
/// so that later imports read only its tail, and is finally rewritten, which is read whole.
/// After every step both backends export the file byte for byte and report alike.
#[test]
fn a_growing_file_imports_only_its_new_lines_on_every_backend() {
    let id = "0d6c3a43-0f53-4b53-9a4f-5b0c7a1e2d10";
    let line = |n: usize| {
        format!(
            "{{\"type\":\"user\",\"uuid\":\"00000000-0000-4000-8000-{n:012}\",\"parentUuid\":null,\
             \"sessionId\":\"{id}\",\"timestamp\":\"2026-12-03T10:00:00.000Z\",\
             \"message\":{{\"role\":\"user\",\"content\":\"turn {n} {}\"}}}}",
            "words ".repeat(n % 7 * 40)
        )
    };
    let lines = |from: usize, to: usize| -> String { (from..to).map(|n| line(n) + "\n").collect() };
    let full = line(1004);
    let (head, rest) = full.split_at(40);
    // (text, whether it replaces the file)
    let steps: Vec<(String, bool)> = vec![
        (lines(1, 3), false),
        (lines(3, 1000), false),
        ("\n\n".to_owned(), false),
        (format!("not json\n{}{head}", lines(1000, 1004)), false),
        (format!("{rest}\nnot json either\n"), false),
        (format!("{}\n\n{}", line(1005), line(1006)), false),
        (format!("{}\n", line(1006)), false),
        (lines(1, 900), true),
    ];
    let mut results = Vec::new();
    for b in backends("a_growing_file_imports_only_its_new_lines_on_every_backend") {
        let dir = tempfile::tempdir().expect("tmp");
        let project = dir.path().join("-work-grow");
        std::fs::create_dir_all(&project).expect("mkdir");
        let file = project.join(format!("{id}.jsonl"));
        let mut reports = Vec::new();
        for (text, rewrite) in &steps {
            let before = std::fs::metadata(&file).map_or(0, |m| m.len());
            if *rewrite {
                std::fs::write(&file, text).expect("rewrite");
            } else {
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&file)
                    .expect("open");
                std::io::Write::write_all(&mut f, text.as_bytes()).expect("write");
            }
            let report = import_all(&b, std::slice::from_ref(&project));
            assert_eq!(
                report.files_rewritten,
                u64::from(*rewrite),
                "{}: {report:?}",
                b.name
            );
            let session = b.db.resolve_session(id).expect("session");
            let mut out = Vec::new();
            b.db.export_session(&session, &mut out, OnDamage::Fail)
                .expect("export");
            let want = std::fs::read(&file).expect("read");
            assert!(out == want, "{}: export after {} bytes", b.name, want.len());
            let malformed: Vec<u64> = report.malformed.iter().map(|m| m.line).collect();
            eprintln!(
                "{}: read {} bytes of {}",
                b.name,
                report.bytes_read,
                want.len()
            );
            // Bytes read too: a grown file past 256 KiB is read from its tail on both.
            if before > 300_000 && !rewrite {
                assert!(report.bytes_read < 300_000, "{}: {report:?}", b.name);
            }
            reports.push((
                report.new_rows,
                report.rows,
                report.bytes_read,
                report.malformed_lines,
                malformed,
            ));
        }
        results.push((b.name, reports, listing(&b)));
    }
    for (name, reports, listed) in &results[1..] {
        assert_eq!(reports, &results[0].1, "{name} against sqlite");
        assert_eq!(listed.len(), results[0].2.len(), "{name}");
        assert_eq!(
            listed[0].message_count, results[0].2[0].message_count,
            "{name}"
        );
    }
}
