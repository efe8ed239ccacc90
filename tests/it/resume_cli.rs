//! Every public oracle case through the store and the CLI: import the case's projects tree
//! (with its recorded mtimes), run the verb that matches the case's mode, and compare with
//! what the real Claude Code CLI sent (`expected-api-view.json`), as JSON values.

use crate::support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

pub struct Case {
    pub dir: PathBuf,
    pub json: Value,
}

impl Case {
    pub fn name(&self) -> String {
        self.dir
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned()
    }
    pub fn str(&self, key: &str) -> Option<&str> {
        self.json.get(key).and_then(Value::as_str)
    }
    pub fn expected_view(&self) -> Value {
        let text = std::fs::read_to_string(self.dir.join("expected-api-view.json")).expect("view");
        serde_json::from_str(&text).expect("json")
    }
}

pub fn cases(shared: &Path) -> Vec<Case> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(shared.join("oracle/cases"))
        .expect("cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("case.json").is_file())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let json = serde_json::from_str(
                &std::fs::read_to_string(dir.join("case.json")).expect("case.json"),
            )
            .expect("json");
            Case { dir, json }
        })
        .collect()
}

/// Copies the case's projects tree into `into`, restoring the recorded file mtimes (a git
/// checkout loses them, and `continue` depends on them).
pub fn lay_out(case: &Case, into: &Path) -> PathBuf {
    let projects = into.join("projects");
    let src = case.dir.join("projects");
    copy(&src, &projects);
    let project = case.str("project_dir_name").expect("project_dir_name");
    if let Some(mtimes) = case.json.get("file_mtimes").and_then(Value::as_object) {
        for (name, secs) in mtimes {
            let path = projects.join(project).join(name);
            let secs = secs.as_f64().expect("mtime");
            let when = SystemTime::UNIX_EPOCH + Duration::from_secs_f64(secs);
            if let Ok(file) = std::fs::File::options().write(true).open(&path) {
                file.set_modified(when).expect("set mtime");
            }
        }
    }
    projects
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let path = entry.expect("entry").path();
        let dest = to.join(path.file_name().expect("name"));
        if path.is_dir() {
            copy(&path, &dest);
        } else {
            std::fs::copy(&path, &dest).expect("copy");
        }
    }
}

/// The `sessiondb` arguments that resume a case: `resume TARGET` or `continue --project P`,
/// with the case's options.
pub fn verb_args(case: &Case) -> Vec<String> {
    let mut args: Vec<String> = match case.str("mode") {
        Some("continue") => vec![
            "continue".into(),
            "--project".into(),
            case.str("project_dir_name").expect("project").into(),
        ],
        _ => {
            let target = case
                .str("resume_arg")
                .or(case.str("target_session_id"))
                .expect("target");
            vec!["resume".into(), target.into()]
        }
    };
    args.push("--api".into());
    if let Some(at) = case.str("resume_session_at") {
        args.extend(["--at".into(), at.into()]);
    }
    if case.json.get("interactive").and_then(Value::as_bool) == Some(true) {
        args.push("--interactive".into());
    }
    let env = case.json.get("env");
    if env
        .and_then(|e| e.get("CLAUDE_CODE_RESUME_INTERRUPTED_TURN"))
        .and_then(Value::as_str)
        == Some("1")
    {
        args.push("--continue-interrupted".into());
    }
    args
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn every_resume_and_continue_case_prints_the_cli_api_view() {
    let Some(shared) = shared_dir("the oracle resume cases") else {
        return;
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in cases(&shared) {
        if case.str("mode") == Some("fork") {
            continue; // fork then resume is tested with the fork verb
        }
        let dir = tempfile::tempdir().expect("tmp");
        let projects = lay_out(&case, dir.path());
        let db = dir.path().join("s.db");
        let out = sessiondb(
            &db,
            &["import".into(), projects.to_string_lossy().into_owned()],
        );
        assert!(out.status.success(), "{}: import failed", case.name());
        let out = sessiondb(&db, &verb_args(&case));
        checked += 1;
        if !out.status.success() {
            failures.push(format!(
                "{}: exit {:?}: {}",
                case.name(),
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let got: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
        if got != case.expected_view() {
            failures.push(format!("{}: API view differs", case.name()));
        }
    }
    assert!(checked >= 60, "only {checked} cases were checked");
    assert!(
        failures.is_empty(),
        "{} of {checked} cases fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn continue_picks_the_session_the_cli_picked() {
    let Some(shared) = shared_dir("the oracle continue cases") else {
        return;
    };
    for case in cases(&shared) {
        if case.str("mode") != Some("continue")
            && case.json.get("continue").and_then(Value::as_bool) != Some(true)
        {
            continue;
        }
        let dir = tempfile::tempdir().expect("tmp");
        let projects = lay_out(&case, dir.path());
        let (_d, store) = temp_store();
        import(&store, &[&projects]);
        let picked = store
            .continue_target(case.str("project_dir_name").expect("project"))
            .expect("a session");
        assert_eq!(
            Some(picked.session_id.as_str()),
            case.str("target_session_id"),
            "{}",
            case.name()
        );
    }
}
