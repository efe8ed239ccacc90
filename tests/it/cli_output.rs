//! What people see (issue 15): the sessions table, messages as text, the resume summary,
//! search's exit status and marks, colour rules, `--quiet`, counts, import warnings,
//! completions, the man page and `--version`. Terminal behaviour (title cut to the width,
//! the pager, colour on a terminal) runs the binary under `script`, which gives it a pty.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const S1: &str = "7c9d2e41-5b6a-4f80-9a1b-2c3d4e5f6a71";
const S2: &str = "8e1f3a52-6c7b-4091-8b2c-3d4e5f6a7b82";

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sessiondb"));
    cmd.stdin(Stdio::null())
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("PAGER")
        .env("TZ", "UTC");
    cmd
}

fn run(db: &Path, args: &[&str]) -> Output {
    bin()
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("run sessiondb")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The sample sessions copied to a temp folder with their mtimes set to `mtime` (epoch
/// seconds), imported into a fresh database.
fn samples_at(mtime: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tmp");
    let src = crate::support::samples();
    let dst = dir.path().join("projects");
    copy_tree(&src, &dst, mtime);
    let db = dir.path().join("s.db");
    let out = run(&db, &["import", &dst.to_string_lossy()]);
    assert!(out.status.success(), "{}", stderr(&out));
    (dir, db)
}

fn copy_tree(src: &Path, dst: &Path, mtime: u64) {
    std::fs::create_dir_all(dst).expect("mkdir");
    for entry in std::fs::read_dir(src).expect("read dir") {
        let path = entry.expect("entry").path();
        let to = dst.join(path.file_name().expect("name"));
        if path.is_dir() {
            copy_tree(&path, &to, mtime);
        } else {
            std::fs::copy(&path, &to).expect("copy");
            let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(mtime);
            std::fs::File::options()
                .write(true)
                .open(&to)
                .and_then(|f| f.set_modified(when))
                .expect("set mtime");
        }
    }
}

/// 2020-01-01T23:30:00Z: the 1st in UTC, the 2nd in Tokyo.
const OLD: u64 = 1_577_921_400;

#[test]
fn the_sessions_table_shows_age_project_short_ids_and_whole_titles() {
    let (_dir, db) = samples_at(OLD);
    let out = bin()
        .args(["--db", &db.to_string_lossy(), "sessions"])
        .env("COLUMNS", "30")
        .output()
        .expect("run");
    assert!(out.status.success());
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    for column in ["MODIFIED", "PROJECT", "SESSION", "MSGS", "TAG", "TITLE"] {
        assert!(lines[0].contains(column), "{column} in {}", lines[0]);
    }
    let row = lines
        .iter()
        .find(|l| l.contains("bugfix"))
        .expect("the tagged session");
    assert!(row.starts_with("2020-01-01 "), "a local date: {row}");
    assert!(row.contains(" weather-app "), "project short name: {row}");
    assert!(row.contains(" 7c9d2e41 "), "shortest unique prefix: {row}");
    assert!(!row.contains(S1), "not the full id: {row}");
    assert!(row.contains(" 4 "), "message count: {row}");
    // Not a terminal: the title is whole even though COLUMNS is small.
    assert!(row.ends_with("forecast error handling"), "{row}");
    assert!(!text.contains('\u{1b}'), "no colour off a terminal");

    // TZ decides the date.
    let out = bin()
        .args(["--db", &db.to_string_lossy(), "sessions"])
        .env("TZ", "JST-9")
        .output()
        .expect("run");
    assert!(stdout(&out).contains("\n2020-01-02 "), "{}", stdout(&out));

    let out = run(&db, &["sessions", "--long"]);
    assert!(stdout(&out).contains(S1), "--long shows full ids");
    // JSON keeps full ids and its fields.
    let out = run(&db, &["sessions", "--json"]);
    let listed: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(listed
        .as_array()
        .expect("array")
        .iter()
        .any(|s| s["session_id"] == S1));
}

#[test]
fn a_short_id_grows_until_it_is_unique_and_resolves() {
    let (dir, db) = samples_at(OLD);
    // A session whose id shares 11 characters with S1.
    let twin = "7c9d2e41-5b00-4000-8000-000000000000";
    let project = dir.path().join("twins/-home-dev-weather-app");
    std::fs::create_dir_all(&project).expect("mkdir");
    std::fs::write(
        project.join(format!("{twin}.jsonl")),
        "{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null,\"timestamp\":\"2026-01-01T00:00:00Z\",\"cwd\":\"/home/dev/weather-app\",\"message\":{\"role\":\"user\",\"content\":\"twin prompt\"}}\n",
    )
    .expect("write");
    assert!(run(
        &db,
        &["import", &dir.path().join("twins").to_string_lossy()]
    )
    .status
    .success());
    let text = stdout(&run(&db, &["sessions"]));
    // They share "7c9d2e41-5b": 12 characters tell them apart.
    assert!(text.contains(" 7c9d2e41-5b6 "), "{text}");
    assert!(text.contains(" 7c9d2e41-5b0 "), "{text}");
    assert!(text.contains(" 8e1f3a52 "), "{text}");
    assert!(run(&db, &["info", "7c9d2e41-5b6"]).status.success());
    assert_eq!(run(&db, &["info", "7c9d2e41"]).status.code(), Some(1));
}

#[test]
fn project_matches_a_substring_of_the_name_or_cwd_ignoring_case() {
    let (_dir, db) = samples_at(OLD);
    let count = |args: &[&str]| -> usize {
        let out = run(&db, args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        v.as_array().expect("array").len()
    };
    assert_eq!(count(&["sessions", "--project", "WEATHER", "--json"]), 2);
    assert_eq!(
        count(&["sessions", "--project", "dev/Weather", "--json"]),
        2
    );
    assert_eq!(
        count(&["sessions", "--project", "-home-dev-weather-app", "--json"]),
        2
    );
    assert_eq!(count(&["sessions", "--project", "entireio", "--json"]), 0);
    let out = run(&db, &["sessions", "--project", "entireio"]);
    assert!(out.status.success());
    assert!(stdout(&out).is_empty());
    assert!(
        stderr(&out).contains(&format!("no sessions match in {}", db.display())),
        "{}",
        stderr(&out)
    );
}

#[test]
fn negative_counts_are_usage_errors_except_the_sdk_offset() {
    let (_dir, db) = samples_at(OLD);
    for args in [
        &["sessions", "--limit", "-1"][..],
        &["sessions", "--offset", "-3"],
        &["search", "forecast", "--limit", "-1"],
        &["search", "forecast", "--offset", "-1"],
        &["messages", S1, "--limit", "-2"],
        &["sessions", "--limit", "ten"],
    ] {
        let out = run(&db, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("--"), "{args:?}: {}", stderr(&out));
    }
    // The SDK's slice `[offset:offset+limit]`: a negative offset counts from the end.
    let out = run(
        &db,
        &["messages", S1, "--limit", "1", "--offset", "-2", "--json"],
    );
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v.as_array().map(Vec::len), Some(1));
    assert_eq!(v[0]["type"], "user");
    // 0 is "no limit" everywhere.
    let out = run(&db, &["sessions", "--limit", "0", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v.as_array().map(Vec::len), Some(2));
    let out = run(
        &db,
        &[
            "search", "forecast", "--limit", "1", "--offset", "1", "--json",
        ],
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v.as_array().map(Vec::len), Some(1));
    let all: Value =
        serde_json::from_slice(&run(&db, &["search", "forecast", "--json"]).stdout).expect("json");
    assert_eq!(v[0], all[1], "--offset 1 skips the first hit");
}

#[test]
fn messages_show_tools_results_and_times_in_one_line_each() {
    let (_dir, db) = samples_at(OLD);
    let out = run(&db, &["messages", S1]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("── 2026-11-30 09:00:00 user\nWhat does fetch_forecast return"),
        "{text}"
    );
    assert!(
        text.contains("→ Read  /home/dev/weather-app/forecast.py\n"),
        "{text}"
    );
    assert!(
        text.contains("← Read result: 1 def fetch_forecast(city): (114 B, 5 lines)\n"),
        "{text}"
    );
    let full = stdout(&run(&db, &["messages", S1, "--full"]));
    assert!(full.contains("\"file_path\": \"/home/dev/weather-app/forecast.py\""));
    assert!(full.contains("← Read result (114 B)\n1\tdef fetch_forecast(city):\n2\t    try:"));
}

#[test]
fn resume_summary_is_in_words_with_the_listing_title() {
    let (_dir, db) = samples_at(OLD);
    let listed: Value =
        serde_json::from_slice(&run(&db, &["sessions", "--json"]).stdout).expect("json");
    for s in listed.as_array().expect("array") {
        let id = s["session_id"].as_str().expect("id");
        let text = stdout(&run(&db, &["resume", id]));
        let title = s["summary"].as_str().expect("title");
        assert!(
            text.contains(&format!("\ntitle     {title}\n")),
            "{id}: {text}"
        );
        assert!(text.contains("state     the last turn finished"), "{text}");
        assert!(
            text.contains(&format!("database  {}", db.display())),
            "{text}"
        );
    }

    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("-work-cut");
    std::fs::create_dir_all(&project).expect("mkdir");
    let user = r#"{"type":"user","uuid":"a1","parentUuid":null,"sessionId":"SID","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"list files"}}"#;
    let call = r#"{"type":"assistant","uuid":"a2","parentUuid":"a1","sessionId":"SID","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"toolu_abc","name":"Bash","input":{"command":"ls"}}]}}"#;
    let result = r#"{"type":"user","uuid":"a3","parentUuid":"a2","sessionId":"SID","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_abc","content":"a\nb"}]},"toolUseResult":"a\nb"}"#;
    let crashed = "11111111-0000-4000-8000-000000000001";
    let mid_turn = "11111111-0000-4000-8000-000000000002";
    std::fs::write(
        project.join(format!("{crashed}.jsonl")),
        format!("{user}\n{call}\n").replace("SID", crashed),
    )
    .expect("write");
    std::fs::write(
        project.join(format!("{mid_turn}.jsonl")),
        format!("{user}\n{call}\n{result}\n").replace("SID", mid_turn),
    )
    .expect("write");
    let db = dir.path().join("s.db");
    assert!(run(&db, &["import", &project.to_string_lossy()])
        .status
        .success());
    let text = stdout(&run(&db, &["resume", crashed]));
    assert!(
        text.contains("added a synthetic tool result for toolu_abc"),
        "{text}"
    );
    let text = stdout(&run(&db, &["resume", mid_turn]));
    assert!(
        text.contains("state     interrupted in the middle of a turn"),
        "{text}"
    );
    assert!(!text.contains("Interrupted"), "no enum names: {text}");
}

#[test]
fn search_exits_1_on_no_match_and_marks_only_with_colour() {
    let (_dir, db) = samples_at(OLD);
    let out = run(&db, &["search", "zebra", "quagga"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        stderr(&out)
    );
    let out = run(&db, &["search", "zebra", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out).trim(), "[]");

    let out = run(&db, &["search", "ApiDown"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("catches `ApiDown` and returns"), "{text}");
    assert!(!text.contains("**") && !text.contains('\u{1b}'), "{text}");
    let json: Value =
        serde_json::from_slice(&run(&db, &["search", "ApiDown", "--json"]).stdout).expect("json");
    assert!(
        json[0]["snippet"]
            .as_str()
            .expect("snippet")
            .contains("**ApiDown**"),
        "--json unchanged"
    );

    let coloured = |envs: &[(&str, &str)], flags: &[&str]| -> bool {
        let mut cmd = bin();
        cmd.arg("--db")
            .arg(&db)
            .args(flags)
            .args(["search", "ApiDown"]);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run");
        stdout(&out).contains("\u{1b}[1;31mApiDown\u{1b}[0m")
    };
    assert!(coloured(&[], &["--color", "always"]));
    assert!(!coloured(&[], &[]));
    assert!(coloured(&[("CLICOLOR_FORCE", "1")], &[]));
    assert!(!coloured(
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
        &[]
    ));
    assert!(!coloured(&[("CLICOLOR_FORCE", "1")], &["--color", "never"]));
}

#[test]
fn tag_usage_names_the_arguments_in_order() {
    let out = bin().args(["tag", "--help"]).output().expect("run");
    assert!(
        stdout(&out).contains("Usage: sessiondb tag <SESSION> <TAG|--clear>"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn continue_names_the_project_and_takes_a_cwd_from_elsewhere() {
    let (dir, db) = samples_at(OLD);
    let nowhere = dir.path().join("no/such/dir");
    let out = run(&db, &["continue", "--cwd", &nowhere.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    let project = sessiondb::paths::sanitize_path(&nowhere.to_string_lossy());
    assert!(
        stderr(&out).contains(&format!(
            "no session to continue in project {project} (cwd {})",
            nowhere.display()
        )),
        "{}",
        stderr(&out)
    );
    // The samples were recorded in /home/dev/weather-app, which is not on this machine.
    let out = run(
        &db,
        &["continue", "--cwd", "/home/dev/weather-app", "--json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["project"], "-home-dev-weather-app");
}

#[test]
fn import_says_when_nothing_is_importable() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let out = run(&db, &["import", &empty.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("nothing importable found"),
        "{}",
        stderr(&out)
    );

    let project = dir.path().join("projects/-work-docs");
    std::fs::create_dir_all(&project).expect("mkdir");
    let readme = project.join("readme.jsonl");
    let text = "# A README\n\nNot a transcript.\nStill not.\n";
    std::fs::write(&readme, text).expect("write");
    let out = run(&db, &["import", &readme.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("readme.jsonl: 3 of 3 lines are not JSON — is this a transcript?"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("1 file (1 imported"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("3 malformed lines"),
        "{}",
        stdout(&out)
    );
    // Nothing is lost: the file comes back byte for byte.
    let out = run(&db, &["export", "--", "-work-docs/readme"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), text);
}

#[test]
fn summaries_name_the_database_and_quiet_silences_them() {
    let (_dir, db) = samples_at(OLD);
    let shown = db.display().to_string();
    let out = run(&db, &["tag", S2, "review"]);
    assert!(stderr(&out).contains(&shown), "{}", stderr(&out));
    let out = run(&db, &["rename", S2, "Callers"]);
    assert!(stderr(&out).contains(&shown), "{}", stderr(&out));
    let out = run(&db, &["info", S2]);
    assert!(stdout(&out).contains(&format!("database      {shown}")));
    let samples = crate::support::samples();
    let out = run(&db, &["import", &samples.to_string_lossy()]);
    assert!(
        stdout(&out).contains(&format!("database {shown}")),
        "{}",
        stdout(&out)
    );
    let out = run(&db, &["--quiet", "import", &samples.to_string_lossy()]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let out = run(&db, &["-q", "tag", S2, "--clear"]);
    assert!(out.status.success() && out.stderr.is_empty());
}

#[test]
fn completions_man_page_and_version() {
    let expect = [
        ("bash", "complete -F _sessiondb"),
        ("zsh", "#compdef sessiondb"),
        ("fish", "complete -c sessiondb"),
        ("powershell", "Register-ArgumentCompleter"),
    ];
    for (shell, marker) in expect {
        let out = bin().args(["completions", shell]).output().expect("run");
        assert!(out.status.success(), "{shell}");
        let text = stdout(&out);
        assert!(
            text.contains(marker),
            "{shell}: {}",
            &text[..text.len().min(300)]
        );
        assert!(text.contains("continue"), "{shell} knows the verbs");
    }
    let out = bin().arg("man").output().expect("run");
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(
        text.contains(".TH sessiondb"),
        "{}",
        &text[..text.len().min(300)]
    );
    assert!(text.contains("completions"));
    // Every verb in the one page (issue 31), its own verbs too; no page it does not ship.
    for verb in ["import", "search", "hooks install", "config get", "stats"] {
        assert!(
            text.contains(&format!(".SS \"sessiondb {verb}\"")),
            "{verb}"
        );
    }
    assert!(!text.contains("sessiondb\\-"), "refers to per-verb pages");
    let out = bin().arg("--version").output().expect("run");
    let text = stdout(&out);
    let (schema, _) = sessiondb::schema::newest_known();
    assert!(
        text.starts_with(&format!(
            "sessiondb {} (schema V{schema} ",
            env!("CARGO_PKG_VERSION")
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("SQLite {}", rusqlite::version())),
        "{text}"
    );
}

/// Runs `command` (a shell line) on a pseudo-terminal through `script`; `None` when
/// `script` is not installed.
fn on_a_terminal(command: &str, envs: &[(&str, &str)]) -> Option<String> {
    let mut cmd = Command::new("script");
    cmd.args(["-qec", command, "/dev/null"])
        .stdin(Stdio::null())
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env("TZ", "UTC");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    match cmd.output() {
        Ok(out) => Some(String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n")),
        Err(_) => {
            eprintln!("skipping the terminal checks: `script` (util-linux) is not installed");
            None
        }
    }
}

#[test]
fn on_a_terminal_titles_are_cut_search_is_coloured_and_messages_are_paged() {
    let (_dir, db) = samples_at(OLD);
    let bin = env!("CARGO_BIN_EXE_sessiondb");
    let db = db.to_string_lossy();
    let Some(text) = on_a_terminal(&format!("{bin} --db {db} sessions"), &[("COLUMNS", "60")])
    else {
        return;
    };
    let row = text.lines().find(|l| l.contains("bugfix")).expect("a row");
    assert!(row.ends_with('…'), "cut: {row:?}");
    assert_eq!(row.chars().count(), 60, "{row:?}");

    let text = on_a_terminal(&format!("{bin} --db {db} search ApiDown"), &[]).expect("script");
    assert!(text.contains("\u{1b}[1;31mApiDown\u{1b}[0m"), "{text:?}");
    let text = on_a_terminal(
        &format!("{bin} --db {db} search ApiDown"),
        &[("NO_COLOR", "1")],
    )
    .expect("script");
    assert!(!text.contains('\u{1b}'), "{text:?}");

    let pager = [("PAGER", "sed s/^/PAGED:/")];
    let text = on_a_terminal(&format!("{bin} --db {db} messages {S1}"), &pager).expect("script");
    assert!(text.starts_with("PAGED:"), "{text:?}");
    assert!(text.lines().all(|l| l.starts_with("PAGED:")), "{text:?}");
    let text = on_a_terminal(&format!("{bin} --db {db} messages {S1} --no-pager"), &pager)
        .expect("script");
    assert!(!text.contains("PAGED:") && text.contains("── "), "{text:?}");
}

/// Issue 31: the title people see does not follow the last prompt (the SDK's `summary`,
/// which changes every turn) when the session has a first prompt; `--json` keeps the SDK's
/// `summary` as it is.
#[test]
fn titles_stay_on_the_first_prompt_not_the_last() {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("projects/-w");
    std::fs::create_dir_all(&project).expect("mkdir");
    let text = crate::support::user_line(S1, "u1", None, "the first question")
        + &crate::support::assistant_record(S1, "a1", "u1", "an answer")
        + "\n{\"type\":\"last-prompt\",\"lastPrompt\":\"the latest question\",\"sessionId\":\""
        + S1
        + "\"}\n";
    std::fs::write(project.join(format!("{S1}.jsonl")), text).expect("write");
    let db = dir.path().join("s.db");
    let out = run(
        &db,
        &["import", &dir.path().join("projects").to_string_lossy()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&run(&db, &["sessions"]));
    assert!(table.contains("the first question"), "{table}");
    assert!(!table.contains("the latest question"), "{table}");
    let info = stdout(&run(&db, &["info", S1]));
    assert!(info.contains("the first question"), "{info}");
    let json: Value = serde_json::from_str(&stdout(&run(&db, &["sessions", "--json"]))).unwrap();
    assert_eq!(
        json[0]["summary"], "the latest question",
        "the SDK's field is unchanged"
    );
}

/// Issue 28 item 7: a title holding bidirectional controls (an RTL override that makes
/// `exe.txt` read as `txt.exe`) is listed with them shown as code points, as the web pages
/// show them; escape sequences become `�`.
#[test]
fn sessions_show_bidi_and_control_characters_escaped() {
    let (_dir, db) = samples_at(OLD);
    let rename = run(
        &db,
        &[
            "rename",
            "7c9d2e41",
            "report\u{202E}txt.exe \u{1b}[31mred",
            "--no-write-back",
        ],
    );
    assert!(rename.status.success(), "{}", stderr(&rename));
    let out = run(&db, &["sessions"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("report[U+202E]txt.exe"), "{text}");
    assert!(!text.contains('\u{202E}'), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
}

/// Issue 31: a printing verb whose reader went away (`| head -c1`) exits 0 and prints
/// nothing on stderr (no panic, no "Broken pipe"). The pipe's reading end is closed before
/// the verb starts, so every write fails, whatever the size of the output.
#[test]
fn printing_verbs_exit_quietly_on_a_closed_pipe() {
    let (dir, db) = samples_at(OLD);
    let db = db.to_string_lossy().into_owned();
    let verbs: &[&[&str]] = &[
        &["completions", "bash"],
        &["completions", "zsh"],
        &["completions", "fish"],
        &["completions", "powershell"],
        &["man"],
        &["--help"],
        &["sessions"],
        &["sessions", "--json"],
        &["info", S1],
        &["info", S1, "--json"],
        &["messages", S1, "--no-pager"],
        &["messages", S1, "--json"],
        &["agents", S2],
        &["search", "forecast"],
        &["search", "forecast", "--json"],
        &["resume", S1],
        &["resume", S1, "--api"],
        &["export", S1],
        &["check"],
        &["stats"],
        &["config", "get", "write_back"],
        &["config", "path"],
        &["hooks", "status"],
    ];
    for args in verbs {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let out = bin()
            .args(["--db", &db])
            .args(*args)
            .env("CLAUDE_CONFIG_DIR", dir.path().join("claude"))
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .stdout(writer)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
    }
}

/// Issue 31: import's summary speaks of lines, records and fields, not of the schema's rows
/// or "unknown fields".
#[test]
fn the_import_summary_has_no_schema_words() {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("projects/-w");
    std::fs::create_dir_all(&project).expect("mkdir");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/edge/unknown-type.jsonl");
    std::fs::copy(&fixture, project.join(format!("{S1}.jsonl"))).expect("copy");
    let db = dir.path().join("s.db");
    let out = run(
        &db,
        &["import", &dir.path().join("projects").to_string_lossy()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("1 record of a kind sessiondb does not know yet, 2 fields sessiondb does not know yet (all kept as written)"),
        "{text}"
    );
    for jargon in ["row", "unknown", "catalog", "schema"] {
        assert!(!text.contains(jargon), "{jargon}: {text}");
    }
}

/// The line naming a session in search's text output shows the title `sessions` shows (the
/// first prompt of an untitled session), not the catalog's summary, which is its last prompt
/// (issue 31).
#[test]
fn search_names_a_session_by_its_first_prompt_not_its_last() {
    use crate::support::{assistant_record, user_record};
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("projects").join("-w");
    std::fs::create_dir_all(&project).expect("mkdir");
    let lines = [
        user_record(S1, "u1", None, "plan the vegetable garden"),
        assistant_record(S1, "a1", "u1", "Here is a plan."),
        user_record(S1, "u2", Some("a1"), "water the zucchini twice"),
        assistant_record(S1, "a2", "u2", "Noted."),
        serde_json::json!({"type": "last-prompt", "lastPrompt": "water the zucchini twice",
                           "leafUuid": "a2", "sessionId": S1})
        .to_string(),
    ];
    std::fs::write(project.join(format!("{S1}.jsonl")), lines.join("\n") + "\n").expect("write");
    let db = dir.path().join("s.db");
    let out = run(
        &db,
        &["import", &dir.path().join("projects").to_string_lossy()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let sessions = stdout(&run(&db, &["sessions"]));
    assert!(sessions.contains("plan the vegetable garden"), "{sessions}");
    let text = stdout(&run(&db, &["search", "zucchini"]));
    let first = text.lines().next().unwrap_or("");
    assert!(first.contains("plan the vegetable garden"), "{text}");
    assert!(!first.contains("zucchini"), "{text}");
}
