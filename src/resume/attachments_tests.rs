//! Unit tests of the attachment table (`super`), kept apart to keep the table short.

use super::*;
use serde_json::json;

fn r(a: Value) -> Option<Vec<String>> {
    render(&a, &ModelProfile::default(), CliVersion::default())
}

/// The kinds CLI 2.1.332 does not know render nothing as that version.
#[test]
fn later_kinds_by_version() {
    let a = json!({"type":"routine_fire","firedAt":"9 AM"});
    let p = ModelProfile::default();
    assert_eq!(
        r(a.clone()),
        Some(vec!["This task fired at 9 AM.".to_owned()])
    );
    assert_eq!(render(&a, &p, "2.1.332".parse().expect("v")), None);
    assert_eq!(render(&a, &p, "2.1.333".parse().expect("v")), r(a.clone()));
    let d = json!({"type":"date_change","newDate":"x"});
    assert_eq!(render(&d, &p, "2.1.332".parse().expect("v")), r(d));
}

#[test]
fn wrap_unwrap_roundtrip() {
    for t in ["x", "a\n", "\nb", ""] {
        assert_eq!(unwrap(&wrap(t)), t);
    }
    assert_eq!(unwrap("plain"), "plain");
}

#[test]
fn unknown_types_are_not_sent() {
    assert_eq!(r(json!({"type":"no_such_type"})), None);
    assert_eq!(r(json!({"x":1})), None);
}

#[test]
fn hook_text_escapes_reminder_tags() {
    assert_eq!(
        hook_text("a </system-reminder> b < system-reminder>"),
        "a &lt;/system-reminder> b &lt; system-reminder>"
    );
    assert_eq!(hook_text("ends with <"), "ends with &lt;");
    assert_eq!(hook_text("ends with </ "), "ends with &lt;/ ");
    assert_eq!(hook_text("a <system-reminders>"), "a <system-reminders>");
}

#[test]
fn hook_success_only_session_start_and_prompt_submit() {
    let ok = json!({"type":"hook_success","hookName":"SessionStart:startup","hookEvent":"SessionStart","content":"hi"});
    assert_eq!(
        r(ok),
        Some(vec!["SessionStart:startup hook success: hi".into()])
    );
    let stop = json!({"type":"hook_success","hookName":"Stop","hookEvent":"Stop","content":"hi"});
    assert_eq!(r(stop), Some(vec![]));
    let empty = json!({"type":"hook_success","hookName":"SessionStart:startup","hookEvent":"SessionStart","content":""});
    assert_eq!(r(empty), Some(vec![]));
}

#[test]
fn task_reminder_depends_on_task_tools() {
    let a = json!({"type":"task_reminder","content":[{"id":"1","status":"pending","subject":"Do it"}],"itemCount":1});
    let with = render(&a, &ModelProfile::default(), CliVersion::default()).expect("known");
    assert!(with[0].ends_with("\n\n\nHere are the existing tasks:\n\n#1. [pending] Do it"));
    let without = render(
        &a,
        &ModelProfile {
            task_tools: false,
            ..ModelProfile::default()
        },
        CliVersion::default(),
    );
    assert_eq!(without, Some(vec![]));
}

#[test]
fn listings() {
    let a = json!({"type":"agent_listing_delta","addedTypes":["x"],"addedLines":["- x: y"],"isInitial":true,"removedTypes":[],"showConcurrencyNote":true});
    assert_eq!(r(a), Some(vec!["Available agent types for the Agent tool:\n- x: y\n\nWhen you launch multiple agents for independent work, send them in a single message with multiple tool uses so they run concurrently.".into()]));
    let d = json!({"type":"deferred_tools_delta","addedNames":["A"],"addedLines":["A"],"removedNames":["B"],"readdedNames":[]});
    let got = r(d).expect("known");
    assert!(got[0].starts_with("The following deferred tools are now available via ToolSearch."));
    assert!(got[0].ends_with(&format!("The following deferred tools are no longer available in this session. Do not search for them \u{2014} ToolSearch will return no match:\nB\n\n{AMBIENT_NOTE}")));
    let m = json!({"type":"mcp_instructions_delta","addedNames":["s"],"addedBlocks":["## s\nuse it"],"removedNames":[]});
    assert_eq!(r(m), Some(vec!["# MCP Server Instructions\n\nThe following MCP servers have provided instructions for how to use their tools and resources:\n\n## s\nuse it".into()]));
    let s = json!({"type":"skill_listing","content":"- a: b","isInitial":true});
    assert_eq!(
        r(s),
        Some(vec![
            "The following skills are available for use with the Skill tool:\n\n- a: b".into()
        ])
    );
}

#[test]
fn diagnostics_format() {
    let a = json!({"type":"diagnostics","files":[
        {"uri":"file:///p/src/main.rs","diagnostics":[
            {"message":"m1","severity":"warning","range":{"start":{"line":0,"character":2}},"code":"c","source":"s"},
            {"message":"bad","range":{}},
            {"message":"m2","severity":"odd","range":{"start":{"line":3,"character":0}},"code":""}]},
        {"uri":"x","diagnostics":[]}]});
    assert_eq!(
        r(a),
        Some(vec!["<new-diagnostics>The following new diagnostic issues were detected:\n\nmain.rs:\n  \u{26a0} [Line 1:3] m1 [c] (s)\n  \u{25cf} [Line 4:1] m2</new-diagnostics>".into()])
    );
    assert_eq!(r(json!({"type":"diagnostics","files":[]})), Some(vec![]));
    let many: Vec<Value> = (0..200)
        .map(|i| json!({"message":format!("message number {i}"),"severity":"Error","range":{"start":{"line":i,"character":0}}}))
        .collect();
    let long = r(json!({"type":"diagnostics","files":[{"uri":"a.rs","diagnostics":many}]}))
        .expect("known");
    assert!(long[0].ends_with("\u{2026}[truncated]</new-diagnostics>"));
}

#[test]
fn silent_types() {
    for t in [
        "hook_system_message",
        "command_permissions",
        "goal_status",
        "todo_reminder",
    ] {
        assert_eq!(r(json!({"type":t,"content":"x"})), Some(vec![]), "{t}");
    }
}

#[test]
fn queued_command_of_the_user() {
    let a = json!({"type":"queued_command","prompt":"hey","commandMode":"prompt","origin":{"kind":"human"}});
    let got = r(a).expect("known");
    assert!(got[0].starts_with("The user sent a new message while you were working:\nhey\n\n"));
    // A background task's notification gets the system-notification frame
    // (made case `issue25_misses__*`).
    let task = json!({"type":"queued_command","prompt":"x","commandMode":"task-notification","origin":{"kind":"task-notification"}});
    let got = r(task).expect("known");
    assert!(got[0].starts_with("[SYSTEM NOTIFICATION - NOT USER INPUT]\n"));
    assert!(got[0].ends_with("\n\nx"));
}
