//! `sessiondb pick` used as a person uses it (issue 31): in a real terminal (tmux), keys
//! sent with `send-keys`, the screen read with `capture-pane`; Enter and Ctrl-O hand the
//! session to a stub `claude` ($SESSIONDB_CLAUDE) that records its arguments and folder.
//! Needs tmux: ignored (with the reason) when it is missing, run (and failing) under CI.

use crate::restore::fake_claude;
use crate::support::sessiondb;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const CHECKPOINT: &str = "11111111-1111-4111-8111-111111111111";
const FLAKY: &str = "22222222-2222-4222-8222-222222222222";
const GARDEN: &str = "33333333-3333-4333-8333-333333333333";

/// Three sessions in three folders that exist, imported; a stub `claude`; a tmux server of
/// the test's own (its socket in the temporary folder).
struct Picker {
    dir: tempfile::TempDir,
    db: PathBuf,
    socket: PathBuf,
    bin: PathBuf,
}

/// A conversation of `session` in `cwd`: each text alternately the user's and Claude's.
fn transcript(session: &str, cwd: &Path, texts: &[&str]) -> String {
    let mut out = String::new();
    let mut parent: Option<String> = None;
    for (i, text) in texts.iter().enumerate() {
        let uuid = format!("{}-0000-4000-8000-{i:012}", &session[..8]);
        let mut record = serde_json::json!({
            "parentUuid": parent, "isSidechain": false, "uuid": uuid, "sessionId": session,
            "timestamp": format!("2026-01-01T00:00:{i:02}.000Z"), "cwd": cwd,
            "gitBranch": "main",
        });
        if i % 2 == 0 {
            record["type"] = "user".into();
            record["message"] = serde_json::json!({"role": "user", "content": text});
        } else {
            record["type"] = "assistant".into();
            record["message"] = serde_json::json!({
                "id": format!("msg-{uuid}"), "role": "assistant", "model": "m",
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1}});
        }
        out.push_str(&record.to_string());
        out.push('\n');
        parent = Some(uuid);
    }
    out
}

impl Picker {
    fn new() -> Picker {
        let dir = tempfile::tempdir().expect("tmp");
        let root = std::fs::canonicalize(dir.path()).expect("real");
        let projects = root.join("source/projects");
        let sessions: [(&str, &str, &[&str]); 3] = [
            (
                CHECKPOINT,
                "checkpoint",
                &[
                    "refactor the checkpoint writer",
                    "first answer",
                    "now make it atomic",
                    "LAST-ANSWER-OF-CHECKPOINT: renamed into place",
                ],
            ),
            (
                FLAKY,
                "flaky",
                &["flaky test in the parser", "it was a race"],
            ),
            (
                GARDEN,
                "garden",
                // A hostile title: an escape sequence that would clear the screen.
                &[
                    "gardening notes \u{1b}[2J\u{202e}",
                    "a zeppelin over the tomatoes",
                ],
            ),
        ];
        for (id, folder, texts) in sessions {
            let cwd = root.join("work").join(folder);
            std::fs::create_dir_all(&cwd).expect("mkdir");
            let project = projects.join(sessiondb::paths::sanitize_path(&cwd.to_string_lossy()));
            std::fs::create_dir_all(&project).expect("mkdir");
            std::fs::write(
                project.join(format!("{id}.jsonl")),
                transcript(id, &cwd, texts),
            )
            .expect("write");
        }
        let db = root.join("s.db");
        for args in [
            vec!["import".to_owned(), projects.to_string_lossy().into_owned()],
            vec![
                "tag".into(),
                FLAKY.into(),
                "review".into(),
                "--no-write-back".into(),
            ],
        ] {
            let out = sessiondb(&db, &args);
            assert!(out.status.success(), "{args:?}: {out:?}");
        }
        let bin = fake_claude(&root).join("claude");
        Picker {
            socket: root.join("tmux.sock"),
            db,
            bin,
            dir,
        }
    }

    fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).expect("real")
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        // -u: UTF-8 whatever the locale (CI's may be C), so that `…` and `�` come back.
        let out = Command::new("tmux")
            .arg("-u")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs (is it installed?)");
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        out
    }

    /// Starts `sessiondb pick` in a 120×30 terminal whose folder is `cwd`.
    fn start(&self, cwd: &Path) {
        let root = self.root();
        let env = [
            ("SESSIONDB_CLAUDE", self.bin.clone()),
            ("FAKE_CLAUDE_LOG", root.join("fake")),
            ("CLAUDE_CONFIG_DIR", root.join("claude")),
            ("TZ", PathBuf::from("UTC")),
        ];
        let mut args: Vec<String> = vec![
            "new-session".into(),
            "-d".into(),
            "-x".into(),
            "120".into(),
            "-y".into(),
            "30".into(),
            "-c".into(),
            cwd.to_string_lossy().into_owned(),
        ];
        for (name, value) in env {
            args.push("-e".into());
            args.push(format!("{name}={}", value.display()));
        }
        // The pane stays after the picker exits, so that its last screen can be read.
        args.push(format!(
            "{} --db {} pick; echo PICK-EXITED-$?; sleep 60",
            env!("CARGO_BIN_EXE_sessiondb"),
            self.db.display()
        ));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.tmux(&args);
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p"]).stdout).into_owned()
    }

    /// Waits (up to 20 s) until the screen satisfies `what`; fails showing the screen.
    fn wait_for(&self, label: &str, what: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if what(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "waited 20 s for {label}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Types literal text.
    fn type_text(&self, text: &str) {
        self.keys(&["-l", text]);
    }

    /// What the stub `claude` recorded: its arguments and its folder.
    fn launched(&self) -> (Vec<String>, String) {
        let log = self.root().join("fake");
        let args = log.with_extension("args");
        let start = Instant::now();
        while !log.with_extension("cwd").exists() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "claude was not run; the screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(100));
        let read = |p: PathBuf| std::fs::read_to_string(&p).expect("stub log");
        let args = read(args).lines().map(str::to_owned).collect();
        (args, read(log.with_extension("cwd")).trim_end().to_owned())
    }
}

impl Drop for Picker {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// The line of the list that is selected (drawn with `> ` in front).
fn selected(screen: &str) -> &str {
    screen
        .lines()
        .skip(1)
        .find(|l| l.starts_with("> "))
        .unwrap_or_else(|| panic!("no selected row on:\n{screen}"))
}

#[test]
#[cfg_attr(not(sessiondb_tmux), ignore = "needs tmux")]
fn typing_narrows_the_preview_shows_the_end_and_enter_launches_in_the_folder() {
    let p = Picker::new();
    p.start(&p.root());
    p.wait_for("the three sessions", |s| {
        s.contains("3/3") && s.contains("flaky test in the parser")
    });
    // Fuzzy: the letters of "checkpoint" in order, not a word of any session.
    p.type_text("chkpt");
    let screen = p.wait_for("the fuzzy match alone", |s| {
        s.lines().next().unwrap_or("").contains("> chkpt") && s.contains("1/3")
    });
    assert!(
        selected(&screen).contains("refactor the checkpoint"),
        "{screen}"
    );
    assert!(!screen.contains("flaky test"), "{screen}");
    // The preview ends with the conversation's last message.
    let screen = p.wait_for("the preview", |s| s.contains("LAST-ANSWER-OF-CHECKPOINT"));
    assert!(screen.contains("now make it atomic"), "{screen}");
    p.keys(&["Enter"]);
    let (args, cwd) = p.launched();
    assert_eq!(args, ["--resume", CHECKPOINT]);
    assert_eq!(cwd, p.root().join("work/checkpoint").to_string_lossy());
    p.wait_for("the picker to exit 0", |s| s.contains("PICK-EXITED-0"));
}

#[test]
#[cfg_attr(not(sessiondb_tmux), ignore = "needs tmux")]
fn text_prefixes_and_filters_find_sessions_and_ctrl_o_launches_here() {
    let p = Picker::new();
    let here = p.root().join("elsewhere");
    std::fs::create_dir_all(&here).expect("mkdir");
    p.start(&here);
    let screen = p.wait_for("the three sessions", |s| s.contains("3/3"));
    // The hostile title is drawn as text: its escape as �, its bidi control as a code point.
    assert!(
        screen.contains("gardening notes \u{FFFD}[2J[U+202E]"),
        "{screen}"
    );
    // A prefix of a word only the text holds (not a title): found by the search.
    p.type_text("zepp");
    let screen = p.wait_for("the search hit", |s| {
        s.lines().next().unwrap_or("").contains("> zepp")
            && s.contains("1/3")
            && s.contains("zeppelin over")
    });
    assert!(selected(&screen).contains("gardening"), "{screen}");
    assert!(!screen.contains("refactor the checkpoint"), "{screen}");
    // A filter typed in the line: only the tagged session.
    p.keys(&["C-u"]);
    p.type_text("tag:review");
    let screen = p.wait_for("the tag filter", |s| {
        s.lines().next().unwrap_or("").contains("> tag:review") && s.contains("1/1")
    });
    assert!(selected(&screen).contains("flaky test in the"), "{screen}");
    assert!(
        screen.contains("tag review"),
        "the preview names the tag:\n{screen}"
    );
    p.keys(&["C-o"]);
    let (args, cwd) = p.launched();
    assert_eq!(args, ["--resume", FLAKY]);
    assert_eq!(cwd, here.to_string_lossy());
}

#[test]
fn pick_without_a_terminal_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    crate::support::import_samples(&db);
    let out = sessiondb(&db, &["pick"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pick needs a terminal"), "{err}");
}
