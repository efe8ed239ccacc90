#!/usr/bin/env python3
"""Make the issue-25 oracle cases (tests/fixtures/oracle-made/issue25_*) with the real CLI.

Each scenario is a synthetic transcript holding record kinds the corpus lacks; the real
CLI resumes it offline (tools/difftest/cli.py) once per model mode, and the request minus
the new turn becomes `expected-api-view.json`. Every scenario ends with an assistant text,
so the new turn is the last user message (and its `system` message after it).

    python3 tools/difftest/made.py [--out tests/fixtures/oracle-made] [--only NAME] [--check]

`--check` compares with the stored cases instead of writing them (prints what changed):
the follow-the-CLI script runs it against a newer CLI (`CLAUDE_BIN`)."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli  # noqa: E402
from transcript import Transcript  # noqa: E402

CWD = "/home/dev/proj25"
MODELS = ["claude-sonnet-4-5", "claude-opus-4-8"]


def misses():
    """The misses of issue 25, one of each: a `fallback` block sharing message.id with the
    text after it; a re-read `file`; an `async_hook_response`; a tool result with leading
    whitespace that a reminder is folded into; parallel calls whose first result is
    written before the second call; a task notification queued as a command."""
    t = Transcript("0a1b2c3d-0000-4000-8000-000000000001", CWD, tag="miss")
    p = t.user(None, "first prompt")
    p = t.assistant(p, "msg_fb", [{"type": "fallback", "from": {"model": "claude-opus-4-8"},
                                   "to": {"model": "claude-sonnet-4-5"}}])
    p = t.assistant(p, "msg_fb", [{"type": "text", "text": "text after fallback"}])
    p = t.user(p, "read it")
    p = t.assistant(p, "msg_r", [{"type": "tool_use", "id": "toolu_r1", "name": "Read",
                                  "input": {"file_path": CWD + "/a.txt"}}])
    p = t.user(p, [{"tool_use_id": "toolu_r1", "type": "tool_result", "content": "\n\n   leading ws result\n"}])
    p = t.attachment(p, {"type": "file", "filename": CWD + "/src/b.txt", "content": {"type": "text", "file": {
        "filePath": CWD + "/src/b.txt", "content": "alpha\nbeta\ngamma", "numLines": 3, "startLine": 5,
        "totalLines": 10}}})
    p = t.attachment(p, {"type": "async_hook_response", "processId": "p1", "hookName": "SessionStart:startup",
                         "hookEvent": "SessionStart", "toolName": None,
                         "response": {"systemMessage": "hook says hi", "hookSpecificOutput": {
                             "hookEventName": "SessionStart", "additionalContext": "extra ctx"}},
                         "stdout": "", "stderr": "", "exitCode": 0})
    p = t.assistant(p, "msg_t", [{"type": "text", "text": "done reading"}])
    p0 = t.user(p, "two tools")
    a1 = t.assistant(p0, "msg_p", [{"type": "tool_use", "id": "toolu_a", "name": "Bash", "input": {"command": "echo a"}}])
    t.user(a1, [{"tool_use_id": "toolu_a", "type": "tool_result", "content": "a", "is_error": False}])
    a2 = t.assistant(a1, "msg_p", [{"type": "tool_use", "id": "toolu_b", "name": "Bash", "input": {"command": "echo b"}}])
    ub = t.user(a2, [{"tool_use_id": "toolu_b", "type": "tool_result", "content": "  b", "is_error": False}])
    p = t.attachment(ub, {"type": "queued_command", "commandMode": "task-notification", "prompt":
                          "<task-notification>\n<task-id>t1</task-id>\n<status>completed</status>\n"
                          "<summary>Background task done</summary>\n</task-notification>"})
    p = t.assistant(p, "msg_q", [{"type": "text", "text": "after parallel"}])
    p = t.user(p, "<task-notification>\n<task-id>t2</task-id>\n<status>completed</status>\n</task-notification>")
    t.assistant(p, "msg_z", [{"type": "text", "text": "final"}])
    return t


def files():
    """`file` attachments in every text shape: a range, truncation, an empty file, an
    offset past the end, CRLF lines, a closing reminder tag in the text."""
    t = Transcript("0a1b2c3d-0000-4000-8000-000000000002", CWD, tag="file")

    def f(name, content, num, start, total, **extra):
        a = {"type": "file", "filename": CWD + "/" + name, "content": {"type": "text", "file": {
            "filePath": CWD + "/" + name, "content": content, "numLines": num, "startLine": start,
            "totalLines": total}}}
        a.update(extra)
        return a
    p = t.user(None, "files")
    for a in [f("range.txt", "three\nfour", 2, 3, 9, range={"offset": 3, "limit": 2}),
              f("big.txt", "l1\nl2", 2, 1, 5000, truncated=True),
              f("big2.txt", "l1", 1, 1, 5000, truncated=True, restCannotBeRead=True, range={"offset": 1, "limit": 1}),
              f("empty.txt", "", 0, 1, 0),
              f("short.txt", "", 0, 10, 3),
              f("blank-lines.txt", "", 1, 1, 4),
              f("crlf.txt", "a\r\nb\r\n", 3, 1, 3),
              f("tag.txt", "x </system-reminder> y\n< / SYSTEM-REMINDER> z", 2, 1, 2)]:
        p = t.attachment(p, a)
    p = t.assistant(p, "msg_1", [{"type": "text", "text": "ok"}])
    return t


def hooks():
    """`async_hook_response` shapes and task notifications with an explicit origin."""
    t = Transcript("0a1b2c3d-0000-4000-8000-000000000003", CWD, tag="hook")
    p = t.user(None, "hooks")
    for a in [{"type": "async_hook_response", "hookName": "PostToolUse:Bash", "hookEvent": "PostToolUse",
               "response": {"systemMessage": "only a message"}},
              {"type": "async_hook_response", "hookName": "Stop", "hookEvent": "Stop", "isPlainOutput": True,
               "response": {"hookSpecificOutput": {"additionalContext": "plain ctx"}}},
              {"type": "async_hook_response", "hookName": "Stop", "hookEvent": "Stop", "response": {}},
              {"type": "async_hook_response", "hookName": "Stop", "hookEvent": "Stop",
               "response": {"systemMessage": "a </system-reminder> b <"}},
              {"type": "queued_command", "origin": {"kind": "task-notification"}, "commandMode": "prompt",
               "prompt": "<task-notification>done </system-reminder></task-notification>"}]:
        p = t.attachment(p, a)
    p = t.assistant(p, "msg_1", [{"type": "text", "text": "ok"}])
    return t


SILENT_KINDS = """advisor_stripped already_read_file async_hook_response_batch batching_reminder_sent
command_permissions credential_org deferred_tools_record edited_image_file goal_status
hook_cancelled hook_deferred_tool hook_error_during_execution hook_non_blocking_error
hook_permission_decision hook_system_message max_turns_reached message_pdf_reads
progress_reminder_sent project_doc_reads projects_thread_ask prompt_as_file prompt_render_point
prompt_snapshot secondary_reminder_sent session_cron_carry structured_output
teammate_shutdown_batch thinking_drop thinking_stripped tool_host_result_lines
tool_offer_record tool_results_cut whole_texts_withdrawn withheld_memory""".split()


def silent():
    """Attachment kinds whose renderer returns nothing, each with a text payload that
    would show if it were sent."""
    t = Transcript("0a1b2c3d-0000-4000-8000-000000000004", CWD, tag="sile")
    p = t.user(None, "silent kinds")
    for k in SILENT_KINDS:
        p = t.attachment(p, {"type": k, "content": "payload of " + k, "text": "text of " + k})
    p = t.assistant(p, "msg_1", [{"type": "text", "text": "ok"}])
    return t


SERVER_BLOCKS = ["server_tool_use", "web_search_tool_result", "web_fetch_tool_result", "advisor_tool_result",
                 "code_execution_tool_result", "bash_code_execution_tool_result",
                 "text_editor_code_execution_tool_result", "tool_search_tool_result", "mcp_tool_use",
                 "mcp_tool_result", "container_upload", "compaction"]


def blocks():
    """Assistant content blocks of server tools and other non-client kinds, each in a
    record of its own that shares message.id with a text after it."""
    t = Transcript("0a1b2c3d-0000-4000-8000-000000000005", CWD, tag="blok")
    p = t.user(None, "blocks")
    for i, k in enumerate(SERVER_BLOCKS):
        b = {"type": k, "id": "srvtoolu_%02d" % i, "tool_use_id": "srvtoolu_%02d" % i, "name": "web_search",
             "input": {"query": "q"}, "content": []}
        if k == "compaction":
            b = {"type": "compaction", "content": "summary of earlier turns"}
        p = t.assistant(p, "msg_b%02d" % i, [b])
        p = t.assistant(p, "msg_b%02d" % i, [{"type": "text", "text": "after " + k}])
        p = t.user(p, "next " + k)
    p = t.assistant(p, "msg_end", [{"type": "text", "text": "ok"}])
    return t


def order():
    """Records of one reply written out of chain order: an attachment chained between the
    two tool_use records of one message, the first tool result off the chain but written
    before the second call; and a reply cut after its thinking (orphaned thinking-only)."""
    t = Transcript("0a1b2c3d-0000-4000-8000-000000000006", CWD, tag="ordr")
    p = t.user(None, "two tools")
    a1 = t.assistant(p, "msg_p", [{"type": "tool_use", "id": "toolu_a", "name": "Bash", "input": {"command": "echo a"}}])
    at = t.attachment(a1, {"type": "date_change", "newDate": "2026-06-02"})
    t.user(at, [{"tool_use_id": "toolu_a", "type": "tool_result", "content": "a", "is_error": False}])
    a2 = t.assistant(at, "msg_p", [{"type": "tool_use", "id": "toolu_b", "name": "Bash", "input": {"command": "echo b"}}])
    p = t.user(a2, [{"tool_use_id": "toolu_b", "type": "tool_result", "content": "b", "is_error": False}])
    p = t.assistant(p, "msg_q", [{"type": "text", "text": "both done"}])
    p = t.user(p, "think about it")
    p = t.assistant(p, "msg_th", [{"type": "thinking", "thinking": "hmm", "signature": "sig-hmm"}])
    p = t.user(p, "and now?")
    p = t.assistant(p, "msg_th2", [{"type": "thinking", "thinking": "again", "signature": "sig-again"}])
    return t


P = CWD + "/"

#: Attachment kinds the corpus lacks (the "open" rows of the kinds table), one payload each
#: in the shape the CLI's renderer reads; a kind may appear more than once to show a branch.
OPEN_KINDS = [
    {"type": "nested_memory", "path": P + "sub/CLAUDE.md",
     "content": {"path": P + "sub/CLAUDE.md", "type": "Project", "content": "# Sub rules\nuse tabs"}},
    {"type": "relevant_memories", "memories": [
        {"path": "/home/dev/.claude/memory/a.md", "content": "memory A", "mtimeMs": 1780300800000,
         "header": "Memory: a.md (saved earlier):"},
        {"path": "/home/dev/.claude/memory/b.md", "content": "memory B", "mtimeMs": 1780300800000,
         "header": "Memory: b.md:"}]},
    {"type": "directory", "path": P + "src", "content": "a.txt\nb.txt"},
    {"type": "edited_text_file", "filename": P + "a.txt", "snippet": "     1\tfoo\n     2\tbar"},
    {"type": "edited_text_file", "filename": P + "b.txt", "snippet": ""},
    {"type": "selected_lines_in_ide", "ideName": "VS Code", "lineStart": 3, "lineEnd": 4,
     "filename": P + "a.py", "content": "x = 1\ny = 2"},
    {"type": "mcp_resource", "server": "docs", "uri": "file:///r.txt", "name": "r",
     "content": {"contents": [{"uri": "file:///r.txt", "mimeType": "text/plain", "text": "resource text"}]}},
    {"type": "mcp_resource", "server": "docs", "uri": "file:///empty", "name": "e", "content": {"contents": []}},
    {"type": "invoked_skills", "skills": [{"name": "pdf", "path": "/home/dev/.claude/skills/pdf/SKILL.md",
                                           "content": "Skill body"}]},
    {"type": "task_status", "taskId": "b1", "taskType": "local_bash", "status": "completed",
     "description": "run tests", "outputFilePath": "/home/dev/.claude/tasks/b1.out"},
    {"type": "task_status", "taskId": "b2", "taskType": "local_bash", "status": "running",
     "description": "serve", "shell": {"command": "npm run dev"}},
    {"type": "task_status", "taskId": "a3", "taskType": "local_agent", "status": "killed", "description": "explore"},
    {"type": "output_token_usage", "turn": 1234, "session": 56789, "budget": None},
    {"type": "output_token_usage", "turn": 999, "session": 1500000, "budget": 20000},
    {"type": "date", "date": "2026-06-01"},
    {"type": "date", "date": "2026-06-02", "changed": True},
    {"type": "plan_mode", "reminderType": "full", "isSubAgent": False,
     "planFilePath": "/home/dev/.claude/plans/p.md", "planExists": False},
    {"type": "plan_mode", "reminderType": "sparse", "isSubAgent": False,
     "planFilePath": "/home/dev/.claude/plans/p.md", "planExists": True},
    {"type": "plan_mode_reentry", "planFilePath": "/home/dev/.claude/plans/p.md"},
    {"type": "todo_reminder", "content": [{"content": "do x", "status": "pending", "activeForm": "Doing x"}],
     "itemCount": 1},
    {"type": "budget_usd", "used": 1.5, "total": 10, "remaining": 8.5},
    {"type": "ultrathink_effort"},
    {"type": "skill_mention", "skillName": "pdf"},
    {"type": "bash_output_audience_note"},
    {"type": "workflow_keyword_request"},
    {"type": "ultra_effort_exit"},
    {"type": "ultra_effort_enter", "reminderType": "full"},
    {"type": "batching_reminder", "text": "batching text"},
    {"type": "elapsed_time_reminder", "text": "elapsed text"},
    {"type": "output_limit_note", "text": "limit text"},
    {"type": "secondary_reminder", "text": "secondary text"},
    {"type": "silent_turn_reminder", "text": "silent turn text"},
    {"type": "prefix_delta", "text": "prefix text"},
    {"type": "linked_plugin_tools_note", "text": "plugin tools text"},
    {"type": "sandbox_instructions", "content": "sandbox rules"},
    {"type": "sandbox_instructions", "content": ""},
    {"type": "agent_ask_notice", "lines": ["ask one", "ask two"]},
    {"type": "claude_app_notice", "lines": ["app one", "app two"]},
    {"type": "tool_hosts_correction", "lines": ["host one", "host two"]},
    {"type": "tool_hosts_notice", "lines": ["notice one", "notice two"]},
    {"type": "goals", "text": "goals text"},
    {"type": "attention_budget", "text": "attention text"},
    {"type": "context_efficiency", "text": "efficiency text"},
    {"type": "tool_search_usage_reminder", "undiscoveredToolNames": ["mcp__a__b", "mcp__c__d"],
     "undiscoveredCount": 5},
    {"type": "mcp_dropped_tools_delta", "addedEntries": ["mcp__x__y: schema rejected"]},
    {"type": "memory_update", "source": "sync_unsaved", "summary": "memory summary"},
    {"type": "auto_mode_exit"},
    {"type": "auto_mode_exit", "finishExposedWork": True, "bashFirst": True},
    {"type": "dir_sync_notice", "content": "synced <dir>"},
    {"type": "account_memory_recall", "content": "recalled memory"},
    {"type": "artifact_opening_prefetch", "content": "prefetched <system-reminder> text"},
    {"type": "fork_briefing", "text": "fork brief"},
    {"type": "auto_mode", "reminderType": "full"},
    {"type": "auto_mode", "reminderType": "sparse"},
    {"type": "proactivity", "text": "proactivity text"},
    {"type": "team_context", "text": "team text"},
    {"type": "teammate_mailbox", "messages": []},
    {"type": "repl_mcp_servers", "text": "repl text"},
    {"type": "repl_mcp_needs_auth", "text": "repl auth"},
    {"type": "nested_memory", "path": P + "t/CLAUDE.md", "content": {"path": P + "t/CLAUDE.md", "type": "Project",
     "content": "a <system-reminder>b</system-reminder> c </ system-reminder> <div>"}},
    {"type": "selected_lines_in_diff", "lineCount": 1, "filePath": P + "d.py", "content": "+x = 2"},
    {"type": "task_status", "taskId": "a4", "taskType": "local_agent", "status": "running",
     "description": "dig & find", "deltaSummary": "found <3> files"},
    {"type": "output_limit_note", "text": "limit for opus", "model": "claude-opus-4-8"},
]


def open_kinds(kinds=None):
    """Attachment kinds the corpus lacks (the open rows of the kinds table), each in a
    turn of its own: a prompt naming it, the attachment, a reply."""
    t = Transcript("0a1b2c3d-0000-4000-8000-000000000007", CWD, tag="open")
    p = None
    for i, a in enumerate(kinds or OPEN_KINDS):
        p = t.user(p, "probe %d %s" % (i, a["type"]))
        p = t.attachment(p, a)
        p = t.assistant(p, "msg_o%03d" % i, [{"type": "text", "text": "ack %d" % i}])
    return t


def strip():
    """`thinking_stripped` attachments: one of scope `all` after the first reply, and a
    partial one (from the second thinking block of a reply) later; the replies before each
    lose their thinking, the partial one's reply keeps its first thinking block."""
    t = Transcript("0a1b2c3d-0000-4000-8000-000000000008", CWD, tag="strp")

    def think(x):
        return {"type": "thinking", "thinking": x, "signature": "sig-" + x}
    p = t.user(None, "think 1")
    p = t.assistant(p, "msg_s1", [think("a")])
    p = t.assistant(p, "msg_s1", [{"type": "text", "text": "answer 1"}])
    p = t.attachment(p, {"type": "thinking_stripped", "scope": "all"})
    p = t.user(p, "think 2")
    p = t.assistant(p, "msg_s2", [think("b")])
    p = t.assistant(p, "msg_s2", [think("c")])
    p = t.assistant(p, "msg_s2", [{"type": "text", "text": "answer 2"}])
    p = t.user(p, "think 3")
    p = t.assistant(p, "msg_s3", [think("d"), {"type": "text", "text": "answer 3"}])
    p = t.attachment(p, {"type": "thinking_stripped", "scope": "partial",
                         "from": {"messageId": "msg_s2", "thinkingIndex": 1}})
    p = t.user(p, "think 4")
    p = t.assistant(p, "msg_s4", [think("e")])
    p = t.assistant(p, "msg_s4", [{"type": "tool_use", "id": "toolu_s4", "name": "Bash", "input": {"command": "true"}}])
    p = t.user(p, [{"tool_use_id": "toolu_s4", "type": "tool_result", "content": "ok"}])
    p = t.assistant(p, "msg_s5", [think("f"), {"type": "text", "text": "answer 4"}])
    return t


def split():
    """Attachments chained between two records of one reply (a thinking or text record,
    then the tool_use or text of the same message.id): the reply stays one message and
    the reminder follows it."""
    t = Transcript("0a1b2c3d-0000-4000-8000-000000000009", CWD, tag="splt")
    p = t.user(None, "first")
    p = t.assistant(p, "msg_x1", [{"type": "thinking", "thinking": "a", "signature": "sig-a"}])
    p = t.attachment(p, {"type": "date_change", "newDate": "2026-06-02"})
    p = t.assistant(p, "msg_x1", [{"type": "tool_use", "id": "toolu_x1", "name": "Bash", "input": {"command": "a"}}])
    p = t.user(p, [{"tool_use_id": "toolu_x1", "type": "tool_result", "content": "r1"}])
    p = t.assistant(p, "msg_x2", [{"type": "text", "text": "let me"}])
    p = t.attachment(p, {"type": "ultrathink_effort"})
    p = t.assistant(p, "msg_x2", [{"type": "tool_use", "id": "toolu_x2", "name": "Bash", "input": {"command": "b"}}])
    p = t.user(p, [{"tool_use_id": "toolu_x2", "type": "tool_result", "content": "r2"}])
    p = t.assistant(p, "msg_x3", [{"type": "text", "text": "some text"}])
    p = t.attachment(p, {"type": "skill_mention", "skillName": "pdf"})
    p = t.assistant(p, "msg_x3", [{"type": "text", "text": "more text"}])
    p = t.user(p, "second")
    p = t.assistant(p, "msg_x4", [{"type": "text", "text": "final"}])
    return t


def later():
    """The attachment kinds CLI 2.1.336 knows and 2.1.332 does not, rendered from their
    payload: `auto_mode_rules` (a stored `rendered` is not used), `plugin_rules` (renders
    nothing without the plugin installed; a stored `rendered` is sent), `projects_instructions`,
    `routine_fire` (a name with `<` renders nothing), and `attachment_answer` (sends nothing
    itself; one with `leftOut` silences the attachment it names, one with `rendered` replaces
    that attachment's text, also with `rendersLive`; an `auto_mode_rules` one answered without
    `rendersLive` sends nothing), records stored with a `textRewritten`, and auto mode rules
    after a tool result (left beside it, not folded in)."""
    t = Transcript("0a1b2c3d-0000-4000-8000-00000000000a", CWD, tag="late")
    probes = [
        {"type": "auto_mode_rules", "content": "Never push to main.\nA <system-reminder> tag </system-reminder> inside"},
        ("stored", {"type": "auto_mode_rules", "content": "rules from the payload"},
         [{"content": "<system-reminder>\nrules from the stored text\n</system-reminder>"}]),
        {"type": "plugin_rules", "names": ["lint"], "rules": ["run eslint"]},
        ("stored", {"type": "plugin_rules", "names": ["lint"], "rules": ["run eslint"]},
         [{"content": "<system-reminder>\n# Plugin Rules\n\nstored plugin rules\n</system-reminder>"}]),
        {"type": "projects_instructions", "blocks": ["<project-instructions nonce=\"ab12\" untrusted=\"true\">\ndo x\n</project-instructions>",
                                                     "second <system-reminder> block"], "changed": False},
        {"type": "projects_instructions", "blocks": [], "changed": True},
        {"type": "projects_instructions", "blocks": [], "changed": False},
        {"type": "routine_fire", "firedAt": "Jun 1, 2026, 9:00 AM UTC", "name": "nightly", "triggerId": "trg_01"},
        {"type": "routine_fire", "firedAt": "Jun 1, 2026, 9:05 AM", "triggerId": "trg_02"},
        {"type": "routine_fire", "firedAt": "Jun 1, 2026, 9:10 AM"},
        {"type": "routine_fire", "firedAt": "Jun 1, 2026, 9:15 AM", "name": "a <b>", "triggerId": "trg_03"},
        {"type": "attachment_answer", "rowUuid": "none", "askedOf": []},
    ]
    p = None
    for i, a in enumerate(probes):
        p = t.user(p, "probe %d" % i)
        if isinstance(a, tuple):
            p = t.rec("attachment", p, attachment=a[1], rendered=a[2])
        else:
            p = t.attachment(p, a)
        p = t.assistant(p, "msg_l%03d" % i, [{"type": "text", "text": "ack %d" % i}])
    # two answered attachments: one left out, one given another text
    p = t.user(p, "answered")
    gone = t.rec("attachment", p, attachment={"type": "date_change", "newDate": "2026-06-03"},
                 rendered=[{"content": "<system-reminder>\nThe date has changed to 2026-06-03.\n</system-reminder>"}])
    kept = t.rec("attachment", gone, attachment={"type": "date_change", "newDate": "2026-06-04"},
                 rendered=[{"content": "<system-reminder>\nThe date has changed to 2026-06-04.\n</system-reminder>"}])
    p = t.assistant(kept, "msg_l100", [{"type": "text", "text": "ack answered"}])
    p = t.user(p, "answers")
    p = t.attachment(p, {"type": "attachment_answer", "rowUuid": gone, "leftOut": True, "askedOf": []})
    p = t.attachment(p, {"type": "attachment_answer", "rowUuid": kept, "askedOf": [],
                         "rendered": [{"content": "<system-reminder>\nanswered text\n</system-reminder>"}]})
    p = t.assistant(p, "msg_l101", [{"type": "text", "text": "ack answers"}])
    # answers of other shapes: rendersLive, to auto_mode_rules with and without it, leftOut
    # with keepsText
    def date(d, **kw):
        return {"attachment": {"type": "date_change", "newDate": d},
                "rendered": [{"content": "<system-reminder>\nThe date has changed to %s.\n</system-reminder>" % d}], **kw}
    p = t.user(p, "more answered")
    live = t.rec("attachment", p, **date("2026-06-05"))
    rules = t.rec("attachment", live, attachment={"type": "auto_mode_rules", "content": "rules answered"})
    rules_live = t.rec("attachment", rules, attachment={"type": "auto_mode_rules", "content": "rules answered live"})
    kept = t.rec("attachment", rules_live, **date("2026-06-06"))
    p = t.assistant(kept, "msg_l102", [{"type": "text", "text": "ack more answered"}])
    p = t.user(p, "more answers")
    for row, extra in [(live, {"rendersLive": True, "rendered": [{"content": "<system-reminder>\nlive answer\n</system-reminder>"}]}),
                       (rules, {"rendered": [{"content": "<system-reminder>\nrules answer\n</system-reminder>"}]}),
                       (rules_live, {"rendersLive": True, "rendered": [{"content": "<system-reminder>\nrules live answer\n</system-reminder>"}]}),
                       (kept, {"leftOut": True, "keepsText": True})]:
        p = t.attachment(p, {"type": "attachment_answer", "rowUuid": row, "askedOf": [], **extra})
    p = t.assistant(p, "msg_l103", [{"type": "text", "text": "ack more answers"}])
    # texts rewritten by the CLI that wrote the file (no answer on the chain)
    p = t.user(p, "stored rewrites")
    p = t.rec("attachment", p, **date("2026-06-07", textRewritten={"by": "prompt.attachment", "rendered": [
        {"content": "<system-reminder>\nstored rewrite\n</system-reminder>"}]}))
    p = t.rec("attachment", p, **date("2026-06-08", textRewritten={"by": "prompt.attachment", "leftOut": True}))
    p = t.rec("attachment", p, attachment={"type": "date_change", "newDate": "2026-06-09"},
              textRewritten={"by": "prompt.attachment"})
    p = t.rec("attachment", p, attachment={"type": "batching_reminder", "text": "batch note"},
              rendered=[{"content": "<system-reminder>\nstored batch note\n</system-reminder>"}],
              textRewritten={"by": "prompt.attachment", "leftOut": True})
    p = t.assistant(p, "msg_l104", [{"type": "text", "text": "ack stored rewrites"}])
    # the auto mode rules after a tool result stay beside it; the reminder after them is
    # folded into it
    p = t.user(p, "tool probe")
    p = t.assistant(p, "msg_l105", [{"type": "tool_use", "id": "toolu_l1", "name": "Bash", "input": {"command": "true"}}])
    p = t.user(p, [{"tool_use_id": "toolu_l1", "type": "tool_result", "content": "done"}])
    p = t.attachment(p, {"type": "auto_mode_rules", "content": "rules beside a result"})
    p = t.rec("attachment", p, **date("2026-06-10"))
    p = t.assistant(p, "msg_l106", [{"type": "text", "text": "ack tool probe"}])
    return t


def beside():
    """Auto mode rules with a stored text after a tool result, a reminder after them: 2.1.336
    renders them from the payload and leaves them beside the result, 2.1.332 folds the
    stored text into it (`resume --cli-version`)."""
    t = Transcript("0a1b2c3d-0000-4000-8000-00000000000b", CWD, tag="bsid")
    p = t.user(None, "tool probe")
    p = t.assistant(p, "msg_b1", [{"type": "tool_use", "id": "toolu_b1", "name": "Bash", "input": {"command": "true"}}])
    p = t.user(p, [{"tool_use_id": "toolu_b1", "type": "tool_result", "content": "done"}])
    p = t.rec("attachment", p, attachment={"type": "auto_mode_rules", "content": "payload rules"},
              rendered=[{"content": "<system-reminder>\n## Auto mode rules\nstored rules\n</system-reminder>"}],
              renderedRole="user")
    p = t.rec("attachment", p, attachment={"type": "date_change", "newDate": "2026-06-10"},
              rendered=[{"content": "<system-reminder>\nThe date has changed to 2026-06-10.\n</system-reminder>"}])
    p = t.assistant(p, "msg_b2", [{"type": "text", "text": "ack"}])
    return t


def ends():
    """A text-only reply whose first record is off the chain with a plan reminder chained below
    it (the next record of the reply starts the chain), and a last reply holding nothing but a
    `fallback` block: the CLI recovers the record and not the reminder, and sends the last
    reply as `(no content)`."""
    t = Transcript("0a1b2c3d-0000-4000-8000-00000000000c", CWD, tag="ends")
    p = t.user(None, "first")
    a1 = t.assistant(p, "msg_e1", [{"type": "text", "text": "part one"}])
    t.attachment(a1, {"type": "plan_file_reference", "planFilePath": "/home/dev/.claude/plans/p.md",
                      "planContent": "1. do a\n2. do b"})
    p = t.assistant(None, "msg_e1", [{"type": "text", "text": "part two"}])
    p = t.user(p, "second")
    p = t.assistant(p, "msg_e2", [{"type": "fallback", "from": {"model": "claude-opus-4-8"},
                                  "to": {"model": "claude-sonnet-4-5"}}])
    return t


SCENARIOS = {"issue25_order": order, "issue25_silent": silent, "issue25_blocks": blocks, "issue25_misses": misses, "issue25_files": files, "issue25_hooks": hooks, "issue25_open": open_kinds, "issue25_strip": strip, "issue25_split": split,
             "issue25_later": later, "issue25_later_332": later,
             "issue25_beside": beside, "issue25_beside_332": beside, "issue25_ends": ends}
#: Scenarios made with another CLI than 2.1.332 (`CLAUDE_BIN`, `CLAUDE_VERSION`): the kinds
#: only that CLI knows. `issue25_later_332` and `issue25_beside_332` are the same files
#: resumed by 2.1.332, which knows none of them (sessiondb gives them with
#: `--cli-version 2.1.332`).
CLI_OF = {"issue25_later": "2.1.336", "issue25_beside": "2.1.336"}
#: What a case's notes say besides the scenario's first line.
NOTES = {"issue25_later_332": " (the file of issue25_later, resumed by CLI 2.1.332)",
         "issue25_beside_332": " (resumed by CLI 2.1.332)"}


def record(name, t, model, out, scratch, check):
    src = os.path.join(scratch, name, "projects")
    shutil.rmtree(os.path.join(scratch, name), ignore_errors=True)
    t.write(src)
    req, res = cli.run(src, t.sid, t.pdir, model, os.path.join(scratch, name, "run-" + model))
    case = os.path.join(out, "%s__%s" % (name, model))
    if req is None:
        print(name, model, "NO REQUEST", res["stderr"][-300:])
        return False
    view = cli.strip_new_turn(req)
    if check:
        old = json.load(open(os.path.join(case, "expected-api-view.json")))
        same = old == view
        print("%-40s %s" % (os.path.basename(case), "same" if same else "CHANGED"))
        if not same:
            for i, (a, b) in enumerate(zip(old, view)):
                if a != b:
                    print("   message %d\n   was %s\n   now %s" % (i, json.dumps(a)[:400], json.dumps(b)[:400]))
                    break
        return same
    shutil.rmtree(case, ignore_errors=True)
    shutil.copytree(src, os.path.join(case, "projects"))
    cj = {"cli_version": cli.VERSION, "mode": "resume", "target_session_id": t.sid, "new_session_id": None,
          "project_dir_name": t.pdir, "cwd": t.cwd, "model": model, "new_prompt": cli.PROMPT,
          "cli_args": res["args"], "interactive": False, "env": {},
          "notes": "made by tools/difftest/made.py (issue 25): " + SCENARIOS[name].__doc__.split("\n")[0]
          + NOTES.get(name, "")}
    json.dump(cj, open(os.path.join(case, "case.json"), "w"), indent=1, ensure_ascii=False)
    json.dump(req, open(os.path.join(case, "expected-request-messages.json"), "w"), indent=1, ensure_ascii=False)
    json.dump(view, open(os.path.join(case, "expected-api-view.json"), "w"), indent=1, ensure_ascii=False)
    print("wrote", case)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "oracle-made"))
    ap.add_argument("--scratch", default=os.environ.get("DIFFTEST_SCRATCH", "/tmp/difftest-made"))
    ap.add_argument("--only")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    ok = True
    for name, make in SCENARIOS.items():
        if args.only and args.only not in name:
            continue
        if CLI_OF.get(name, "2.1.332") != cli.VERSION:
            continue
        for model in MODELS:
            ok &= record(name, make(), model, args.out, args.scratch, args.check)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
