//! `--write-back` on rename, tag, append and fork, `config set write_back`, and the default
//! (rename, tag and fork write back when the session's file is there).

use crate::support::{assert_success, copy_tree, output_with_stdin, samples, sessiondb_command};
use sessiondb::Store;
use std::path::{Path, PathBuf};
use std::process::Output;

const PROJECT: &str = "-home-dev-weather-app";
const SESSION: &str = "8e1f3a52-6c7b-4091-8b2c-3d4e5f6a7b82";

struct Setup {
    dir: tempfile::TempDir,
    projects: PathBuf,
    db: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().expect("tmp");
        let projects = dir.path().join("claude/projects");
        std::fs::create_dir_all(&projects).expect("mkdir");
        copy_tree(&samples(), &projects);
        let db = dir.path().join("s.db");
        let s = Setup { dir, projects, db };
        assert_success(&s.run(&["import", &s.projects.to_string_lossy()], b""));
        s
    }

    fn run(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut command = sessiondb_command(&self.db);
        command
            .args(args)
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"));
        output_with_stdin(command, stdin)
    }

    fn file(&self, session: &str) -> PathBuf {
        self.projects.join(PROJECT).join(format!("{session}.jsonl"))
    }

    fn exported(&self, session: &str) -> Vec<u8> {
        let out = self.run(&["export", session], b"");
        assert_success(&out);
        out.stdout
    }

    /// A re-import finds nothing new: the ledger knows the file as sessiondb wrote it.
    fn reimport_adds_nothing(&self) {
        let out = self.run(&["import", &self.projects.to_string_lossy(), "--json"], b"");
        assert_success(&out);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(report["new_rows"], 0, "{report}");
        assert_eq!(report["files_rewritten"], 0, "{report}");
        assert_eq!(report["files_imported"], 0, "{report}");
    }
}

fn rows(db: &Path) -> i64 {
    let store = Store::open(db).expect("open");
    let conn = store.reader().expect("reader");
    conn.query_row("SELECT count(*) FROM rows", [], |r| r.get(0))
        .expect("count")
}

#[test]
fn rename_tag_and_append_write_the_same_lines_to_claude_codes_file() {
    let s = Setup::new();
    let before = std::fs::read(s.file(SESSION)).expect("read");
    assert_success(&s.run(
        &["rename", SESSION, "Callers of fetch", "--write-back"],
        b"",
    ));
    let after = std::fs::read(s.file(SESSION)).expect("read");
    assert!(after.starts_with(&before), "appended, nothing rewritten");
    assert_eq!(
        String::from_utf8_lossy(&after[before.len()..]),
        format!("{{\"type\":\"custom-title\",\"customTitle\":\"Callers of fetch\",\"sessionId\":\"{SESSION}\"}}\n")
    );
    assert_eq!(
        after,
        s.exported(SESSION),
        "the file equals the stored session"
    );
    s.reimport_adds_nothing();

    assert_success(&s.run(&["tag", SESSION, "review", "--write-back"], b""));
    assert_success(&s.run(&["tag", SESSION, "--clear", "--write-back"], b""));
    let entry = concat!(
        r#"{"type":"user","message":{"role":"user","content":"one more"},"#,
        r#""uuid":"11111111-0000-4000-8000-000000000001","timestamp":"2026-12-03T10:00:00.000Z"}"#,
        "\n"
    );
    assert_success(&s.run(&["append", SESSION, "--write-back"], entry.as_bytes()));
    let file = std::fs::read(s.file(SESSION)).expect("read");
    assert_eq!(file, s.exported(SESSION));
    let text = String::from_utf8_lossy(&file);
    assert!(text.contains("\"tag\":\"review\""));
    assert!(text.contains("\"content\":\"one more\""));
    s.reimport_adds_nothing();
}

#[test]
fn fork_write_back_puts_the_fork_beside_the_source() {
    let s = Setup::new();
    let out = s.run(&["fork", SESSION, "--write-back"], b"");
    assert_success(&out);
    let id = String::from_utf8(out.stdout)
        .expect("utf8")
        .trim()
        .to_owned();
    let fork = s.file(&id);
    assert_eq!(std::fs::read(&fork).expect("fork file"), s.exported(&id));
    s.reimport_adds_nothing();
}

#[test]
fn write_back_refuses_when_the_file_moved_on_and_changes_nothing() {
    let s = Setup::new();
    // Claude Code wrote to the file after the import.
    let path = s.file(SESSION);
    let mut grown = std::fs::read(&path).expect("read");
    grown.extend_from_slice(b"{\"type\":\"last-prompt\",\"lastPrompt\":\"x\"}\n");
    std::fs::write(&path, &grown).expect("write");
    let rows_before = rows(&s.db);
    for args in [
        vec!["rename", SESSION, "T", "--write-back"],
        vec!["tag", SESSION, "t", "--write-back"],
        vec!["fork", SESSION, "--write-back"],
    ] {
        let out = s.run(&args, b"");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("Claude Code wrote 40 bytes"), "{err}");
        assert!(err.contains("nothing was changed"), "{err}");
    }
    assert_eq!(rows(&s.db), rows_before, "the database is unchanged");
    assert_eq!(std::fs::read(&path).expect("read"), grown, "the file too");
    std::fs::write(
        &path,
        &grown[..grown.len() - b"{\"type\":\"last-prompt\",\"lastPrompt\":\"x\"}\n".len()],
    )
    .expect("restore");

    // The database gained a line without write-back: the file lacks it.
    assert_success(&s.run(&["rename", SESSION, "Stored only", "--no-write-back"], b""));
    let out = s.run(&["tag", SESSION, "t", "--write-back"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the database holds"));

    // A deleted file.
    std::fs::remove_file(&path).expect("rm");
    let out = s.run(&["tag", SESSION, "t", "--write-back"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("was deleted"));
}

#[test]
fn config_write_back_makes_it_the_default() {
    let s = Setup::new();
    // Unset is not `false` (issue 31): the verbs then write back when the file is there.
    let out = s.run(&["config", "get", "write_back"], b"");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "unset: rename, tag and fork write back when the session's file is there; append does not"
    );
    assert_success(&s.run(&["config", "set", "write_back", "true"], b""));
    let out = s.run(&["config", "get", "write_back"], b"");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "true");
    let path = s.dir.path().join("config/sessiondb/config.toml");
    assert_eq!(
        std::fs::read_to_string(&path).expect("config"),
        "write_back = true\n"
    );
    let before = std::fs::read(s.file(SESSION)).expect("read");
    assert_success(&s.run(&["rename", SESSION, "By default"], b""));
    let after = std::fs::read(s.file(SESSION)).expect("read");
    assert!(String::from_utf8_lossy(&after[before.len()..]).contains("By default"));
    assert_success(&s.run(&["rename", SESSION, "Not this one", "--no-write-back"], b""));
    assert_eq!(std::fs::read(s.file(SESSION)).expect("read"), after);
    let out = s.run(&["config", "set", "write_back", "maybe"], b"");
    assert_eq!(out.status.code(), Some(1));
    let out = s.run(&["config", "set", "colour", "true"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown setting"));
}

#[test]
fn rename_tag_and_fork_reach_claude_code_by_default_when_its_file_is_there() {
    let s = Setup::new();
    let path = s.file(SESSION);
    assert_success(&s.run(&["rename", SESSION, "By default"], b""));
    assert_success(&s.run(&["tag", SESSION, "review"], b""));
    let file = std::fs::read(&path).expect("read");
    assert_eq!(file, s.exported(SESSION), "both reached the file");
    let text = String::from_utf8_lossy(&file);
    assert!(text.contains("By default") && text.contains("\"tag\":\"review\""));
    // A fork is written beside it, without the source's tag.
    let out = s.run(&["fork", SESSION], b"");
    assert_success(&out);
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let fork = std::fs::read_to_string(s.file(&id)).expect("the fork's file");
    assert!(fork.contains("By default"), "the title is inherited");
    assert!(!fork.contains("\"type\":\"tag\""), "the tag is not: {fork}");
    s.reimport_adds_nothing();
    // --no-write-back keeps a change in the database; append keeps its old default.
    assert_success(&s.run(&["rename", SESSION, "Stored only", "--no-write-back"], b""));
    assert_eq!(std::fs::read(&path).expect("read"), file);
    // A file Claude Code wrote to since: the change is stored, the file left, a warning.
    let s = Setup::new();
    let path = s.file(SESSION);
    let mut grown = std::fs::read(&path).expect("read");
    grown.extend_from_slice(b"{\"type\":\"last-prompt\",\"lastPrompt\":\"x\"}\n");
    std::fs::write(&path, &grown).expect("write");
    let out = s.run(&["tag", SESSION, "later"], b"");
    assert_success(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Claude Code wrote 40 bytes"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&path).expect("read"), grown);
    let info = String::from_utf8(s.run(&["info", SESSION, "--json"], b"").stdout).expect("utf8");
    assert!(info.contains("\"later\""), "{info}");
    // The setting stays: write_back = false keeps every change in the database.
    std::fs::write(&path, &grown[..grown.len() - 40]).expect("as before");
    assert_success(&s.run(&["config", "set", "write_back", "false"], b""));
    let before = std::fs::read(&path).expect("read");
    assert_success(&s.run(&["rename", SESSION, "Not written"], b""));
    assert_eq!(std::fs::read(&path).expect("read"), before);
}
