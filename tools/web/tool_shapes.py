#!/usr/bin/env python3
"""Write a session whose tool calls have the shapes real Claude Code transcripts have (the
inputs, `tool_result` contents and `toolUseResult` fields seen in ../shared/corpus: an Edit
with its `structuredPatch`, Bash with stdout and stderr apart, Read's numbered excerpt, Grep
and Glob file lists, TodoWrite, WebFetch, WebSearch, Write, MultiEdit, an Agent with its
sub-agent transcript, an image in a tool result, an MCP tool), with bookkeeping records
between them as Claude Code writes them, and a few hostile strings in the new places.

    tools/web/tool_shapes.py OUT_DIR

Used by tools/web/test_viewer.py. The output depends only on the arguments.
"""

import os
import sys

from fixture import PNG, Chain

PROJECT = "-home-dev-toolbox"
CWD = "/home/dev/toolbox"
SESSION = "44444444-4444-4444-8444-444444444444"
AGENT = "a9f8e7d6c5b4a3921"


def call(c, mid, name, tool_id, tool_input):
    c.assistant(mid, [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}])


def result(c, tool_id, content, extra, is_error=None):
    block = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
    if is_error is not None:
        block["is_error"] = is_error
    c.user([block], toolUseResult=extra)


def tools_session(out):
    c = Chain(SESSION, "2025-06-01")
    for r in c.records:
        r["cwd"] = CWD
    c.meta("file-history-snapshot", messageId="m0", snapshot={"trackedFileBackups": {}}, isSnapshotUpdate=False)
    c.user("Tidy up the parser and show me what changed.")
    c.assistant("msg_t1", [{"type": "thinking", "thinking": "Read the file first.", "signature": "s"}])
    c.assistant("msg_t1", [{"type": "text", "text": "I'll read the parser first."}])
    call(c, "msg_t1", "Read", "toolu_read", {"file_path": "/home/dev/toolbox/src/parser.rs", "offset": 40, "limit": 3})
    c.add("progress", chained=False, data={"type": "hook_progress", "hookEvent": "PostToolUse"}, toolUseID="toolu_read")
    c.add("progress", chained=False, data={"type": "hook_progress", "hookEvent": "PostToolUse"}, toolUseID="toolu_read")
    result(c, "toolu_read",
           "    40\u2192fn parse(input: &str) -> Tree {\n    41\u2192    let mut p = Parser::new(input);\n    42\u2192    p.tree()\n",
           {"type": "text", "file": {"filePath": "/home/dev/toolbox/src/parser.rs",
                                     "content": "fn parse(input: &str) -> Tree {\n    let mut p = Parser::new(input);\n    p.tree()",
                                     "numLines": 3, "startLine": 40, "totalLines": 1234}})
    call(c, "msg_t2", "Edit", "toolu_edit", {
        "file_path": "/home/dev/toolbox/src/parser.rs",
        "old_string": "    let mut p = Parser::new(input);\n    p.tree()",
        "new_string": "    let mut parser = Parser::new(input);\n    parser.tree()",
    })
    result(c, "toolu_edit",
           "The file /home/dev/toolbox/src/parser.rs has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n    40\u2192fn parse(input: &str) -> Tree {",
           {"filePath": "/home/dev/toolbox/src/parser.rs",
            "oldString": "    let mut p = Parser::new(input);\n    p.tree()",
            "newString": "    let mut parser = Parser::new(input);\n    parser.tree()",
            "originalFile": "...",
            "structuredPatch": [{"oldStart": 40, "oldLines": 3, "newStart": 40, "newLines": 3,
                                 "lines": [" fn parse(input: &str) -> Tree {",
                                           "-    let mut p = Parser::new(input);", "-    p.tree()",
                                           "+    let mut parser = Parser::new(input);", "+    parser.tree()"]}],
            "userModified": False, "replaceAll": False})
    call(c, "msg_t3", "MultiEdit", "toolu_multi", {
        "file_path": "/home/dev/toolbox/src/lexer.rs",
        "edits": [{"old_string": "const MAX: usize = 10;", "new_string": "const MAX: usize = 64;"},
                  {"old_string": "fn lex() {}", "new_string": "fn lex() -> Vec<Token> { Vec::new() }"}],
    })
    result(c, "toolu_multi", "Applied 2 edits to /home/dev/toolbox/src/lexer.rs:\n1. Replaced \"const MAX\"\n2. Replaced \"fn lex\"", None)
    content = "".join(f"line {i} of the notes\n" for i in range(1, 61))
    call(c, "msg_t4", "Write", "toolu_write", {"file_path": "/home/dev/toolbox/NOTES.md", "content": content})
    result(c, "toolu_write", "File created successfully at: /home/dev/toolbox/NOTES.md",
           {"type": "create", "filePath": "/home/dev/toolbox/NOTES.md", "content": content, "structuredPatch": []})
    call(c, "msg_t5", "Bash", "toolu_bash", {"command": "cargo test --lib parser", "description": "Run the parser tests"})
    result(c, "toolu_bash", "running 3 tests\ntest result: ok. 3 passed\nwarning: unused variable",
           {"stdout": "running 3 tests\ntest result: ok. 3 passed", "stderr": "warning: unused variable `x`",
            "interrupted": False, "isImage": False, "noOutputExpected": False})
    call(c, "msg_t6", "Bash", "toolu_fail", {"command": "cargo clippy -- -D warnings", "description": "Lint"})
    result(c, "toolu_fail", "Exit code 101\nerror: could not compile `toolbox`", "Error: Exit code 101\nerror: could not compile `toolbox`", is_error=True)
    call(c, "msg_t7", "Grep", "toolu_grep", {"pattern": "fn parse", "path": "/home/dev/toolbox/src", "output_mode": "files_with_matches"})
    result(c, "toolu_grep", "Found 2 files\nsrc/parser.rs\nsrc/lib.rs",
           {"mode": "files_with_matches", "filenames": ["src/parser.rs", "src/lib.rs"], "numFiles": 2})
    call(c, "msg_t8", "Glob", "toolu_glob", {"pattern": "**/*.rs"})
    result(c, "toolu_glob", "/home/dev/toolbox/src/parser.rs\n/home/dev/toolbox/src/lexer.rs\n/home/dev/toolbox/src/lib.rs",
           {"filenames": ["/home/dev/toolbox/src/parser.rs", "/home/dev/toolbox/src/lexer.rs", "/home/dev/toolbox/src/lib.rs"],
            "durationMs": 5, "numFiles": 3, "truncated": False})
    todos = [{"content": "Rename the parser variable", "status": "completed", "activeForm": "Renaming"},
             {"content": "Raise the lexer limit <script>window.__pwned='todo'</script>", "status": "in_progress", "activeForm": "Raising"},
             {"content": "Write the notes", "status": "pending", "activeForm": "Writing"}]
    call(c, "msg_t9", "TodoWrite", "toolu_todo", {"todos": todos})
    result(c, "toolu_todo", "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress.",
           {"oldTodos": [], "newTodos": todos})
    call(c, "msg_t10", "WebFetch", "toolu_fetch", {"url": "https://doc.rust-lang.org/std/", "prompt": "What is in std?"})
    result(c, "toolu_fetch", "The standard library has collections, io and more.",
           {"bytes": 1000, "code": 200, "codeText": "OK", "result": "The standard library has collections, io and more.", "durationMs": 300, "url": "https://doc.rust-lang.org/std/"})
    call(c, "msg_t11", "WebSearch", "toolu_search", {"query": "rust parser combinators"})
    links = [{"title": "nom on crates.io", "url": "https://crates.io/crates/nom"},
             {"title": "Evil link", "url": "javascript:window.__pwned='search'"},
             {"title": "winnow docs", "url": "https://docs.rs/winnow"}]
    result(c, "toolu_search", "Web search results for query: \"rust parser combinators\"\n\nLinks: []\n\nnom and winnow are the usual choices.",
           {"query": "rust parser combinators", "results": [{"tool_use_id": "srvtoolu_1", "content": links}, "nom and winnow are the usual choices."], "durationSeconds": 2.5})
    call(c, "msg_t12", "Agent", "toolu_agent", {"description": "Check the lexer", "subagent_type": "Explore", "prompt": "Look for **unused** code in the lexer."})
    result(c, "toolu_agent", [{"type": "text", "text": "The lexer has **no** unused code."}],
           {"status": "completed", "prompt": "Look for unused code in the lexer.", "agentId": AGENT,
            "content": [{"type": "text", "text": "The lexer has no unused code."}], "totalDurationMs": 1000, "totalTokens": 500, "totalToolUseCount": 1})
    call(c, "msg_t13", "mcp__shots__screenshot", "toolu_shot", {"selector": "#app"})
    result(c, "toolu_shot", [{"type": "text", "text": "Screenshot of #app"},
                             {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}], None)
    c.add("system", chained=False, subtype="stop_hook_summary", hookCount=1, hookInfos=[{"command": "fmt"}], level="info")
    c.meta("file-history-snapshot", messageId="m1", snapshot={"trackedFileBackups": {}}, isSnapshotUpdate=False)
    c.meta("last-prompt", lastPrompt="Tidy up the parser and show me what changed.")
    c.assistant("msg_t14", [{"type": "text", "text": "Done: the parser is tidier and the lexer limit is **64**."}])
    for r in c.records:
        r["cwd"] = CWD
    c.write(os.path.join(out, PROJECT, SESSION + ".jsonl"))

    a = Chain(SESSION, "2025-06-01", sidechain=True, agent=AGENT)
    a.user("Look for unused code in the lexer.")
    a.assistant("msg_ta1", [{"type": "text", "text": "The lexer has no unused code (the *pangolin* check)."}])
    for r in a.records:
        r["cwd"] = CWD
    a.write(os.path.join(out, PROJECT, SESSION, "subagents", f"agent-{AGENT}.jsonl"))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    tools_session(sys.argv[1])
