//! The real-transcript pack (`../shared/oracle/real/cases`, CLI 2.1.332 resuming
//! transcripts written by older CLIs) and the cases made with the harness for this
//! repository (`tests/fixtures/oracle-made`): every case through the pure API view and
//! through the store, compared with `expected-api-view.json` for the case's `--model`;
//! refusals must be refused with the CLI's message; every view must pass the validator.

use crate::resume_cli::{lay_out, Case};
use crate::support::*;
use serde_json::Value;
use sessiondb::query;
use sessiondb::resume::{self, api_view, validate, ApiOptions, CliVersion, ResumeOptions};
use std::path::{Path, PathBuf};

/// Cases of a pack folder (every sub-folder with a `case.json`), sorted by name.
fn cases_in(dir: &Path) -> Vec<Case> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("case.json").is_file())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let text = std::fs::read_to_string(dir.join("case.json")).expect("case.json");
            Case {
                json: serde_json::from_str(&text).expect("case.json is JSON"),
                dir,
            }
        })
        .collect()
}

fn real_cases() -> Option<Vec<Case>> {
    let shared = shared_dir("the real-transcript resume pack")?;
    let cases = cases_in(&shared.join("oracle/real/cases"));
    assert!(cases.len() >= 61, "only {} real cases found", cases.len());
    Some(cases)
}

/// The made cases with a view or a refusal to compare (a few only record which model id
/// the CLI called, `case.json.view_not_compared` says why).
fn made_cases() -> Vec<Case> {
    cases_in(&made_dir())
        .into_iter()
        .filter(|c| {
            c.str("expected_error").is_some() || c.dir.join("expected-api-view.json").is_file()
        })
        .collect()
}

fn made_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oracle-made")
}

/// The case's session file, as the CLI reads it (lines trimmed, bad lines skipped).
fn records(case: &Case) -> Vec<Value> {
    let file = case
        .dir
        .join("projects")
        .join(case.str("project_dir_name").expect("project_dir_name"))
        .join(format!(
            "{}.jsonl",
            case.str("target_session_id").expect("target")
        ));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text.split('\n')
        .map(|l| l.trim_start_matches('\u{feff}').trim())
        .filter(|l| !l.is_empty())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect()
}

fn model(case: &Case) -> Option<String> {
    case.str("model").map(str::to_owned)
}

/// The CLI version that made the case (`case.json.cli_version`): sessiondb resumes as that
/// version (`--cli-version`).
fn cli_version(case: &Case) -> CliVersion {
    case.str("cli_version")
        .map(|v| v.parse().expect("case.json cli_version is X.Y.Z"))
        .unwrap_or_default()
}

/// Checks one case with the pure functions: the view (or the refusal), and the validator.
fn check_pure(case: &Case) -> Result<(), String> {
    let records = records(case);
    let opts = ApiOptions {
        model: model(case).as_deref().map(resume::resolve_model),
        cli_version: cli_version(case),
        ..ApiOptions::default()
    };
    let conv = resume::load_conversation(&records, &opts).map_err(|e| e.to_string())?;
    if let Some(want) = case.str("expected_error") {
        let target = case.str("target_session_id").expect("target");
        return match resume::refusal(&conv.messages, target) {
            Some(msg) if msg == want => Ok(()),
            other => Err(format!("expected refusal {want:?}, got {other:?}")),
        };
    }
    let view = api_view(&records, &opts).map_err(|e| e.to_string())?;
    let got = Value::Array(view.clone());
    let want = case.expected_view();
    if got != want {
        return Err(format!("view differs: {}", first_diff(&got, &want, "$")));
    }
    let v = validate(&view);
    if !v.is_empty() {
        return Err(format!("invalid view: {v:?}"));
    }
    Ok(())
}

/// Where two JSON values first differ, shortly.
fn first_diff(a: &Value, b: &Value, path: &str) -> String {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                if u != v {
                    return first_diff(u, v, &format!("{path}[{i}]"));
                }
            }
            format!("{path}: length {} vs {}", x.len(), y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            for (k, u) in x {
                match y.get(k) {
                    Some(v) if u == v => {}
                    Some(v) => return first_diff(u, v, &format!("{path}.{k}")),
                    None => return format!("{path}.{k}: unexpected"),
                }
            }
            format!(
                "{path}: keys {:?} vs {:?}",
                x.keys().collect::<Vec<_>>(),
                y.keys().collect::<Vec<_>>()
            )
        }
        _ => {
            let short = |v: &Value| v.to_string().chars().take(200).collect::<String>();
            format!("{path}: got {} want {}", short(a), short(b))
        }
    }
}

/// Checks one case through import and `Store::resume` (what the CLI does).
fn check_store(case: &Case) -> Result<(), String> {
    let dir = tempfile::tempdir().expect("tmp");
    let projects = lay_out(case, dir.path());
    let (_d, store) = temp_store();
    import(&store, &[&projects]);
    let target = case.str("target_session_id").expect("target");
    let session = query::resolve_session(&store.reader().expect("reader"), target)
        .map_err(|e| e.to_string())?;
    let options = ResumeOptions {
        model: model(case),
        cli_version: cli_version(case),
        ..ResumeOptions::default()
    };
    let resumed = store.resume(&session, &options);
    if let Some(want) = case.str("expected_error") {
        let lean = store.resume_api_view(&session, &options);
        return match (resumed, lean) {
            (Err(e), Err(l)) if e.to_string() == want && l.to_string() == want => Ok(()),
            (Err(e), Err(l)) => Err(format!("refused with {e} (API view: {l}), want {want}")),
            _ => Err(format!(
                "not refused by both resume and the API view, want {want}"
            )),
        };
    }
    let resumed = resumed.map_err(|e| e.to_string())?;
    let got = Value::Array(resumed.into_api_view());
    let want = case.expected_view();
    if got != want {
        return Err(format!(
            "store view differs: {}",
            first_diff(&got, &want, "$")
        ));
    }
    // The lighter records `resume --api` gathers give the same view.
    let lean = store
        .resume_api_view(&session, &options)
        .map_err(|e| e.to_string())?;
    let lean = Value::Array(lean);
    if lean != want {
        return Err(format!(
            "resume_api_view differs: {}",
            first_diff(&lean, &want, "$")
        ));
    }
    Ok(())
}

fn run(cases: &[Case], check: fn(&Case) -> Result<(), String>, what: &str) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| check(c).err().map(|e| format!("{}: {e}", c.name())))
        .collect();
    eprintln!(
        "{what}: {}/{} cases pass",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{what}: {} of {} fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn real_pack_views_equal_the_cli() {
    let Some(cases) = real_cases() else { return };
    run(&cases, check_pure, "real pack (pure)");
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn real_pack_through_the_store_equals_the_cli() {
    let Some(cases) = real_cases() else { return };
    run(&cases, check_store, "real pack (store)");
}

#[test]
fn made_cases_equal_the_cli() {
    let cases = made_cases();
    assert!(!cases.is_empty(), "tests/fixtures/oracle-made has no cases");
    run(&cases, check_pure, "made cases (pure)");
    run(&cases, check_store, "made cases (store)");
}

/// B14: every made case records the model id the CLI actually called for its `--model`
/// (`case.json.request_model`); [`resume::resolve_model`] gives the same id.
#[test]
fn model_ids_are_rewritten_as_the_cli_does() {
    let mut seen = 0;
    for case in cases_in(&made_dir()) {
        let (Some(asked), Some(called)) = (case.str("model"), case.str("request_model")) else {
            continue;
        };
        seen += 1;
        assert_eq!(resume::resolve_model(asked), called, "{}", case.name());
    }
    assert!(seen >= 8, "only {seen} made cases record the called model");
}

/// B9: `resume` of a session without conversation exits 1 with exactly the CLI's message.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn refusals_exit_1_with_the_cli_message() {
    let Some(cases) = real_cases() else { return };
    let mut seen = 0;
    for case in cases.iter().filter(|c| c.str("expected_error").is_some()) {
        seen += 1;
        let dir = tempfile::tempdir().expect("tmp");
        let projects = lay_out(case, dir.path());
        let db = dir.path().join("s.db");
        let out = sessiondb(
            &db,
            &["import".into(), projects.to_string_lossy().into_owned()],
        );
        assert!(out.status.success(), "{}: import failed", case.name());
        let target = case.str("target_session_id").expect("target").to_owned();
        let mut verbs = vec![vec!["resume".to_owned(), target, "--api".into()]];
        if case.name().starts_with("happy__goal-status") {
            // the only refusal whose session `continue` can pick (it has a chain record)
            verbs.push(vec![
                "continue".to_owned(),
                "--project".into(),
                case.str("project_dir_name").expect("project").into(),
            ]);
        }
        for verb in verbs {
            let out = sessiondb(&db, &verb);
            assert_eq!(out.status.code(), Some(1), "{} {verb:?}", case.name());
            assert!(
                out.stdout.is_empty(),
                "{}: stdout {:?}",
                case.name(),
                out.stdout
            );
            assert_eq!(
                String::from_utf8_lossy(&out.stderr).trim_end(),
                case.str("expected_error").expect("error"),
                "{} {verb:?}",
                case.name()
            );
        }
    }
    assert_eq!(seen, 3, "the pack has 3 refusals");
}

/// `fork` and `append` of an old transcript keep it resuming as the CLI resumes the
/// original: a fork (its records re-recorded under a new id, no `--model` given) picks the
/// same model and gives the case's view for the case's model; writing a resume's repairs
/// back with `append` (what the CLI writes before its new turn) changes nothing either.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn forks_and_write_backs_of_real_transcripts_resume_like_the_original() {
    let Some(cases) = real_cases() else { return };
    let mut failures = Vec::new();
    for case in cases.iter().filter(|c| c.str("expected_error").is_none()) {
        let dir = tempfile::tempdir().expect("tmp");
        let projects = lay_out(case, dir.path());
        let (_d, store) = temp_store();
        import(&store, &[&projects]);
        let target = case.str("target_session_id").expect("target");
        let source =
            query::resolve_session(&store.reader().expect("reader"), target).expect("source");
        let with_model = ResumeOptions {
            model: model(case),
            cli_version: cli_version(case),
            ..ResumeOptions::default()
        };
        let want = case.expected_view();
        let original = store
            .resume(&source, &ResumeOptions::default())
            .expect("resume");
        let forked = store
            .fork(&source, &sessiondb::fork::ForkOptions::default())
            .expect("fork");
        let fork_default = store
            .resume(&forked.session, &ResumeOptions::default())
            .expect("resume fork");
        if fork_default.model != original.model {
            failures.push(format!(
                "{}: fork model {:?} != {:?}",
                case.name(),
                fork_default.model,
                original.model
            ));
        }
        let fork_view = store.resume(&forked.session, &with_model).expect("fork");
        if Value::Array(fork_view.into_api_view()) != want {
            failures.push(format!("{}: the fork resumes to another view", case.name()));
        }
        let resumed = store.resume(&source, &with_model).expect("resume");
        store.append(&source, &resumed.messages).expect("append");
        let again = store.resume(&source, &with_model).expect("resume again");
        if again.repairs.iter().any(|r| r.kind.adds_record()) {
            failures.push(format!("{}: repairs again after write-back", case.name()));
        }
        if Value::Array(again.into_api_view()) != want {
            failures.push(format!("{}: view changed after write-back", case.name()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `resume --model` through the binary: the same transcript gives the `__own` and the
/// `__other` view, and `--json` reports the model called (B14 rewrite applied).
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn the_cli_takes_a_model() {
    let Some(cases) = real_cases() else { return };
    let pick = |name: &str| {
        cases
            .iter()
            .find(|c| c.name() == name)
            .unwrap_or_else(|| panic!("case {name}"))
    };
    let own = pick("entirecli__c9883595c929_0_full__own");
    let other = pick("entirecli__c9883595c929_0_full__other");
    let dir = tempfile::tempdir().expect("tmp");
    let projects = lay_out(own, dir.path());
    let db = dir.path().join("s.db");
    let out = sessiondb(
        &db,
        &["import".into(), projects.to_string_lossy().into_owned()],
    );
    assert!(out.status.success());
    let target = own.str("target_session_id").expect("target").to_owned();
    assert_ne!(own.expected_view(), other.expected_view());
    for case in [own, other] {
        let out = sessiondb(
            &db,
            &[
                "resume".into(),
                target.clone(),
                "--api".into(),
                "--model".into(),
                case.str("model").expect("model").into(),
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(got, case.expected_view(), "{}", case.name());
    }
    let out = sessiondb(
        &db,
        &[
            "resume".into(),
            target,
            "--json".into(),
            "--model".into(),
            "opus".into(),
        ],
    );
    let bundle: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(bundle["model"], "claude-opus-5-5");
}

/// `--cli-version` through the binary (issue 25): the file of the made case
/// `issue25_later` gives what the real 2.1.336 sent by default and with
/// `--cli-version 2.1.336`, and what the real 2.1.332 sent (`issue25_later_332`, recorded
/// from the same file) with `--cli-version 2.1.332`, for both `resume` and `continue`;
/// a version that is not `X.Y.Z` is refused with a message saying so.
#[test]
fn the_cli_takes_a_cli_version() {
    let cases = made_cases();
    let pick = |name: &str| {
        cases
            .iter()
            .find(|c| c.name() == name)
            .unwrap_or_else(|| panic!("case {name}"))
    };
    let new = pick("issue25_later__claude-opus-4-8");
    let old = pick("issue25_later_332__claude-opus-4-8");
    assert_eq!(new.str("cli_version"), Some("2.1.336"));
    assert_eq!(old.str("cli_version"), Some("2.1.332"));
    assert_eq!(records(new), records(old), "the same file");
    assert_ne!(new.expected_view(), old.expected_view());
    let dir = tempfile::tempdir().expect("tmp");
    let projects = lay_out(new, dir.path());
    let db = dir.path().join("s.db");
    let out = sessiondb(
        &db,
        &["import".into(), projects.to_string_lossy().into_owned()],
    );
    assert!(out.status.success());
    let target = new.str("target_session_id").expect("target").to_owned();
    let project = new.str("project_dir_name").expect("project").to_owned();
    let run = |verb: Vec<String>, version: Option<&str>| -> Value {
        let mut args = verb;
        args.extend(["--api".into(), "--model".into(), "claude-opus-4-8".into()]);
        if let Some(v) = version {
            args.extend(["--cli-version".into(), v.into()]);
        }
        let out = sessiondb(&db, &args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let verbs = [
        vec!["resume".to_owned(), target.clone()],
        vec!["continue".to_owned(), "--project".into(), project],
    ];
    for verb in verbs {
        assert_eq!(run(verb.clone(), None), new.expected_view(), "{verb:?}");
        for v in ["2.1.336", "2.1.333", "2.2.0"] {
            assert_eq!(
                run(verb.clone(), Some(v)),
                new.expected_view(),
                "{verb:?} {v}"
            );
        }
        for v in ["2.1.332", "2.1.300", "2.0.50"] {
            assert_eq!(
                run(verb.clone(), Some(v)),
                old.expected_view(),
                "{verb:?} {v}"
            );
        }
    }
    for bad in ["2.1", "latest", "2.1.x", "v2.1.332"] {
        let out = sessiondb(
            &db,
            &[
                "resume".into(),
                target.clone(),
                "--api".into(),
                "--cli-version".into(),
                bad.into(),
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("is not a Claude Code version: expected X.Y.Z"),
            "{bad}: {err}"
        );
    }
    let help = sessiondb(&db, &["resume", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--cli-version <V>") && help.contains("[default: 2.1.336]"));
}
