//! Hand-back without surprises (issue 31): one session id is one session wherever it is
//! restored, `launch` takes what Claude Code wrote since, never picks a folder silently,
//! and `PROJECT/SESSION` arguments starting with `-` need no `--`. Both stores.

use crate::restore::fake_claude;
use crate::support::{copy_tree, pg_db, samples};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PROJECT: &str = "-home-dev-weather-app";
const PLAIN: &str = "7c9d2e41-5b6a-4f80-9a1b-2c3d4e5f6a71";
const LAST_UUID: &str = "5a3e0000-0000-4000-8000-000000000004";

/// A copy of the samples imported into `db` (a file or a team store URL), a config folder
/// for Claude Code, a work folder that exists and a fake `claude`.
struct Bench {
    dir: tempfile::TempDir,
    db: String,
    config: PathBuf,
    work: PathBuf,
    bin: PathBuf,
}

impl Bench {
    fn new(db: Option<&str>) -> Bench {
        let dir = tempfile::tempdir().expect("tmp");
        let source = dir.path().join("source/projects");
        std::fs::create_dir_all(&source).expect("mkdir");
        copy_tree(&samples(), &source);
        let db = db.map_or_else(
            || dir.path().join("s.db").to_string_lossy().into_owned(),
            str::to_owned,
        );
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).expect("mkdir");
        let work = std::fs::canonicalize(work).expect("real");
        let bin = fake_claude(dir.path()).join("claude");
        let b = Bench {
            config: dir.path().join("claude"),
            dir,
            db,
            work,
            bin,
        };
        b.ok(&["import", &source.to_string_lossy()]);
        b
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sessiondb"));
        cmd.arg("--db")
            .arg(&self.db)
            .args(args)
            .env("CLAUDE_CONFIG_DIR", &self.config)
            .env("SESSIONDB_CLAUDE", &self.bin)
            .env("FAKE_CLAUDE_LOG", self.dir.path().join("fake"))
            .env("SESSIONDB_HOST", "handback-test")
            .current_dir(&self.work);
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run sessiondb")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// How many stored sessions have this id.
    fn copies(&self, id: &str) -> usize {
        let listed: Vec<serde_json::Value> =
            serde_json::from_str(&self.ok(&["sessions", "--json"])).expect("json");
        listed.iter().filter(|s| s["session_id"] == id).count()
    }

    /// The main transcript restored for the work folder.
    fn restored(&self) -> PathBuf {
        let project = sessiondb::paths::sanitize_path(&self.work.to_string_lossy());
        self.config
            .join("projects")
            .join(project)
            .join(format!("{PLAIN}.jsonl"))
    }

    /// What Claude Code appends in the work folder: one user turn.
    fn claude_writes(&self, text: &str) {
        let line = serde_json::json!({
            "parentUuid": LAST_UUID, "isSidechain": false, "userType": "external",
            "cwd": self.work, "sessionId": PLAIN, "version": "2.1.88", "type": "user",
            "message": {"role": "user", "content": text},
            "uuid": "5a3e0000-0000-4000-8000-0000000000ff",
            "timestamp": "2026-12-01T10:00:00.000Z"
        });
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(self.restored())
            .expect("open the restored transcript");
        std::io::Write::write_all(&mut file, format!("{line}\n").as_bytes()).expect("append");
    }
}

/// A test case on a SQLite file, and on a team store (ignored without a server).
macro_rules! on_both {
    ($name:ident, $pg_name:ident, $case:expr) => {
        #[test]
        fn $name() {
            ($case)(Bench::new(None));
        }

        #[test]
        #[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
        fn $pg_name() {
            let pg = pg_db(stringify!($pg_name)).expect("a server");
            ($case)(Bench::new(Some(&pg.url)));
        }
    };
}

on_both!(
    a_session_restored_elsewhere_then_imported_stays_one_session_with_two_locations,
    on_a_team_store_a_session_restored_elsewhere_stays_one_session,
    |b: Bench| {
        let work = b.work.to_string_lossy().into_owned();
        let config = b.config.to_string_lossy().into_owned();
        b.ok(&["restore", PLAIN, "--cwd", &work, "--config-dir", &config]);
        let projects = b.config.join("projects");
        b.ok(&["import", &projects.to_string_lossy()]);
        assert_eq!(b.copies(PLAIN), 1, "{}", b.db);
        // The full id is not ambiguous.
        let info = b.ok(&["info", PLAIN]);
        let places: Vec<&str> = info.lines().filter(|l| l.starts_with("location")).collect();
        assert_eq!(places.len(), 2, "{info}");
        assert!(
            places[1].contains(&*b.restored().to_string_lossy()),
            "{info}"
        );
        // Claude Code goes on in the new folder: its turn joins the same session.
        b.claude_writes("carry on over here");
        b.ok(&["import", &projects.to_string_lossy()]);
        assert_eq!(b.copies(PLAIN), 1);
        let exported = b.ok(&["export", PLAIN]);
        assert!(exported.contains("carry on over here"), "{exported}");
    }
);

on_both!(
    launch_after_claude_code_wrote_imports_the_file_and_continues,
    on_a_team_store_launch_after_claude_code_wrote_continues,
    |b: Bench| {
        let work = b.work.to_string_lossy().into_owned();
        b.ok(&["launch", PLAIN, "--cwd", &work]);
        b.claude_writes("one more thing");
        let out = b.run(&["launch", PLAIN, "--cwd", &work]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let args = std::fs::read_to_string(b.dir.path().join("fake.args")).expect("ran");
        assert_eq!(args, format!("--resume\n{PLAIN}\n"));
        assert!(b.ok(&["export", PLAIN]).contains("one more thing"));
        assert_eq!(b.copies(PLAIN), 1);
        // The file Claude Code wrote is left as it was.
        let file = std::fs::read_to_string(b.restored()).expect("read");
        assert_eq!(file.matches("one more thing").count(), 1);
    }
);

#[test]
fn launch_asks_for_a_folder_when_the_recorded_one_is_missing() {
    let b = Bench::new(None);
    // The recorded cwd is /home/dev/weather-app, which does not exist here.
    assert!(!Path::new("/home/dev/weather-app").exists());
    let out = b.run(&["launch", PLAIN]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/home/dev/weather-app") && err.contains("--cwd") && err.contains("--here"),
        "{err}"
    );
    assert!(!b.dir.path().join("fake.args").exists(), "not run");
    assert!(!b.config.join("projects").exists(), "nothing restored");
    b.ok(&["launch", PLAIN, "--here"]);
    let cwd = std::fs::read_to_string(b.dir.path().join("fake.cwd")).expect("ran");
    assert_eq!(cwd.trim(), b.work.to_string_lossy());
}

#[test]
fn project_slash_session_starting_with_a_dash_needs_no_double_dash() {
    let b = Bench::new(None);
    let arg = format!("{PROJECT}/{PLAIN}");
    for verb in ["info", "messages", "export", "resume"] {
        b.ok(&[verb, &arg]);
    }
    b.ok(&["tag", &arg, "--no-write-back", "x"]);
    let info = b.ok(&["info", &arg, "--json"]);
    assert!(info.contains(PLAIN));
}

on_both!(
    search_finds_titles_and_prefixes,
    on_a_team_store_search_finds_titles_and_prefixes,
    |b: Bench| {
        b.ok(&["rename", PLAIN, "Quagga migration plan", "--no-write-back"]);
        for query in ["quagga", "QUAGGA plan", "quag*", "migr* quagga"] {
            let hits: Vec<serde_json::Value> =
                serde_json::from_str(&b.ok(&["search", query, "--json"])).expect("json");
            assert_eq!(hits.len(), 1, "{query}: {hits:?}");
            assert_eq!(hits[0]["session_id"], PLAIN, "{query}");
            assert_eq!(hits[0]["role"], "title", "{query}");
            assert_eq!(hits[0]["title"], "Quagga migration plan", "{query}");
            assert!(
                hits[0]["snippet"].as_str().unwrap().contains("**"),
                "{query}"
            );
        }
        // A prefix finds message words too, and marks them.
        let hits: Vec<serde_json::Value> =
            serde_json::from_str(&b.ok(&["search", "forec*", "--json"])).expect("json");
        assert!(
            hits.iter()
                .any(|h| h["role"] == "user" && h["snippet"].as_str().unwrap().contains("**forec")),
            "{hits:?}"
        );
        // --role leaves titles out; a word no title and no message holds finds nothing.
        let out = b.run(&["search", "quagga", "--role", "user", "--json"]);
        assert_eq!(out.status.code(), Some(1));
        // Text: grouped by session, each group named by its short id and project.
        let text = b.ok(&["search", "forecast", "--color", "never"]);
        let headers: Vec<&str> = text.lines().filter(|l| !l.starts_with(' ')).collect();
        assert!(
            headers
                .iter()
                .any(|h| h.starts_with(&PLAIN[..8]) && h.contains(PROJECT)),
            "{text}"
        );
        let mut ids: Vec<&str> = headers.iter().map(|h| &h[..8]).collect();
        let before = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), before, "one group per session: {text}");
    }
);

#[test]
fn search_says_no_matches_on_a_terminal_and_still_exits_1() {
    let b = Bench::new(None);
    let command = format!(
        "{} --db {} search zebrafinch",
        env!("CARGO_BIN_EXE_sessiondb"),
        b.db
    );
    // `script` gives the process a terminal.
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("run script");
    assert_eq!(out.status.code(), Some(1));
    let seen = String::from_utf8_lossy(&out.stdout);
    assert!(seen.contains("no matches for zebrafinch"), "{seen}");
    // Not on a terminal: nothing, as before (scripts read the exit status).
    let out = b.run(&["search", "zebrafinch"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
}
