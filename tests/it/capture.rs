//! Live capture: `sessiondb capture` fed the hook payloads Claude Code 2.1.332 sent
//! (tests/fixtures/hooks/), and `sessiondb hooks install | uninstall | status`.

use crate::support::{
    copy_tree, count, dump_rows, import, output_with_stdin, samples, sessiondb_command,
};
use sessiondb::Store;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A Claude Code home, a working directory and a state folder, all temporary.
pub(crate) struct Home {
    _dir: tempfile::TempDir,
    pub(crate) config: PathBuf,
    pub(crate) cwd: PathBuf,
    pub(crate) state: PathBuf,
    pub(crate) db: PathBuf,
}

impl Home {
    pub(crate) fn new() -> Home {
        let dir = tempfile::tempdir().expect("tmp");
        let config = dir.path().join("claude");
        let cwd = dir.path().join("work");
        std::fs::create_dir_all(&cwd).expect("cwd");
        Home {
            config,
            cwd,
            state: dir.path().join("state"),
            db: dir.path().join("s.db"),
            _dir: dir,
        }
    }

    pub(crate) fn project(&self) -> String {
        sessiondb::paths::sanitize_path(&self.cwd.to_string_lossy())
    }

    /// A recorded payload with its placeholders filled in for this home.
    pub(crate) fn payload(&self, name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hooks")
            .join(format!("{name}.json"));
        std::fs::read_to_string(path)
            .expect("fixture")
            .replace("@CONFIG@", &self.config.to_string_lossy())
            .replace("@CWD@", &self.cwd.to_string_lossy())
            .replace("@PROJECT@", &self.project())
    }

    pub(crate) fn sessiondb(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut command = sessiondb_command(&self.db);
        command
            .args(args)
            .env("CLAUDE_CONFIG_DIR", &self.config)
            .env("XDG_STATE_HOME", &self.state);
        output_with_stdin(command, stdin)
    }

    pub(crate) fn capture(&self, payload: &str) -> Output {
        let out = self.sessiondb(&["capture"], payload.as_bytes());
        assert_eq!(out.status.code(), Some(0), "capture always exits 0");
        assert!(out.stdout.is_empty(), "capture prints nothing on stdout");
        out
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.state.join("sessiondb/capture.log")).unwrap_or_default()
    }
}

pub(crate) const SESSION: &str = "5992899e-5e2b-4509-8109-e2acee6ef1ef";
const AGENT: &str = "a0beefc2b23ca0f8e";

pub(crate) fn line(n: usize, extra: &str) -> String {
    format!(
        "{{\"parentUuid\":null,\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"turn {n}\"}},\"uuid\":\"00000000-0000-4000-8000-{n:012}\",\"timestamp\":\"2026-12-03T10:00:{:02}.000Z\",\"sessionId\":\"{SESSION}\"{extra}}}\n",
        n % 60
    )
}

pub(crate) fn append(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open");
    f.write_all(text.as_bytes()).expect("append");
}

pub(crate) fn rows_of(store: &Store, subpath: &str) -> i64 {
    store
        .reader()
        .expect("reader")
        .query_row(
            "SELECT count(*) FROM rows r JOIN transcripts t ON t.id = r.transcript_id
             WHERE t.subpath = ?1 AND t.superseded_at IS NULL",
            [subpath],
            |r| r.get(0),
        )
        .expect("count")
}

#[test]
fn every_recorded_event_captures_its_session_incrementally() {
    let home = Home::new();
    let main = home
        .config
        .join("projects")
        .join(home.project())
        .join(format!("{SESSION}.jsonl"));
    let folder = main.with_extension("");
    let agent = folder.join(format!("subagents/agent-{AGENT}.jsonl"));
    append(&main, &line(1, ""));
    append(&agent, &line(2, ",\"isSidechain\":true"));
    append(
        &folder.join(format!("subagents/agent-{AGENT}.meta.json")),
        "{\"agentType\":\"general-purpose\"}",
    );
    append(&folder.join("tool-results/toolu_1.txt"), "big output\n");

    home.capture(&home.payload("stop-subagent-running"));
    let store = Store::open(&home.db).expect("open");
    assert_eq!(rows_of(&store, ""), 1);
    assert_eq!(rows_of(&store, &format!("subagents/agent-{AGENT}")), 1);
    assert_eq!(count(&store, "session_files"), 2, "sidecar and tool result");

    // Each event after a turn: the file grew by one line, and only that line is added.
    let events = [
        "subagent-stop",
        "stop",
        "session-end",
        "pre-compact",
        "subagent-stop-compact-agent",
        "session-end-after-compact",
        "stop-after-compact",
        "session-end-last",
    ];
    for (i, event) in events.iter().enumerate() {
        let n = i + 3;
        if *event == "subagent-stop" {
            append(&agent, &line(n, ",\"isSidechain\":true"));
        } else {
            append(&main, &line(n, ""));
        }
        home.capture(&home.payload(event));
        let main_rows = rows_of(&store, "");
        let agent_rows = rows_of(&store, &format!("subagents/agent-{AGENT}"));
        assert_eq!(
            (main_rows + agent_rows) as usize,
            n,
            "after {event}: every line written so far is stored once"
        );
    }
    assert_eq!(
        count(&store, "transcripts"),
        2,
        "never re-imported as a new version"
    );
    // The compaction agent's transcript is named but never written: not a failure.
    assert_eq!(home.log(), "", "no failures logged");
    let status = home.sessiondb(&["hooks", "status"], b"");
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("last capture: 20"), "{text}");
    assert!(text.contains("(SessionEnd)"), "{text}");
    assert!(text.contains("last failure: never"), "{text}");
}

#[test]
fn capture_of_a_session_equals_an_import_of_it() {
    let home = Home::new();
    let samples = samples();
    let project = home.config.join("projects").join("-home-dev-weather-app");
    std::fs::create_dir_all(&project).expect("mkdir");
    let entry = "8e1f3a52-6c7b-4091-8b2c-3d4e5f6a7b82";
    copy_tree(&samples.join("-home-dev-weather-app"), &project);
    let payload = serde_json::json!({
        "session_id": entry,
        "transcript_path": project.join(format!("{entry}.jsonl")),
        "cwd": "/home/dev/weather-app",
        "hook_event_name": "Stop",
    });
    home.capture(&payload.to_string());
    let captured = Store::open(&home.db).expect("open");
    let dir = tempfile::tempdir().expect("tmp");
    let imported = Store::open(dir.path().join("i.db")).expect("open");
    import(&imported, &[&project]);
    let want: Vec<_> = dump_rows(&imported)
        .into_iter()
        .filter(|r| r.0 == "8e1f3a52-6c7b-4091-8b2c-3d4e5f6a7b82")
        .collect();
    let got = dump_rows(&captured);
    assert_eq!(got.len(), want.len());
    assert!(got == want, "capture stored the session as import does");
    assert_eq!(count(&captured, "session_files"), 2);
    assert_eq!(
        count(&captured, "sessions"),
        1,
        "the other session of the project is not captured"
    );
}

#[test]
fn failures_go_to_the_log_never_to_claude_code() {
    let home = Home::new();
    let out = home.capture("this is not a payload");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        home.log().contains("not what Claude Code sends"),
        "{}",
        home.log()
    );
    // A transcript that is not JSON Lines at all is still imported verbatim; a path that is
    // not a transcript is a failure.
    let payload = serde_json::json!({
        "session_id": "x", "transcript_path": "relative/x.jsonl", "hook_event_name": "Stop"
    });
    home.capture(&payload.to_string());
    let log = home.log();
    assert_eq!(log.lines().count(), 2, "{log}");
    assert!(
        log.lines().nth(1).is_some_and(|l| l.contains(" Stop x: ")),
        "{log}"
    );
    let status = home.sessiondb(&["hooks", "status", "--json"], b"");
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).expect("json");
    assert!(status["capture"]["last_failure"].is_string(), "{status}");
    assert_eq!(status["capture"]["last_event"], "Stop");
}

#[test]
fn capture_gives_up_when_the_database_stays_busy() {
    let home = Home::new();
    let main = home
        .config
        .join("projects")
        .join(home.project())
        .join(format!("{SESSION}.jsonl"));
    append(&main, &line(1, ""));
    drop(Store::open(&home.db).expect("create"));
    let blocker = rusqlite::Connection::open(&home.db).expect("open");
    blocker
        .execute_batch("BEGIN IMMEDIATE; CREATE TABLE hold(x);")
        .expect("hold the write lock");
    let started = std::time::Instant::now();
    home.capture(&home.payload("stop"));
    let waited = started.elapsed();
    // Store::open's own busy timeout is 10 s: capture must stop well before that.
    assert!(waited.as_secs_f64() < 8.0, "waited {waited:?}");
    assert!(home.log().contains("locked"), "{}", home.log());
    blocker.execute_batch("ROLLBACK").expect("release");
    home.capture(&home.payload("stop"));
    let store = Store::open(&home.db).expect("open");
    assert_eq!(rows_of(&store, ""), 1, "the next capture catches up");
}

// ---- hooks install / uninstall / status ----

fn settings_of(home: &Home) -> PathBuf {
    home.config.join("settings.json")
}

fn write_settings(home: &Home, text: &str) {
    std::fs::create_dir_all(&home.config).expect("mkdir");
    std::fs::write(settings_of(home), text).expect("write settings");
}

#[test]
fn install_adds_four_hooks_keeps_the_rest_and_uninstall_undoes_it() {
    let shapes = [
        // no file at all
        None,
        Some("{}"),
        Some(r#"{"model":"opus","permissions":{"allow":["Bash(ls:*)"]},"cleanupPeriodDays":365}"#),
        Some(
            r#"{"hooks":{"Stop":[{"matcher":"","hooks":[{"type":"command","command":"notify-send done","timeout":5}]}],
                "PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"check.sh"}]}]},
                "env":{"A":"1"},"statusLine":{"type":"command","command":"x"}}"#,
        ),
        Some(r#"{"hooks":{}, "list":[1,2.5,"\u00e9",null,true]}"#),
    ];
    for shape in shapes {
        let home = Home::new();
        if let Some(text) = shape {
            write_settings(&home, text);
        }
        let out = home.sessiondb(&["hooks", "install"], b"");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let installed: serde_json::Value =
            serde_json::from_slice(&std::fs::read(settings_of(&home)).expect("read"))
                .expect("valid JSON");
        let binary = std::fs::canonicalize(env!("CARGO_BIN_EXE_sessiondb")).expect("bin");
        let db = std::path::absolute(&home.db).expect("abs");
        let want = format!("{} --db {} capture", binary.display(), db.display());
        for event in ["Stop", "SubagentStop", "PreCompact", "SessionEnd"] {
            let groups = installed["hooks"][event].as_array().expect("list");
            let ours: Vec<_> = groups
                .iter()
                .filter(|g| g["hooks"][0]["command"] == want.as_str())
                .collect();
            assert_eq!(ours.len(), 1, "{event} in {installed}");
        }
        if let Some(text) = shape {
            let before: serde_json::Value = serde_json::from_str(text).expect("json");
            for (key, value) in before.as_object().expect("object") {
                if key != "hooks" {
                    assert_eq!(&installed[key], value, "{key} kept");
                }
            }
            if let Some(stop) = before["hooks"]["Stop"].as_array() {
                assert_eq!(
                    installed["hooks"]["Stop"][0], stop[0],
                    "other Stop hook kept"
                );
                assert_eq!(
                    installed["hooks"]["PreToolUse"],
                    before["hooks"]["PreToolUse"]
                );
            }
            let bak = home.config.join("settings.json.sessiondb.bak");
            assert_eq!(std::fs::read_to_string(bak).expect("backup"), text);
        }
        // A second install changes nothing, byte for byte.
        let first = std::fs::read(settings_of(&home)).expect("read");
        let out = home.sessiondb(&["hooks", "install"], b"");
        assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to change"));
        assert_eq!(std::fs::read(settings_of(&home)).expect("read"), first);
        let status = home.sessiondb(&["hooks", "status"], b"");
        let text = String::from_utf8_lossy(&status.stdout);
        assert_eq!(text.matches(" installed: ").count(), 4, "{text}");
        assert!(text.contains("last capture: never"), "{text}");

        let out = home.sessiondb(&["hooks", "uninstall"], b"");
        assert!(out.status.success());
        match shape {
            None => assert!(
                !settings_of(&home).exists(),
                "the file install created is removed"
            ),
            Some(text) if text.contains(r#""hooks":{}"#) => {
                // An empty `hooks` object is not told apart from one install created.
                let after: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(settings_of(&home)).expect("read"))
                        .expect("valid JSON");
                let mut before: serde_json::Value = serde_json::from_str(text).expect("json");
                before.as_object_mut().expect("obj").remove("hooks");
                assert_eq!(after, before);
            }
            Some(text) => assert_eq!(
                std::fs::read_to_string(settings_of(&home)).expect("read"),
                text,
                "uninstall removes exactly what install added, byte for byte"
            ),
        }
        let status = home.sessiondb(&["hooks", "status"], b"");
        let text = String::from_utf8_lossy(&status.stdout);
        assert_eq!(text.matches("not installed").count(), 4, "{text}");
    }
}

#[test]
fn settings_that_are_not_valid_json_are_refused_untouched() {
    for text in [
        "{\"hooks\": {\n  \"Stop\": [,]\n}}",
        "// comment\n{}",
        "[1, 2]",
        "{\"hooks\": []}",
        "{\"hooks\": {\"Stop\": {\"command\": \"x\"}}}",
    ] {
        let home = Home::new();
        write_settings(&home, text);
        for verb in ["install", "uninstall"] {
            let out = home.sessiondb(&["hooks", verb], b"");
            assert_eq!(out.status.code(), Some(1), "{text}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("settings.json"), "{err}");
            assert!(err.contains("left untouched"), "{err}");
            assert_eq!(
                std::fs::read_to_string(settings_of(&home)).expect("read"),
                text
            );
            assert!(!home.config.join("settings.json.sessiondb.bak").exists());
        }
    }
    let home = Home::new();
    write_settings(&home, "{\n  \"a\": 1,\n  \"b\": }\n");
    let out = home.sessiondb(&["hooks", "install"], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 3"), "{err}");
}

#[test]
fn install_honours_an_explicit_settings_path_and_keeps_its_mode() {
    let home = Home::new();
    let path = home.cwd.join(".claude/settings.local.json");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, "{\"x\":1}").expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    }
    let out = home.sessiondb(
        &["hooks", "install", "--settings", &path.to_string_lossy()],
        b"",
    );
    assert!(out.status.success());
    assert!(
        !settings_of(&home).exists(),
        "the default file is not touched"
    );
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains("SubagentStop"), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }
}

#[test]
fn captures_leave_the_wal_to_a_background_checkpoint() {
    let home = Home::new();
    let main = home
        .config
        .join("projects")
        .join(home.project())
        .join(format!("{SESSION}.jsonl"));
    let wal = PathBuf::from(format!("{}-wal", home.db.display()));
    let wal_size = || std::fs::metadata(&wal).map_or(0, |m| m.len());
    // Made and closed here: creating the schema fills more than the limit of WAL.
    drop(Store::open(&home.db).expect("create"));
    assert_eq!(wal_size(), 0);
    append(&main, &line(1, ""));
    home.capture(&home.payload("stop"));
    append(&main, &line(2, ""));
    home.capture(&home.payload("stop"));
    let small = wal_size();
    assert!(small > 0, "the WAL is kept between two small captures");
    assert!(
        small <= sessiondb::capture::CHECKPOINT_ABOVE_BYTES,
        "{small}"
    );
    // A turn with a large tool result grows the WAL past the limit: that capture starts
    // `capture --checkpoint` in the background and exits without waiting for it, which
    // copies the WAL into the database file; SQLite then removes it (or, when another
    // connection came meanwhile, leaves it copied, to be written over from its start).
    // Random letters: lines are stored compressed (issue 30), and a repeated letter would
    // shrink to nothing.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let big: String = (0..8 * 1024 * 1024)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from(
                b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                    [(state % 62) as usize],
            )
        })
        .collect();
    append(&main, &line(3, &format!(",\"toolUseResult\":\"{big}\"")));
    home.capture(&home.payload("stop"));
    // Waits for that process (not a timing test: a generous bound for a loaded machine).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while wal_size() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(wal_size(), 0, "the background checkpoint copied the WAL");
    let store = Store::open(&home.db).expect("open");
    assert_eq!(rows_of(&store, ""), 3);
    assert_eq!(home.log(), "");
}

#[test]
fn capture_checkpoint_copies_the_wal_and_creates_nothing() {
    let home = Home::new();
    let out = home.sessiondb(&["capture", "--checkpoint"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    assert!(!home.db.exists(), "no database is created");
    assert!(home.log().contains("checkpoint"), "{}", home.log());
    let main = home
        .config
        .join("projects")
        .join(home.project())
        .join(format!("{SESSION}.jsonl"));
    append(&main, &line(1, ""));
    home.capture(&home.payload("stop"));
    let wal = PathBuf::from(format!("{}-wal", home.db.display()));
    assert!(std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0));
    let out = home.sessiondb(&["capture", "--checkpoint"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(!wal.exists(), "the last connection removed the copied WAL");
    let store = Store::open(&home.db).expect("open");
    assert_eq!(rows_of(&store, ""), 1);
}

/// Given a team store's URL (by `--db` or `SESSIONDB_PATH`) whose server cannot be reached,
/// `capture` logs why (password hidden) and exits 0, `hooks install` refuses before writing
/// the settings, and neither takes the URL for a file name to create.
#[test]
fn an_unreachable_team_store_is_logged_and_not_installed_never_taken_for_a_file() {
    let mut home = Home::new();
    let url = "postgres://team:pw-secret@127.0.0.1:1/sessions";
    home.db = PathBuf::from(url);
    let run = |args: &[&str], stdin: &[u8], by_env: bool| {
        let mut command = if by_env {
            let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb"));
            c.env("SESSIONDB_PATH", url);
            c
        } else {
            sessiondb_command(&home.db)
        };
        command
            .args(args)
            .current_dir(&home.cwd)
            .env("CLAUDE_CONFIG_DIR", &home.config)
            .env("XDG_STATE_HOME", &home.state)
            .env("PGPASSFILE", home.cwd.join("no-such-pgpass"));
        output_with_stdin(command, stdin)
    };
    let payload = home.payload("stop");
    for by_env in [false, true] {
        let out = run(&["capture"], payload.as_bytes(), by_env);
        assert_eq!(out.status.code(), Some(0), "capture always exits 0");
        let out = run(&["hooks", "install"], b"", by_env);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("hooks not installed") && err.contains("postgres://team@127.0.0.1:1/"),
            "{err}"
        );
        assert!(!err.contains("pw-secret"), "{err}");
    }
    let log = home.log();
    assert_eq!(
        log.matches("cannot connect to postgres://team:***@127.0.0.1:1/")
            .count(),
        2,
        "{log}"
    );
    assert!(!log.contains("pw-secret"), "{log}");
    assert!(!settings_of(&home).exists(), "settings written");
    let made: Vec<_> = std::fs::read_dir(&home.cwd)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(made.is_empty(), "created {made:?}");
}

/// The hooks on a team store: `hooks install` names it in the hook by its URL without the
/// password, and the installed command, run as Claude Code runs it, stores each event's new
/// lines once, the session folder's files beside them, never a second version.
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn installed_hooks_capture_into_a_team_store_without_its_password_in_the_settings() {
    let Some(pg) = crate::support::pg_db("installed_hooks_capture_into_a_team_store") else {
        return;
    };
    let mut home = Home::new();
    // The test server trusts every login: the password is only there to be left out.
    let with_password = pg
        .url
        .replacen("://sessiondb@", "://sessiondb:pw-secret@", 1);
    assert_ne!(with_password, pg.url, "the test URL names user sessiondb");
    home.db = PathBuf::from(&with_password);
    let out = home.sessiondb(&["hooks", "install"], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let settings = std::fs::read_to_string(settings_of(&home)).expect("settings");
    assert!(!settings.contains("pw-secret"), "{settings}");
    let parsed: serde_json::Value = serde_json::from_str(&settings).expect("json");
    let command = parsed["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .expect("the Stop hook's command")
        .to_owned();
    assert!(command.contains(&pg.url), "{command}");
    let hook = |payload: &str| {
        let mut sh = std::process::Command::new("sh");
        // Claude Code runs its hooks in its own environment, which names its config folder
        // when that is not ~/.claude: capture takes only transcripts under that folder.
        sh.args(["-c", &command])
            .env("CLAUDE_CONFIG_DIR", &home.config)
            .env("XDG_STATE_HOME", &home.state)
            .env_remove("SESSIONDB_PATH");
        let out = output_with_stdin(sh, payload.as_bytes());
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty() && out.stderr.is_empty());
    };

    let main = home
        .config
        .join("projects")
        .join(home.project())
        .join(format!("{SESSION}.jsonl"));
    let folder = main.with_extension("");
    let agent = folder.join(format!("subagents/agent-{AGENT}.jsonl"));
    append(&main, &line(1, ""));
    append(&agent, &line(2, ",\"isSidechain\":true"));
    append(&folder.join("tool-results/toolu_1.txt"), "big output\n");
    hook(&home.payload("stop-subagent-running"));
    let mut client = postgres::Client::connect(&pg.url, postgres::NoTls).expect("connect");
    let mut rows = |subpath: &str| -> i64 {
        client
            .query_one(
                "SELECT count(*) FROM rows r JOIN transcripts t ON t.id = r.transcript_id
                 WHERE t.subpath = $1 AND t.superseded_at IS NULL",
                &[&subpath],
            )
            .expect("count")
            .get(0)
    };
    let agent_subpath = format!("subagents/agent-{AGENT}");
    assert_eq!((rows(""), rows(&agent_subpath)), (1, 1));
    for (i, event) in ["subagent-stop", "stop", "session-end"].iter().enumerate() {
        let n = i + 3;
        if *event == "subagent-stop" {
            append(&agent, &line(n, ",\"isSidechain\":true"));
        } else {
            append(&main, &line(n, ""));
        }
        hook(&home.payload(event));
        assert_eq!(rows("") + rows(&agent_subpath), n as i64, "after {event}");
    }
    assert_eq!(home.log(), "", "no failures logged");
    let mut client = postgres::Client::connect(&pg.url, postgres::NoTls).expect("connect");
    let mut count = |sql: &str| -> i64 { client.query_one(sql, &[]).expect(sql).get(0) };
    let versions = count("SELECT count(*) FROM transcripts");
    let files = count("SELECT count(*) FROM session_files");
    assert_eq!((versions, files), (2, 1), "never a second version");
    // What capture stored is the file, byte for byte.
    let out = crate::support::sessiondb_command(Path::new(&pg.url))
        .args(["export", SESSION])
        .output()
        .expect("export");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        std::fs::read_to_string(&main).expect("main"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
