//! The record renderer's tests: hostile strings, pairing, cuts, folds, cards.

use super::*;

fn render(lines: &[&str]) -> String {
    render_with(lines, false)
}

fn render_with(lines: &[&str], lazy: bool) -> String {
    let session = SessionRef {
        key: 1,
        project: "p".into(),
        session_id: "s".into(),
    };
    let records: Vec<Rec> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            Rec::from_line(StoredLine {
                ordinal: i as i64,
                raw: l.as_bytes().to_vec(),
                damaged: false,
            })
        })
        .collect();
    let mut h = Html::new();
    let mut renderer = Renderer::new(&session, None, &records, HashSet::from(["a1".to_owned()]));
    renderer.lazy = lazy;
    renderer.all(&mut h);
    h.into_string()
}

#[test]
fn lazy_folds_leave_out_calls_and_records_but_keep_anchors() {
    let lines = [
        r#"{"type":"assistant","uuid":"a","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t 1","name":"Task","input":{"description":"look for secrets"}}]}}"#,
        r#"{"type":"user","uuid":"r","toolUseResult":{"agentId":"a1"},"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t 1","content":"the result text"}]}}"#,
        r#"{"type":"progress","uuid":"p","data":{"hook":"the progress payload"}}"#,
        r#"{"type":"system","subtype":"hook","uuid":"y","content":"ran","detail":"the system payload"}"#,
    ];
    let out = render_with(&lines, true);
    for gone in [
        "the result text",
        "the progress payload",
        "the system payload",
        "<div class=\"tin\">",
    ] {
        assert!(!out.contains(gone), "{gone} in {out}");
    }
    for kept in [
        "<details class=\"tool\" data-src=\"/session/p/s/tool/0?id=t%201&amp;result=1\">",
        "<div class=\"tool-body lazy\" id=\"m-r\"><a class=\"lazy-link\" href=\"/session/p/s/record/0\">Line 1</a></div>",
        "<code>look for secrets</code>",
        "class=\"subagent\"",
        "<details class=\"rec\" id=\"m-p\" data-src=\"/session/p/s/record/2?fragment=1\">",
        "data-src=\"/session/p/s/record/3?fragment=1\"",
    ] {
        assert!(out.contains(kept), "{kept} missing from {out}");
    }
    // Written whole when not lazy (the resume view), the same folds hold everything.
    let whole = render_with(&lines, false);
    assert!(whole.contains("the result text") && whole.contains("the progress payload"));
    assert!(!whole.contains("data-src=\"/session/p/s/tool/"), "{whole}");
}

#[test]
fn hostile_strings_stay_text() {
    let out = render(&[
        r#"{"type":"user","uuid":"u\"><script>alert(1)</script>","message":{"role":"user","content":"<img src=x onerror=alert(1)> [x](javascript:alert(1))"}}"#,
        r#"{"type":"assistant","uuid":"a","message":{"role":"assistant","model":"<b>m</b>","content":[{"type":"tool_use","id":"t1","name":"<svg onload=alert(1)>","input":{"command":"</pre><script>x</script>"}}]}}"#,
        r#"{"type":"user","uuid":"r","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"</pre><iframe src=javascript:alert(1)>"}]}}"#,
        r#"{"type":"<i>weird</i>","customTitle":"<script>t</script>"}"#,
        r#"not json <script>"#,
    ]);
    for bad in [
        "<script",
        "<img",
        "<svg",
        "<iframe",
        "<b>",
        "<i>",
        "href=\"javascript",
        "onerror=alert(1)>",
    ] {
        assert!(!out.contains(bad), "{bad} in {out}");
    }
}

#[test]
fn results_sit_beside_their_calls() {
    let out = render(&[
        r#"{"type":"assistant","uuid":"a","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Task","input":{"description":"look"}}],"usage":{"input_tokens":3,"output_tokens":4}}}"#,
        r#"{"type":"user","uuid":"r","toolUseResult":{"agentId":"a1"},"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]}}"#,
    ]);
    assert_eq!(out.matches("<article").count(), 1, "{out}");
    assert!(out.contains("<div class=\"tres\" id=\"m-r\">"), "{out}");
    assert!(out.contains("class=\"subagent\""), "{out}");
    assert!(out.contains("in 3 · out 4"), "{out}");
}

#[test]
fn long_outputs_are_cut() {
    let big = "x".repeat(CUT + 5);
    let line = format!(
        r#"{{"type":"user","uuid":"u","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"z","content":"{big}"}}]}}}}"#
    );
    let out = render(&[&line]);
    assert!(out.contains("5 more characters."), "cut notice missing");
    assert!(
        out.contains("/session/p/s/record/0"),
        "show-all link missing"
    );
    assert!(out.len() < CUT + 5_000);
}

#[test]
fn boundaries_and_errors_are_marked() {
    let out = render(&[
        r#"{"type":"system","subtype":"compact_boundary","uuid":"b","compactMetadata":{"trigger":"auto","preTokens":5}}"#,
        r#"{"type":"assistant","uuid":"e","isApiErrorMessage":true,"message":{"role":"assistant","content":[{"type":"text","text":"overloaded"}]}}"#,
        r#"{"type":"user","uuid":"i","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}"#,
    ]);
    assert!(
        out.contains("Conversation compacted · auto · 5 tokens before"),
        "{out}"
    );
    assert!(out.contains("msg assistant api-error"), "{out}");
    assert!(out.contains("msg user interrupted"), "{out}");
}

/// A call of `name` with `input`, its result `content` and `toolUseResult`, rendered whole.
fn call(name: &str, input: &str, content: &str, extra: &str) -> String {
    let call = format!(
        r#"{{"type":"assistant","uuid":"a","message":{{"id":"m1","role":"assistant","content":[{{"type":"tool_use","id":"t1","name":"{name}","input":{input}}}]}}}}"#
    );
    let result = format!(
        r#"{{"type":"user","uuid":"r","toolUseResult":{extra},"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":{content}}}]}}}}"#
    );
    render(&[&call, &result])
}

#[test]
fn an_edit_is_a_diff_numbered_from_its_patch() {
    let out = call(
        "Edit",
        r#"{"file_path":"/src/a.rs","old_string":"let x = 1;","new_string":"let x = 2;"}"#,
        r#""The file /src/a.rs has been updated.""#,
        r#"{"filePath":"/src/a.rs","structuredPatch":[{"oldStart":40,"oldLines":2,"newStart":40,"newLines":2,"lines":[" fn f() {","-let x = 1;","+let x = 2;"]}]}"#,
    );
    assert!(
        out.contains("<p class=\"file\"><code>/src/a.rs</code></p>"),
        "{out}"
    );
    assert!(out.contains("@@ line 40 @@"), "{out}");
    assert!(
        out.contains("<tr class=\"del\"><td class=\"ln\">41</td><td class=\"ln\"></td><td class=\"sign\">-</td><td class=\"code\">let x = 1;</td></tr>"),
        "{out}"
    );
    assert!(
        out.contains("<tr class=\"add\"><td class=\"ln\"></td><td class=\"ln\">41</td>"),
        "{out}"
    );
    // The confirmation is one line; the input stays one click away as JSON.
    assert!(out.contains("<p class=\"note\">The file /src/a.rs has been updated.</p>"));
    assert!(out.contains("Input as JSON"));
}

#[test]
fn an_edit_without_a_patch_diffs_its_strings() {
    let out = call(
        "Edit",
        r#"{"file_path":"/a","old_string":"a\n<b>\nc","new_string":"a\n<i>\nc"}"#,
        r#""<tool_use_error>File has not been read yet.</tool_use_error>""#,
        r#""Error: File has not been read yet.""#,
    );
    assert!(
        out.contains("<td class=\"sign\">-</td><td class=\"code\">&lt;b&gt;</td>"),
        "{out}"
    );
    assert!(
        out.contains("<td class=\"sign\">+</td><td class=\"code\">&lt;i&gt;</td>"),
        "{out}"
    );
    assert!(out.contains("<td class=\"code\">a</td>"), "{out}");
    // The error is shown whole.
    assert!(
        out.contains("&lt;tool_use_error&gt;File has not been read yet."),
        "{out}"
    );
}

#[test]
fn a_multi_edit_diffs_each_edit() {
    let out = call(
        "MultiEdit",
        r#"{"file_path":"/a","edits":[{"old_string":"x","new_string":"y"},{"old_string":"p","new_string":"q"}]}"#,
        r#""Applied 2 edits""#,
        "null",
    );
    assert_eq!(out.matches("<table class=\"diff\">").count(), 2, "{out}");
    assert!(out.contains(" · 2 edits</p>"), "{out}");
}

#[test]
fn a_shell_command_is_a_terminal_with_stderr_apart() {
    let out = call(
        "Bash",
        r#"{"command":"make </dev/null","description":"Build it"}"#,
        r#""ok\nwarn""#,
        r#"{"stdout":"ok","stderr":"warn <x>","interrupted":true,"isImage":false}"#,
    );
    assert!(out.contains("<p class=\"caption\">Build it</p>"), "{out}");
    assert!(
        out.contains(
            "<span class=\"prompt\" aria-hidden=\"true\">$ </span>make &lt;/dev/null</pre>"
        ),
        "{out}"
    );
    assert!(out.contains("<pre class=\"term out\">ok</pre>"), "{out}");
    assert!(
        out.contains("<pre class=\"term err\" aria-label=\"standard error\">warn &lt;x&gt;</pre>"),
        "{out}"
    );
    assert!(out.contains("<p class=\"exit\">interrupted</p>"), "{out}");

    let failed = render(&[
        r#"{"type":"assistant","uuid":"a","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"grep"}}]}}"#,
        r#"{"type":"user","uuid":"r","toolUseResult":"Error: Exit code 127","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"Exit code 127\ngrep: not found"}]}}"#,
    ]);
    assert!(
        failed.contains(
            "<pre class=\"term out\">grep: not found</pre><p class=\"exit error\">exit 127</p>"
        ),
        "{failed}"
    );
}

#[test]
fn a_read_is_the_excerpt_with_its_line_numbers() {
    let out = call(
        "Read",
        r#"{"file_path":"/a.rs","offset":7,"limit":2}"#,
        r#""     7→fn main() {\n     8→    <x>\n""#,
        r#"{"type":"text"}"#,
    );
    assert!(out.contains("<code>/a.rs</code> · lines 7–8</p>"), "{out}");
    assert!(out.contains("<span class=\"ln\" aria-hidden=\"true\">7</span>fn main() {\n<span class=\"ln\" aria-hidden=\"true\">8</span>    &lt;x&gt;\n"), "{out}");
    // From the record's own copy of the excerpt when it has one.
    let out = call(
        "Read",
        r#"{"file_path":"/a.rs"}"#,
        r#""ignored""#,
        r#"{"type":"text","file":{"filePath":"/a.rs","content":"one\ntwo","startLine":3,"numLines":2,"totalLines":1200}}"#,
    );
    assert!(out.contains("1,200 lines in the file"), "{out}");
    assert!(
        out.contains(">3</span>one\n<span class=\"ln\" aria-hidden=\"true\">4</span>two\n"),
        "{out}"
    );
}

#[test]
fn a_long_written_file_folds_after_forty_lines() {
    let content: String = (1..=50).map(|i| format!("line {i}\\n")).collect();
    let out = call(
        "Write",
        &format!(r#"{{"file_path":"/w.txt","content":"{content}"}}"#),
        r#""File created successfully at: /w.txt""#,
        "null",
    );
    assert!(out.contains("· 50 lines · 391 bytes</p>"), "{out}");
    assert!(
        out.contains("<details class=\"more-lines\"><summary>Show all 50 lines</summary>"),
        "{out}"
    );
    let (shown, folded) = out.split_once("more-lines").unwrap();
    assert!(
        shown.contains("line 40\n") && !shown.contains("line 41\n"),
        "{out}"
    );
    assert!(folded.contains(">41</span>line 41\n"), "{out}");
}

#[test]
fn searches_are_lists_todos_a_checklist_and_links_only_http() {
    let out = call(
        "Glob",
        r#"{"pattern":"**/*.rs"}"#,
        r#""a.rs\nb.rs""#,
        r#"{"filenames":["a.rs","<b>.rs"],"numFiles":2,"truncated":false}"#,
    );
    assert!(out.contains("<p class=\"note\">2 files</p><ul class=\"files\"><li><code>a.rs</code></li><li><code>&lt;b&gt;.rs</code></li></ul>"), "{out}");

    let out = call(
        "TodoWrite",
        r#"{"todos":[{"content":"Write <tests>","status":"completed"},{"content":"Ship","status":"in_progress"},{"content":"Rest","status":"pending"}]}"#,
        r#""Todos have been modified successfully.""#,
        "null",
    );
    assert!(out.contains("<code>1 of 3 done</code>"), "{out}");
    assert!(out.contains("<li class=\"done\"><span class=\"box\" role=\"img\" aria-label=\"done\">☑</span> Write &lt;tests&gt;</li>"), "{out}");
    assert!(
        out.contains("<li class=\"doing\">") && out.contains("<li class=\"todo\">"),
        "{out}"
    );

    let out = call(
        "WebSearch",
        r#"{"query":"rust diff"}"#,
        r#""Web search results""#,
        r#"{"query":"rust diff","results":[{"tool_use_id":"s","content":[{"title":"Good","url":"https://example.com/a?b=1&c=\"2\""},{"title":"Evil","url":"javascript:alert(1)"}]},"commentary"]}"#,
    );
    assert!(out.contains("<a href=\"https://example.com/a?b=1&amp;c=&quot;2&quot;\" rel=\"noopener noreferrer\" target=\"_blank\">Good</a>"), "{out}");
    assert!(
        !out.contains("Evil") && !out.contains("href=\"javascript"),
        "{out}"
    );

    let out = call(
        "WebFetch",
        r#"{"url":"javascript:alert(1)","prompt":"p"}"#,
        r#""x""#,
        "null",
    );
    assert!(!out.contains("href=\"javascript"), "{out}");
    assert!(
        out.contains("<p class=\"file\">javascript:alert(1)</p>"),
        "{out}"
    );
}

#[test]
fn unknown_tools_show_their_input_as_json() {
    let out = call("mcp__x__y", r#"{"k":"<v>"}"#, r#""done""#, "null");
    assert!(
        out.contains("<h4>Input</h4><pre>{\n  &quot;k&quot;: &quot;&lt;v&gt;&quot;\n}</pre>"),
        "{out}"
    );
    assert!(!out.contains("Input as JSON"), "{out}");
}

#[test]
fn one_card_per_assistant_turn_and_one_line_per_run_of_bookkeeping() {
    let out = render(&[
        r#"{"type":"file-history-snapshot","messageId":"u1"}"#,
        r#"{"type":"user","uuid":"u1","message":{"role":"user","content":"go"}}"#,
        r#"{"type":"assistant","uuid":"a1","message":{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":"hmm"}],"usage":{"input_tokens":1000,"output_tokens":1}}}"#,
        r#"{"type":"assistant","uuid":"a2","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":1000,"output_tokens":2}}}"#,
        r#"{"type":"progress","uuid":"p1","data":{}}"#,
        r#"{"type":"progress","uuid":"p2","data":{}}"#,
        r#"{"type":"user","uuid":"r1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}}"#,
        r#"{"type":"assistant","uuid":"a3","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":2500,"output_tokens":3}}}"#,
        r#"{"type":"system","subtype":"stop_hook_summary","uuid":"s1"}"#,
        r#"{"type":"file-history-snapshot","messageId":"u2"}"#,
        r#"{"type":"last-prompt","lastPrompt":"go"}"#,
        r#"{"type":"user","uuid":"u2","message":{"role":"user","content":"next"}}"#,
    ]);
    // Two user cards and one assistant card holding three records.
    assert_eq!(out.matches("<article").count(), 3, "{out}");
    assert!(
        out.contains("<div class=\"part\" id=\"m-a2\">")
            && out.contains("<div class=\"part\" id=\"m-a3\">"),
        "{out}"
    );
    // Usage: each API message once (m1 at its last record, then m2), with separators.
    assert!(out.contains("in 3,500 · out 5"), "{out}");
    // Each record of the turn is still a point to fork at.
    for uuid in ["a1", "a2", "a3"] {
        assert!(out.contains(&format!("data-up-to=\"{uuid}\"")), "{out}");
    }
    // The progress pair inside the card, the three records after it as one line.
    assert!(
        out.contains("<summary><span class=\"kind\">2 records</span> progress ×2"),
        "{out}"
    );
    assert!(
        out.contains("<summary><span class=\"kind\">3 records</span> system · stop_hook_summary · file-history-snapshot · last-prompt"),
        "{out}"
    );
    let card_end = out.find("</article>").unwrap();
    let second = out[card_end + 10..].find("</article>").unwrap() + card_end + 10;
    assert!(out[..second].contains("progress ×2"), "{out}");
    assert!(!out[..second].contains("3 records"), "{out}");
}
