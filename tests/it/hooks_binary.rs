//! The binary a capture hook runs: `hooks install` names the path it was run by (a link
//! stays a link, so an upgrade that re-points it keeps capture running), and `hooks status`
//! warns when that binary is gone or is not the one running.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A copy of the binary under test at `path` (a hard link when the file system allows).
fn binary_at(path: &Path) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let built = Path::new(env!("CARGO_BIN_EXE_sessiondb"));
    if std::fs::hard_link(built, path).is_err() {
        std::fs::copy(built, path).expect("copy the binary");
    }
}

fn link(target: &Path, at: &Path) {
    let _ = std::fs::remove_file(at);
    std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
    std::os::unix::fs::symlink(target, at).expect("symlink");
}

fn run(program: &Path, settings: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(["hooks"])
        .args(args)
        .arg("--settings")
        .arg(settings)
        .env("XDG_STATE_HOME", settings.with_file_name("state"))
        .output()
        .expect("run sessiondb")
}

fn stop_command(settings: &Path) -> String {
    let text = std::fs::read_to_string(settings).expect("settings");
    let value: serde_json::Value = serde_json::from_str(&text).expect("json");
    value["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .expect("a Stop hook")
        .to_owned()
}

#[test]
fn a_hook_installed_through_a_link_survives_an_upgrade_that_repoints_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = std::fs::canonicalize(dir.path()).expect("real");
    let settings = root.join("settings.json");
    let v1 = root.join("v1/sessiondb");
    let v2 = root.join("v2/sessiondb");
    let installed = root.join("bin/sessiondb");
    binary_at(&v1);
    link(&v1, &installed);
    let out = run(&installed, &settings, &["install"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let command = stop_command(&settings);
    assert_eq!(command, format!("{} capture", installed.display()));

    // The upgrade: a new version elsewhere, the link re-pointed, the old one removed.
    binary_at(&v2);
    link(&v2, &installed);
    std::fs::remove_file(&v1).expect("rm v1");
    let out = run(&installed, &settings, &["status"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("warning"), "{err}");
    // The hook's command still runs a capture (an empty payload is logged, exit 0).
    let ran = Command::new("sh")
        .arg("-c")
        .arg(&command)
        .env("XDG_STATE_HOME", root.join("state"))
        .env("SESSIONDB_PATH", root.join("s.db"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("sh");
    assert_eq!(ran.status.code(), Some(0));
    assert!(
        !String::from_utf8_lossy(&ran.stderr).contains("not found"),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
}

#[test]
fn hooks_status_warns_when_the_hooks_binary_is_gone_or_another() {
    let dir = tempfile::tempdir().expect("tmp");
    let root: PathBuf = std::fs::canonicalize(dir.path()).expect("real");
    let settings = root.join("settings.json");
    let old = root.join("old/sessiondb");
    binary_at(&old);
    let out = run(&old, &settings, &["install"]);
    assert!(out.status.success());
    // Another sessiondb runs status: the hook's binary differs.
    let this = Path::new(env!("CARGO_BIN_EXE_sessiondb"));
    let out = run(this, &settings, &["status"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "the hooks run {}, which is not this sessiondb",
            old.display()
        )),
        "{err}"
    );
    let json = run(this, &settings, &["status", "--json"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(
        value["warnings"].as_array().map(Vec::len),
        Some(1),
        "{value}"
    );
    // The hook's binary removed: capture has stopped, and status says so.
    std::fs::remove_file(&old).expect("rm");
    let out = run(this, &settings, &["status"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("which does not exist: capture is not running"),
        "{err}"
    );
}
