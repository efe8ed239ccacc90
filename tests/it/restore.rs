//! Hand-back: `restore` (paths, bytes, mtimes, modes, conflicts, `--cwd`, `--as-new`),
//! `launch` with a fake `claude`, and `export --all` keeping mtimes.

use crate::support::{
    assert_success, copy_tree, dump_rows, import, output_with_stdin, read_tree, samples,
    sessiondb_command,
};
use sessiondb::Store;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const PROJECT: &str = "-home-dev-weather-app";
const WITH_AGENT: &str = "8e1f3a52-6c7b-4091-8b2c-3d4e5f6a7b82";
const PLAIN: &str = "7c9d2e41-5b6a-4f80-9a1b-2c3d4e5f6a71";

struct Setup {
    dir: tempfile::TempDir,
    /// The tree that was imported (a copy of the samples with old mtimes).
    source: PathBuf,
    db: PathBuf,
}

impl Setup {
    /// The sample projects copied, each file given its own old mtime, then imported.
    fn new() -> Setup {
        let dir = tempfile::tempdir().expect("tmp");
        let source = dir.path().join("source/projects");
        std::fs::create_dir_all(&source).expect("mkdir");
        copy_tree(&samples(), &source);
        for (i, rel) in read_tree(&source).keys().enumerate() {
            let when = UNIX_EPOCH + Duration::from_secs(1_700_000_000 + 1000 * i as u64);
            let file = std::fs::File::options()
                .write(true)
                .open(source.join(rel))
                .expect("open");
            file.set_modified(when).expect("set mtime");
        }
        let db = dir.path().join("s.db");
        let store = Store::open(&db).expect("open");
        import(&store, &[&source]);
        Setup { dir, source, db }
    }

    fn config(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn sessiondb(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut cmd = sessiondb_command(&self.db);
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("run sessiondb")
    }

    fn restore(&self, config: &Path, extra: &[&str], session: &str) -> Output {
        let mut args = vec!["restore", session, "--config-dir"];
        let config = config.to_string_lossy().into_owned();
        args.push(&config);
        args.extend_from_slice(extra);
        self.sessiondb(&args, &[])
    }
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path)
        .expect("meta")
        .modified()
        .expect("mtime")
}

#[test]
fn restore_writes_the_files_as_imported_with_their_mtimes_and_mode() {
    let s = Setup::new();
    let config = s.config("claude");
    for session in [WITH_AGENT, PLAIN] {
        assert_success(&s.restore(&config, &[], session));
    }
    let restored = config.join("projects");
    crate::support::assert_same_tree(&s.source, &restored);
    for rel in read_tree(&s.source).keys() {
        assert_eq!(
            mtime(&restored.join(rel)),
            mtime(&s.source.join(rel)),
            "{rel} keeps its recorded mtime"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(restored.join(rel))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{rel}");
        }
    }
    // Importing the restored tree gives the same rows.
    let dir = tempfile::tempdir().expect("tmp");
    let again = Store::open(dir.path().join("again.db")).expect("open");
    import(&again, &[&restored]);
    let original = Store::open(&s.db).expect("open");
    assert!(dump_rows(&again) == dump_rows(&original), "same rows");

    // Restoring again leaves the identical files alone (not even their mtime changes).
    let main = restored.join(PROJECT).join(format!("{WITH_AGENT}.jsonl"));
    let later = SystemTime::now() - Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&main)
        .expect("open")
        .set_modified(later)
        .expect("touch");
    let out = s.restore(&config, &["--json"], WITH_AGENT);
    assert_success(&out);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["written"], 0);
    assert_eq!(report["unchanged"], 4);
    assert_eq!(mtime(&main), later);
}

#[test]
fn a_different_file_is_never_overwritten_unless_as_new() {
    let s = Setup::new();
    let config = s.config("claude");
    assert_success(&s.restore(&config, &[], WITH_AGENT));
    let main = config
        .join("projects")
        .join(PROJECT)
        .join(format!("{WITH_AGENT}.jsonl"));
    let agent = main
        .with_extension("")
        .join("subagents/agent-a1b2c3d4e5f60718.jsonl");
    // Claude Code went on writing: the file has a line the database lacks.
    let mut grown = std::fs::read(&main).expect("read");
    grown.extend_from_slice(b"{\"type\":\"last-prompt\",\"lastPrompt\":\"x\"}\n");
    std::fs::write(&main, &grown).expect("write");
    std::fs::remove_file(&agent).expect("remove agent");
    let out = s.restore(&config, &[], WITH_AGENT);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{WITH_AGENT}.jsonl has")), "{err}");
    assert!(err.contains("1 more lines"), "{err}");
    assert!(err.contains("sessiondb import"), "{err}");
    assert_eq!(std::fs::read(&main).expect("read"), grown, "untouched");
    assert!(
        !agent.exists(),
        "nothing written, not even the missing file"
    );

    // An edited line: says where.
    let edited = String::from_utf8(grown.clone()).expect("utf8").replacen(
        "Find every caller",
        "Find no caller",
        1,
    );
    std::fs::write(&main, &edited).expect("write");
    let out = s.restore(&config, &[], WITH_AGENT);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("from line 1 on"), "{err}");

    // --as-new: a fork under a new id, printed; the file in the way stays as it is.
    let out = s.restore(&config, &["--as-new"], WITH_AGENT);
    assert_success(&out);
    let new_id = String::from_utf8(out.stdout)
        .expect("utf8")
        .trim()
        .to_owned();
    assert_eq!(new_id.len(), 36, "{new_id}");
    assert_ne!(new_id, WITH_AGENT);
    let fork = config
        .join("projects")
        .join(PROJECT)
        .join(format!("{new_id}.jsonl"));
    let text = std::fs::read_to_string(&fork).expect("fork written");
    assert!(text.contains(&format!("\"sessionId\":\"{new_id}\"")));
    assert!(text.contains("Find every caller of fetch_forecast"));
    assert_eq!(std::fs::read_to_string(&main).expect("read"), edited);
}

/// Every record with its top-level `cwd` taken out, for comparing what else changed.
fn without_cwd(bytes: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("json line");
            v.as_object_mut().expect("object").remove("cwd");
            v
        })
        .collect()
}

#[test]
fn restore_with_cwd_moves_the_session_and_rewrites_only_cwd_fields() {
    let s = Setup::new();
    let config = s.config("claude");
    let target = s.dir.path().join("elsewhere/weather app");
    std::fs::create_dir_all(&target).expect("mkdir");
    let target = std::fs::canonicalize(&target).expect("real");
    let before = dump_rows(&Store::open(&s.db).expect("open"));
    let out = s.restore(
        &config,
        &["--cwd", &target.to_string_lossy(), "--json"],
        WITH_AGENT,
    );
    assert_success(&out);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["recorded_cwd"], "/home/dev/weather-app");
    let project = sessiondb::paths::sanitize_path(&target.to_string_lossy());
    let dir = config.join("projects").join(&project);
    let main = dir.join(format!("{WITH_AGENT}.jsonl"));
    let agent = dir
        .join(WITH_AGENT)
        .join("subagents/agent-a1b2c3d4e5f60718.jsonl");
    let src = s.source.join(PROJECT);
    let mut rewritten = 0;
    for (new, old) in [
        (&main, src.join(format!("{WITH_AGENT}.jsonl"))),
        (
            &agent,
            src.join(WITH_AGENT)
                .join("subagents/agent-a1b2c3d4e5f60718.jsonl"),
        ),
    ] {
        let new_bytes = std::fs::read(new).expect("restored");
        let old_bytes = std::fs::read(&old).expect("source");
        assert_eq!(
            without_cwd(&new_bytes),
            without_cwd(&old_bytes),
            "nothing else changes"
        );
        for line in String::from_utf8_lossy(&new_bytes).lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("json");
            if let Some(cwd) = v.get("cwd") {
                assert_eq!(cwd, &serde_json::Value::from(target.to_string_lossy()));
                rewritten += 1;
            }
        }
        assert_eq!(mtime(new), mtime(&old));
    }
    assert_eq!(report["rewritten_records"], rewritten);
    assert!(rewritten >= 4);
    // The sidecar and tool result are copied as they are.
    assert!(dir
        .join(WITH_AGENT)
        .join("tool-results/toolu_11.txt")
        .is_file());
    // The database keeps the original lines.
    assert!(dump_rows(&Store::open(&s.db).expect("open")) == before);
    // A missing --cwd folder is an error naming it.
    let out = s.restore(&config, &["--cwd", "/no/such/folder"], PLAIN);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/folder"));
}

#[test]
fn export_all_keeps_the_recorded_mtimes() {
    let s = Setup::new();
    let out_dir = s.config("exported");
    assert_success(&s.sessiondb(
        &["export", "--all", "--out", &out_dir.to_string_lossy()],
        &[],
    ));
    for rel in read_tree(&s.source).keys() {
        assert_eq!(
            mtime(&out_dir.join(rel)),
            mtime(&s.source.join(rel)),
            "{rel}"
        );
    }
}

/// A fake `claude` that records its arguments, its cwd and the session files it sees.
pub(crate) fn fake_claude(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let script = bin.join("claude");
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         out=\"$FAKE_CLAUDE_LOG\"\n\
         printf '%s\\n' \"$@\" > \"$out.args\"\n\
         pwd -P > \"$out.cwd\"\n\
         (cd \"$CLAUDE_CONFIG_DIR/projects\" && find . -type f | sort) > \"$out.files\"\n",
    )
    .expect("write script");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    bin
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn launch_restores_then_runs_claude_resume_in_the_folder() {
    let s = Setup::new();
    let config = s.config("claude");
    let bin = fake_claude(s.dir.path());
    let log = s.dir.path().join("fake");
    let work = s.dir.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    let work = std::fs::canonicalize(&work).expect("real");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |args: &[&str]| {
        sessiondb_command(&s.db)
            .arg("launch")
            .args(args)
            .env("PATH", &path)
            .env_remove("SESSIONDB_CLAUDE")
            .env("CLAUDE_CONFIG_DIR", &config)
            .env("FAKE_CLAUDE_LOG", &log)
            .current_dir(&work)
            .output()
            .expect("run")
    };
    // The recorded cwd (/home/dev/weather-app) does not exist here: --here, the current
    // folder (without it launch asks, see handback.rs).
    let out = run(&[WITH_AGENT, "--here", "--", "--model", "opus"]);
    assert_success(&out);
    assert_eq!(
        read(log.with_extension("args")),
        format!("--resume\n{WITH_AGENT}\n--model\nopus\n")
    );
    assert_eq!(
        read(log.with_extension("cwd")).trim(),
        work.to_string_lossy()
    );
    let project = sessiondb::paths::sanitize_path(&work.to_string_lossy());
    let files = read(log.with_extension("files"));
    assert!(
        files.contains(&format!("./{project}/{WITH_AGENT}.jsonl\n")),
        "{files}"
    );
    assert!(
        files.contains(&format!(
            "./{project}/{WITH_AGENT}/subagents/agent-a1b2c3d4e5f60718.jsonl\n"
        )),
        "{files}"
    );
    let main = read(
        config
            .join("projects")
            .join(&project)
            .join(format!("{WITH_AGENT}.jsonl")),
    );
    assert!(main.contains(&format!("\"cwd\":\"{}\"", work.display())));

    // --cwd and --fork, with $SESSIONDB_CLAUDE naming the binary.
    let other = s.dir.path().join("other");
    std::fs::create_dir_all(&other).expect("mkdir");
    let other = std::fs::canonicalize(&other).expect("real");
    let out = sessiondb_command(&s.db)
        .args(["launch", PLAIN, "--fork", "--cwd"])
        .arg(&other)
        .env("SESSIONDB_CLAUDE", bin.join("claude"))
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("FAKE_CLAUDE_LOG", &log)
        .output()
        .expect("run");
    assert_success(&out);
    assert_eq!(
        read(log.with_extension("args")),
        format!("--resume\n{PLAIN}\n--fork-session\n")
    );
    assert_eq!(
        read(log.with_extension("cwd")).trim(),
        other.to_string_lossy()
    );

    // --print: the command, not run.
    std::fs::remove_file(log.with_extension("args")).expect("rm");
    let out = run(&[PLAIN, "--here", "--print"]);
    assert_success(&out);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        printed.trim(),
        format!("cd {} && claude --resume {PLAIN}", work.display())
    );
    assert!(!log.with_extension("args").exists(), "not run");
}

#[test]
fn a_session_claude_code_deleted_comes_back_where_it_was() {
    let s = Setup::new();
    let main = s.source.join(PROJECT).join(format!("{PLAIN}.jsonl"));
    let bytes = std::fs::read(&main).expect("read");
    let when = mtime(&main);
    std::fs::remove_file(&main).expect("cleanup deletes it");
    assert_success(&s.sessiondb(&["import", &s.source.to_string_lossy()], &[]));
    let out = s.sessiondb(&["info", PLAIN, "--json"], &[]);
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(info["source_state"], "vanished", "{info}");
    // Restored into the tree it was imported from: same bytes, same mtime, present again.
    let config = s.source.parent().expect("config dir").to_path_buf();
    assert_success(&s.restore(&config, &[], PLAIN));
    assert_eq!(std::fs::read(&main).expect("restored"), bytes);
    assert_eq!(mtime(&main), when);
    let out = s.sessiondb(&["import", &s.source.to_string_lossy(), "--json"], &[]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["new_rows"], 0, "{report}");
    assert_eq!(report["files_rewritten"], 0, "{report}");
    let out = s.sessiondb(&["info", PLAIN, "--json"], &[]);
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(info["source_state"], "present", "{info}");
}

/// `CLAUDE_CODE_PROJECT_DIR_NAME` (Claude Code 2.1.234+, honoured with `CLAUDE_CONFIG_DIR`):
/// Claude Code keeps every session under `projects/<that name>/`, so `restore` writes there,
/// `import` and `watch` with no path, `capture` and `continue` find sessions there; a name
/// Claude Code would ignore (not `[A-Za-z0-9_-]{1,64}`, or a Windows device name) is ignored.
#[test]
fn a_host_chosen_project_folder_name_is_honoured() {
    let s = Setup::new();
    let config = s.config("claude");
    let config_arg = config.to_string_lossy().into_owned();
    let name = "host-chosen_1";
    let env = |name: &'static str| {
        [
            ("CLAUDE_CONFIG_DIR", config.clone()),
            ("CLAUDE_CODE_PROJECT_DIR_NAME", PathBuf::from(name)),
        ]
    };
    let run = |args: &[&str], env: &[(&str, PathBuf)]| {
        let env: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
        s.sessiondb(args, &env)
    };
    let out = run(&["restore", PLAIN, "--config-dir", &config_arg], &env(name));
    assert_success(&out);
    let projects = config.join("projects");
    assert!(
        projects.join(name).join(format!("{PLAIN}.jsonl")).is_file(),
        "restored under the chosen name: {:?}",
        read_tree(&projects).keys().collect::<Vec<_>>()
    );
    for ignored in ["a.b", "con", "LPT1"] {
        let other = s.config(&format!("other-{ignored}"));
        let other_arg = other.to_string_lossy().into_owned();
        let env = [
            ("CLAUDE_CONFIG_DIR", other.clone()),
            ("CLAUDE_CODE_PROJECT_DIR_NAME", PathBuf::from(ignored)),
        ];
        assert_success(&run(&["restore", PLAIN, "--config-dir", &other_arg], &env));
        assert!(
            other
                .join("projects")
                .join(PROJECT)
                .join(format!("{PLAIN}.jsonl"))
                .is_file(),
            "{ignored} is ignored"
        );
    }

    // A session Claude Code wrote under the chosen name: imported with no path, and the one
    // `continue` finds from any folder.
    let write_session = |id: &str, cwd: &str| {
        let line = format!(
            "{{\"parentUuid\":null,\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"hi\"}},\"uuid\":\"{}aa\",\"timestamp\":\"2026-12-04T10:00:00.000Z\",\"sessionId\":\"{id}\",\"cwd\":\"{cwd}\"}}\n",
            &id[..34]
        );
        let path = projects.join(name).join(format!("{id}.jsonl"));
        std::fs::write(&path, line).expect("write");
        path
    };
    let id = "0d0d0d0d-0000-4000-8000-000000000001";
    write_session(id, "/srv/app");
    assert_success(&run(&["import"], &env(name)));
    let out = run(&["continue", "--cwd", "/srv/app"], &env(name));
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("{name}/{id}")), "{text}");
    // `capture` takes a transcript in that folder (it is inside the projects folder), and
    // `watch` with no path imports the projects folder that holds it.
    let captured = "0d0d0d0d-0000-4000-8000-000000000002";
    let transcript = write_session(captured, "/srv/other");
    let mut capture = sessiondb_command(&s.db);
    capture
        .arg("capture")
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("CLAUDE_CODE_PROJECT_DIR_NAME", name)
        .env("XDG_STATE_HOME", s.config("state"));
    let payload = serde_json::json!({
        "session_id": captured,
        "transcript_path": transcript,
        "cwd": "/srv/other",
        "hook_event_name": "Stop",
    });
    assert_success(&output_with_stdin(capture, payload.to_string().as_bytes()));
    let watched = "0d0d0d0d-0000-4000-8000-000000000003";
    write_session(watched, "/srv/third");
    assert_success(&run(&["watch", "--once"], &env(name)));
    for id in [captured, watched] {
        let out = run(&["info", id, "--json"], &[]);
        assert_success(&out);
        let info: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(info["project"], name, "{info}");
    }
    // Without CLAUDE_CONFIG_DIR, Claude Code ignores the name: so does continue.
    let mut plain = sessiondb_command(&s.db);
    plain
        .args(["continue", "--cwd", "/srv/app"])
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("CLAUDE_CODE_PROJECT_DIR_NAME", name);
    let out = plain.output().expect("run");
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
