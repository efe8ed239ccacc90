//! B3: attachments written without `rendered` (CLI ≤ 2.1.237) are rendered again from
//! their payload, as CLI 2.1.332 does on resume (`real/` oracle pack, README B3).
//!
//! [`render`] looks the attachment type up in [`RENDERERS`] and returns the reminder
//! texts *without* the `<system-reminder>` wrapper; [`wrap`] adds it for the folded form
//! (R9/R10), and the `system` message form (B10) sends the bare text. Types the table does
//! not know are not sent, like types the CLI renders as nothing. Pure functions over the
//! attachment payload (`record.attachment`); the only outside input is the
//! [`ModelProfile`] (the task tools depend on the model).
//!
//! The literal strings below are the texts CLI 2.1.332 sends (wire format).

use serde_json::Value;

use super::cli_version::CliVersion;
use super::model::ModelProfile;
use super::reminder_escape::hook_text;
use super::render_extra;
use super::{render_later, render_open, render_plan};

/// Opening line of a reminder block.
pub const REMINDER_OPEN: &str = "<system-reminder>";
/// Closing line of a reminder block.
pub const REMINDER_CLOSE: &str = "</system-reminder>";

/// `text` as the CLI wraps a reminder: `<system-reminder>\n{text}\n</system-reminder>`.
pub fn wrap(text: &str) -> String {
    format!("{REMINDER_OPEN}\n{text}\n{REMINDER_CLOSE}")
}

/// The inverse of [`wrap`] as the CLI applies it before building a `system` message:
/// strips the opening tag (and one `\n`) and the closing tag (and one `\n` before it).
/// Text that is not wrapped is returned unchanged.
pub fn unwrap(text: &str) -> &str {
    let Some(inner) = text
        .strip_prefix(REMINDER_OPEN)
        .and_then(|t| t.strip_suffix(REMINDER_CLOSE))
    else {
        return text;
    };
    let inner = inner.strip_prefix('\n').unwrap_or(inner);
    inner.strip_suffix('\n').unwrap_or(inner)
}

/// How an attachment type renders.
type Renderer = fn(&Value, &ModelProfile) -> Vec<String>;

/// One row of the attachment table.
pub struct Entry {
    /// `attachment.type`.
    pub kind: &'static str,
    /// Payload → reminder texts (unwrapped); empty = the CLI sends nothing for it.
    pub render: Renderer,
}

/// Attachment types the CLI keeps in the user turn even for models that get `system`
/// messages (B10), for records whose stored `rendered` has no `renderedRole` and for
/// re-rendered ones (`projects_instructions` and `routine_fire`: CLI 2.1.336).
pub const USER_TURN_TYPES: &[&str] = &[
    "dir_sync_notice",
    "goals",
    "unknown_command_fallback",
    "widget_context_hint",
    "session_context",
    "instructions",
    "coordinator_context",
    "context_sections",
    "remote_session_change",
    "fork_briefing",
    "poll_events",
    "cowork_memory_context",
    "account_memory_recall",
    "artifact_opening_prefetch",
    "projects_instructions",
    "routine_fire",
];

/// True for a type of [`USER_TURN_TYPES`].
pub fn stays_user(kind: &str) -> bool {
    USER_TURN_TYPES.contains(&kind)
}

/// Types whose re-rendered texts are the blocks of one message rather than one message
/// each (the CLI builds a single message with a text block per part).
pub fn one_message(kind: &str) -> bool {
    kind == "mcp_resource"
}

/// The attachment table: type → rendering. Every entry's renderer documents the
/// behaviour and the oracle case that shows it.
pub const RENDERERS: &[Entry] = &[
    entry("hook_success", hook_success),
    entry("hook_additional_context", hook_additional_context),
    entry("hook_system_message", nothing),
    entry("command_permissions", nothing),
    entry("goal_status", nothing),
    entry("todo_reminder", nothing),
    entry("task_reminder", task_reminder),
    entry("skill_listing", skill_listing),
    entry("deferred_tools_delta", deferred_tools_delta),
    entry("agent_listing_delta", agent_listing_delta),
    entry("mcp_instructions_delta", mcp_instructions_delta),
    entry("total_tokens_reminder", text_field),
    entry("date_change", date_change),
    entry("queued_command", queued_command),
    entry("token_usage", token_usage),
    entry("output_style", output_style),
    entry("critical_system_reminder", critical_system_reminder),
    entry("agent_mention", agent_mention),
    entry("opened_file_in_ide", opened_file_in_ide),
    entry("plan_mode_exit", plan_mode_exit),
    entry("diagnostics", diagnostics),
    entry("read_truncation_notice", read_truncation_notice),
    entry("compact_file_reference", compact_file_reference),
    entry("plan_file_reference", plan_file_reference),
    entry("hook_blocking_error", hook_blocking_error),
    entry("hook_stopped_continuation", hook_stopped_continuation),
    entry("already_read_file", nothing),
    entry("edited_image_file", nothing),
    entry("hook_cancelled", nothing),
    entry("hook_error_during_execution", nothing),
    entry("hook_non_blocking_error", nothing),
    entry("hook_permission_decision", nothing),
    entry("structured_output", nothing),
    entry("max_turns_reached", nothing),
    entry("file", render_extra::file),
    entry("async_hook_response", render_extra::async_hook_response),
    entry("goals", render_open::nothing),
    entry("attention_budget", render_open::nothing),
    entry("context_efficiency", render_open::nothing),
    entry("team_context", render_open::off_by_default),
    entry("teammate_mailbox", render_open::off_by_default),
    entry("repl_mcp_servers", render_open::off_by_default),
    entry("repl_mcp_needs_auth", render_open::off_by_default),
    entry("elapsed_time_reminder", render_open::text),
    entry("silent_turn_reminder", render_open::text),
    entry("batching_reminder", render_open::system_only_text),
    entry("secondary_reminder", render_open::system_only_text),
    entry("output_limit_note", render_open::output_limit_note),
    entry("prefix_delta", render_open::string_text),
    entry("linked_plugin_tools_note", render_open::string_text),
    entry("fork_briefing", render_open::fork_briefing),
    entry(
        "artifact_opening_prefetch",
        render_open::artifact_opening_prefetch,
    ),
    entry("dir_sync_notice", render_open::dir_sync_notice),
    entry("account_memory_recall", render_open::account_memory_recall),
    entry("sandbox_instructions", render_open::sandbox_instructions),
    entry("agent_ask_notice", render_open::lines),
    entry("claude_app_notice", render_open::lines),
    entry("tool_hosts_correction", render_open::lines),
    entry("tool_hosts_notice", render_open::tool_hosts_notice),
    entry("nested_memory", render_open::nested_memory),
    entry("relevant_memories", render_open::relevant_memories),
    entry("directory", render_open::directory),
    entry("edited_text_file", render_open::edited_text_file),
    entry("selected_lines_in_ide", render_open::selected_lines_in_ide),
    entry(
        "selected_lines_in_diff",
        render_open::selected_lines_in_diff,
    ),
    entry("mcp_resource", render_open::mcp_resource),
    entry("invoked_skills", render_open::invoked_skills),
    entry("task_status", render_open::task_status),
    entry("output_token_usage", render_open::output_token_usage),
    entry("budget_usd", render_open::budget_usd),
    entry("date", render_open::date),
    entry("skill_mention", render_open::skill_mention),
    entry(
        "tool_search_usage_reminder",
        render_open::tool_search_usage_reminder,
    ),
    entry(
        "mcp_dropped_tools_delta",
        render_open::mcp_dropped_tools_delta,
    ),
    entry("memory_update", render_open::memory_update),
    entry("plan_mode", render_plan::plan_mode),
    entry("plan_mode_reentry", render_plan::plan_mode_reentry),
    entry("auto_mode", render_plan::auto_mode),
    entry("auto_mode_exit", render_plan::auto_mode_exit),
    entry("ultrathink_effort", render_plan::ultrathink_effort),
    entry(
        "workflow_keyword_request",
        render_plan::workflow_keyword_request,
    ),
    entry("ultra_effort_enter", render_plan::ultra_effort_enter),
    entry("ultra_effort_exit", render_plan::ultra_effort_exit),
    entry(
        "bash_output_audience_note",
        render_plan::bash_output_audience_note,
    ),
    entry("auto_mode_rules", render_later::auto_mode_rules),
    entry("plugin_rules", render_later::plugin_rules),
    entry("projects_instructions", render_later::projects_instructions),
    entry("routine_fire", render_later::routine_fire),
    entry("attachment_answer", render_later::attachment_answer),
];

const fn entry(kind: &'static str, render: Renderer) -> Entry {
    Entry { kind, render }
}

/// The table row of an attachment type.
pub fn lookup(kind: &str) -> Option<&'static Entry> {
    RENDERERS.iter().find(|e| e.kind == kind)
}

/// The reminder texts (unwrapped) the CLI of version `cli` renders from an attachment
/// payload, or `None` when the type is not in the table or that CLI does not know it
/// ([`render_later::known`]); then nothing is sent.
pub fn render(attachment: &Value, profile: &ModelProfile, cli: CliVersion) -> Option<Vec<String>> {
    let kind = attachment.get("type").and_then(Value::as_str)?;
    let e = lookup(kind).filter(|_| render_later::known(kind, cli))?;
    Some(
        (e.render)(attachment, profile)
            .into_iter()
            .filter(|t| !t.is_empty())
            .collect(),
    )
}

fn str_of<'a>(a: &'a Value, key: &str) -> Option<&'a str> {
    a.get(key).and_then(Value::as_str)
}

/// The strings of an array field (non-strings skipped; a missing field is empty).
fn strings<'a>(a: &'a Value, key: &str) -> Vec<&'a str> {
    a.get(key)
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Types the CLI knows but sends nothing for on resume: `hook_system_message` (shown
/// in the terminal only), `command_permissions`, `goal_status`, and `todo_reminder`
/// (the TodoWrite tool is replaced by the task tools). `hook_system_message` and
/// `command_permissions` occur in `entiregraph__95189a6708c5_1_full__own` and are absent
/// from its view.
fn nothing(_: &Value, _: &ModelProfile) -> Vec<String> {
    Vec::new()
}

/// Hook events whose `hook_success` output reaches the model.
const HOOK_SUCCESS_EVENTS: &[&str] = &["SessionStart", "UserPromptSubmit", "UserPromptExpansion"];

/// `hook_success` of a SessionStart / UserPromptSubmit hook with non-empty `content`:
/// `"{hookName} hook success: {content}"`. Other events and empty content send nothing
/// (`extagents__2444cdc4a359_0_full__own`: empty content; `entiregraph__030f3d39319d_1_full__other`
/// message 0: two `SessionStart:startup hook success: …`).
fn hook_success(a: &Value, _: &ModelProfile) -> Vec<String> {
    let content = str_of(a, "content").unwrap_or("");
    let event = str_of(a, "hookEvent").unwrap_or("");
    if content.is_empty() || !HOOK_SUCCESS_EVENTS.contains(&event) {
        return Vec::new();
    }
    let name = str_of(a, "hookName").unwrap_or("");
    vec![hook_text(&format!("{name} hook success: {content}"))]
}

/// `hook_additional_context`: `"{hookName} hook additional context: {lines joined by \n}"`
/// (`entiregraph__030f3d39319d_1_full__other`, `extagents__2444cdc4a359_0_full__own`).
fn hook_additional_context(a: &Value, _: &ModelProfile) -> Vec<String> {
    let lines = strings(a, "content");
    if lines.is_empty() {
        return Vec::new();
    }
    let name = str_of(a, "hookName").unwrap_or("");
    vec![hook_text(&format!(
        "{name} hook additional context: {}",
        lines.join("\n")
    ))]
}

/// `task_reminder`: the "task tools haven't been used recently" nudge plus the open
/// tasks, only when the target model is offered the task tools
/// ([`ModelProfile::task_tools`]): rendered in `ccbackup__3e89eb15-32e7-43f8-8734-8d47310263ea__other`
/// (sonnet-4-5), not in `__own` (opus-4-8).
fn task_reminder(a: &Value, p: &ModelProfile) -> Vec<String> {
    if !p.task_tools {
        return Vec::new();
    }
    let mut text = String::from(
        "The task tools haven't been used recently. If you're working on tasks that would benefit from tracking progress, consider using TaskCreate to add new tasks and TaskUpdate to update task status (set to in_progress when starting, completed when done). Also consider cleaning up the task list if it has become stale. Only use these if relevant to the current work. This is just a gentle reminder - ignore if not applicable.\n",
    );
    let items: Vec<String> = a
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .map(|t| {
            let field = |k: &str| match t.get(k) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => "undefined".to_owned(),
                Some(v) => v.to_string(),
            };
            format!(
                "#{}. [{}] {}",
                field("id"),
                field("status"),
                field("subject")
            )
        })
        .collect();
    if !items.is_empty() {
        text.push_str("\n\nHere are the existing tasks:\n\n");
        text.push_str(&items.join("\n"));
    }
    vec![text]
}

/// `skill_listing`: `"The following skills are available for use with the Skill
/// tool:\n\n{content}"` (`entiregraph__030f3d39319d_1_full__other`, `soph__…__other`).
fn skill_listing(a: &Value, _: &ModelProfile) -> Vec<String> {
    let content = str_of(a, "content").unwrap_or("");
    if content.is_empty() {
        return Vec::new();
    }
    let (also, adds) = if a.get("addsToEarlier") == Some(&Value::Bool(true)) {
        ("also ", ". This list adds to the skills listed earlier in this conversation and is not the full list")
    } else {
        ("", "")
    };
    let body = if a.get("shortened") == Some(&Value::Bool(true)) {
        format!("{content}\n\nThis list is shortened to save room: a description that ends in \u{2026} is cut there. The skills themselves are not cut. When a request fits a skill's name or the shown part of its description, use the skill.")
    } else {
        content.to_owned()
    };
    vec![format!(
        "The following skills are {also}available for use with the Skill tool{adds}:\n\n{body}"
    )]
}

/// Closing note of listings that announce removals.
const AMBIENT_NOTE: &str = "This is ambient context \u{2014} do not narrate it to the user unless they ask or it is directly relevant to their request.";

/// `deferred_tools_delta`: the tools reachable through ToolSearch (`addedLines`), tools
/// available again (`readdedNames`) and tools gone (`removedNames`)
/// (`entiregraph__030f3d39319d_1_full__other`, `soph__…__own`).
fn deferred_tools_delta(a: &Value, _: &ModelProfile) -> Vec<String> {
    let added_lines = strings(a, "addedLines");
    let added_names = strings(a, "addedNames");
    let removed = strings(a, "removedNames");
    let no_search = a.get("toolSearchAbsent") == Some(&Value::Bool(true));
    let (noun, dont) = if no_search {
        ("tool", "Do not call them".to_owned())
    } else {
        (
            "deferred tool",
            "Do not search for them \u{2014} ToolSearch will return no match".to_owned(),
        )
    };
    let mut parts: Vec<String> = Vec::new();
    let loaded_before = strings(a, "loadedBeforeSummaryNames");
    if !loaded_before.is_empty() {
        parts.push(format!("The following tools were loaded earlier in this conversation, but their schemas are no longer in your context. A call without the schema can have wrong or missing input. Before you call one of them, use ToolSearch with query \"select:<name>[,<name>...]\" to load its schema. Load only the tools that you need. The tools are:\n{}", loaded_before.join("\n")));
    }
    if !added_lines.is_empty() && !added_names.is_empty() {
        let head = if no_search {
            "The following tools are now available:"
        } else if !loaded_before.is_empty() {
            "The following deferred tools are available via ToolSearch. Their schemas are NOT loaded. Use ToolSearch with query \"select:<name>[,<name>...]\" to load tool schemas before calling them:"
        } else {
            "The following deferred tools are now available via ToolSearch. Their schemas are NOT loaded \u{2014} calling them directly will fail with InputValidationError. Use ToolSearch with query \"select:<name>[,<name>...]\" to load tool schemas before calling them:"
        };
        parts.push(format!("{head}\n{}", added_lines.join("\n")));
    }
    let readded = strings(a, "readdedNames");
    let (mcp_again, other_again): (Vec<&str>, Vec<&str>) =
        readded.iter().partition(|n| n.starts_with("mcp__"));
    let load_again = if no_search {
        ""
    } else {
        " Load via ToolSearch as before."
    };
    let is_are = |n: usize| if n == 1 { " is" } else { "s are" };
    if !mcp_again.is_empty() {
        parts.push(format!(
            "{} {noun}{} available again (MCP server reconnected \u{2014} names announced earlier in this conversation): {}.{load_again}",
            mcp_again.len(),
            is_are(mcp_again.len()),
            mcp_again.join(", ")
        ));
    }
    if !other_again.is_empty() {
        parts.push(format!(
            "{} {noun}{} available again in this session (announced earlier in this conversation): {}.{load_again}",
            other_again.len(),
            is_are(other_again.len()),
            other_again.join(", ")
        ));
    }
    let (mcp_gone, other_gone): (Vec<&str>, Vec<&str>) =
        removed.iter().partition(|n| n.starts_with("mcp__"));
    if !mcp_gone.is_empty() {
        parts.push(format!(
            "The following {noun}s are no longer available (their MCP server disconnected). {dont}:\n{}",
            mcp_gone.join("\n")
        ));
    }
    if !other_gone.is_empty() {
        parts.push(format!(
            "The following {noun}s are no longer available in this session. {dont}:\n{}",
            other_gone.join("\n")
        ));
    }
    if !removed.is_empty() {
        parts.push(AMBIENT_NOTE.to_owned());
    }
    if parts.is_empty() {
        return Vec::new();
    }
    vec![parts.join("\n\n")]
}

/// `agent_listing_delta`: the agent types for the Agent tool, the concurrency note on the
/// initial listing, and removed types (`entiregraph__030f3d39319d_1_full__other`).
fn agent_listing_delta(a: &Value, _: &ModelProfile) -> Vec<String> {
    let lines = strings(a, "addedLines");
    let types = strings(a, "addedTypes");
    let removed = strings(a, "removedTypes");
    let initial = a.get("isInitial") == Some(&Value::Bool(true));
    let mut parts: Vec<String> = Vec::new();
    let added = !lines.is_empty() && !types.is_empty();
    if added {
        let head = if initial {
            "Available agent types for the Agent tool:"
        } else {
            "New agent types are now available for the Agent tool:"
        };
        parts.push(format!("{head}\n{}", lines.join("\n")));
    }
    if !removed.is_empty() {
        let list: Vec<String> = removed.iter().map(|t| format!("- {t}")).collect();
        parts.push(format!(
            "The following agent types are no longer available:\n{}",
            list.join("\n")
        ));
        parts.push(AMBIENT_NOTE.to_owned());
    }
    if added && initial && a.get("showConcurrencyNote") == Some(&Value::Bool(true)) {
        parts.push("When you launch multiple agents for independent work, send them in a single message with multiple tool uses so they run concurrently.".to_owned());
    }
    if parts.is_empty() {
        return Vec::new();
    }
    vec![parts.join("\n\n")]
}

/// `mcp_instructions_delta`: the instructions MCP servers provided, and disconnected
/// servers (`soph__01M089WX3QX7B7XFCSZF80QTY9_0_full__other`).
fn mcp_instructions_delta(a: &Value, _: &ModelProfile) -> Vec<String> {
    let blocks = strings(a, "addedBlocks");
    let names = strings(a, "addedNames");
    let removed = strings(a, "removedNames");
    let mut parts: Vec<String> = Vec::new();
    if !blocks.is_empty() && !names.is_empty() {
        let cut = if a.get("shortened") == Some(&Value::Bool(true)) {
            ". To save room, some are cut, and [cut short] marks where a server's text stops"
        } else {
            ""
        };
        parts.push(format!("# MCP Server Instructions\n\nThe following MCP servers have provided instructions for how to use their tools and resources{cut}:\n\n{}", blocks.join("\n\n")));
    }
    if !removed.is_empty() {
        parts.push(format!(
            "The following MCP servers have disconnected. Their instructions above no longer apply:\n{}",
            removed.join("\n")
        ));
        parts.push(AMBIENT_NOTE.to_owned());
    }
    if parts.is_empty() {
        return Vec::new();
    }
    vec![parts.join("\n\n")]
}

/// `total_tokens_reminder`: its stored `text` (`<total_tokens>N tokens left</total_tokens>`
/// with the count of that time) (`soph__01M089WX3QX7B7XFCSZF80QTY9_0_full__own`).
fn text_field(a: &Value, _: &ModelProfile) -> Vec<String> {
    str_of(a, "text").map(str::to_owned).into_iter().collect()
}

/// `date_change`: "The date has changed. …" with the stored `newDate`
/// (`entiregraph__95189a6708c5_1_full__other`).
fn date_change(a: &Value, _: &ModelProfile) -> Vec<String> {
    let date = str_of(a, "newDate").unwrap_or("undefined");
    vec![format!("The date has changed. Today's date is now {date}. No need to announce the new date \u{2014} the user's own clock shows it.")]
}

/// `queued_command` (a prompt the user typed while the model worked): "The user sent a
/// new message while you were working: …" (`soph__01M089WX3QX7B7XFCSZF80QTY9_0_full__other`
/// folded into a tool result, `__own` in a `system` message). Only prompts of the user
/// (no origin or `origin.kind == "human"`, `commandMode` prompt) are rendered; other
/// origins are not in the table's scope and send nothing.
fn queued_command(a: &Value, _: &ModelProfile) -> Vec<String> {
    if let Some(texts) = render_extra::task_notification_command(a) {
        return texts;
    }
    let human = match a.get("origin") {
        None | Some(Value::Null) => true,
        Some(o) => o.get("kind").and_then(Value::as_str) == Some("human"),
    };
    let mode = str_of(a, "commandMode").unwrap_or("prompt");
    if !human || mode != "prompt" || a.get("isMeta") == Some(&Value::Bool(true)) {
        return Vec::new();
    }
    let prompt = match a.get("prompt") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return Vec::new(),
    };
    vec![format!("The user sent a new message while you were working:\n{prompt}\n\nThis is how Claude Code surfaces messages the user sends mid-turn \u{2014} within the running turn, often alongside the next tool result, rather than as a separate conversation turn. Address the message above as you continue this turn.")]
}

/// A JSON value as JavaScript's template literal prints it (`undefined` when missing).
fn js(a: &Value, key: &str) -> String {
    match a.get(key) {
        None => "undefined".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) => "null".to_owned(),
        Some(v) => v.to_string(),
    }
}

/// `token_usage`: `Token usage: {used}/{total}; {remaining} remaining` (harness case
/// `tests/fixtures/oracle-made`, see docs/resume.md; not in the corpus).
fn token_usage(a: &Value, _: &ModelProfile) -> Vec<String> {
    vec![format!(
        "Token usage: {}/{}; {} remaining",
        js(a, "used"),
        js(a, "total"),
        js(a, "remaining")
    )]
}

/// `output_style`: `{style} output style is active. {turnReminder or the default}`
/// (not in the corpus; no case yet).
fn output_style(a: &Value, _: &ModelProfile) -> Vec<String> {
    let Some(style) = str_of(a, "style").filter(|s| !s.is_empty()) else {
        return Vec::new();
    };
    let reminder = str_of(a, "turnReminder")
        .unwrap_or("Remember to follow the specific guidelines for this style.");
    vec![format!(
        "{} output style is active. {reminder}",
        escape_html(style)
    )]
}

/// `&`, `<`, `>` as entities (the CLI's escaping of short labels).
fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `critical_system_reminder`: its `content` verbatim (not in the corpus; no case yet).
fn critical_system_reminder(a: &Value, _: &ModelProfile) -> Vec<String> {
    str_of(a, "content")
        .map(str::to_owned)
        .into_iter()
        .collect()
}

/// `agent_mention`: the "@agent" nudge (not in the corpus; no case yet).
fn agent_mention(a: &Value, _: &ModelProfile) -> Vec<String> {
    vec![format!("The user has expressed a desire to invoke the agent \"{}\". Please invoke the agent appropriately, passing in the required context to it. ", js(a, "agentType"))]
}

/// A file path as the CLI shows it in a reminder: `<` and `>` escaped.
fn shown_path(a: &Value, key: &str) -> String {
    js(a, key).replace('<', "&lt;").replace('>', "&gt;")
}

/// `opened_file_in_ide`: made case `made_attachments__*`.
fn opened_file_in_ide(a: &Value, _: &ModelProfile) -> Vec<String> {
    vec![format!(
        "The user opened the file {} in the IDE. This may or may not be related to the current task.",
        shown_path(a, "filename")
    )]
}

/// `compact_file_reference` (a file read before a compaction, too large to include):
/// made case `made_attachments_more__*`.
fn compact_file_reference(a: &Value, _: &ModelProfile) -> Vec<String> {
    vec![format!(
        "Note: {} was read before the last conversation was summarized, but the contents are too large to include. Use Read tool if you need to access it.",
        shown_path(a, "filename")
    )]
}

/// `plan_file_reference`: the plan of plan mode, restated. Made case
/// `made_attachments_more__*`.
fn plan_file_reference(a: &Value, _: &ModelProfile) -> Vec<String> {
    let head = match str_of(a, "planFilePath").filter(|p| !p.is_empty()) {
        Some(p) => format!("A plan file exists from plan mode at: {p}"),
        None => "A plan exists from plan mode.".to_owned(),
    };
    vec![format!(
        "{head}\n\nPlan contents:\n\n{}\n\nIf this plan is relevant to the current work and not already complete, continue working on it.",
        js(a, "planContent")
    )]
}

/// `hook_blocking_error`: `{hookName} hook blocking error from command: "{command}":
/// {blockingError}` (hook text escaping as for `hook_success`). Made case
/// `made_attachments_more__*`.
fn hook_blocking_error(a: &Value, _: &ModelProfile) -> Vec<String> {
    let err = a.get("blockingError").unwrap_or(&Value::Null);
    vec![hook_text(&format!(
        "{} hook blocking error from command: \"{}\": {}",
        js(a, "hookName"),
        js(err, "command"),
        js(err, "blockingError")
    ))]
}

/// `hook_stopped_continuation`: `{hookName} hook stopped continuation: {message}`.
/// Made case `made_attachments_more__*`.
fn hook_stopped_continuation(a: &Value, _: &ModelProfile) -> Vec<String> {
    vec![hook_text(&format!(
        "{} hook stopped continuation: {}",
        js(a, "hookName"),
        js(a, "message")
    ))]
}

/// `plan_mode_exit` (not in the corpus; no case yet).
fn plan_mode_exit(a: &Value, _: &ModelProfile) -> Vec<String> {
    let at = if a.get("planExists") == Some(&Value::Bool(true)) {
        format!(
            " The plan file is located at {} if you need to reference it.",
            js(a, "planFilePath")
        )
    } else {
        String::new()
    };
    vec![format!("## Exited Plan Mode\n\nYou have exited plan mode. You can now make edits, run tools, and take actions.{at}")]
}

/// Longest diagnostics body (UTF-16 units, as JavaScript counts) before it is cut.
const DIAGNOSTICS_MAX: usize = 4000;

/// The glyph of a diagnostic's severity (`figures` on Linux/macOS).
fn severity_glyph(severity: Option<&str>) -> &'static str {
    match severity.map(str::to_ascii_lowercase).as_deref() {
        Some("error") => "\u{2718}",
        Some("warning") => "\u{26a0}",
        Some("info" | "information") => "\u{2139}",
        Some("hint") => "\u{2605}",
        _ => "\u{25cf}",
    }
}

/// One diagnostic line, or `None` when the CLI drops it as malformed (no string
/// message or no numeric start position).
fn diagnostic_line(d: &Value) -> Option<String> {
    let message = str_of(d, "message")?;
    let start = d.get("range")?.get("start")?;
    let line = start.get("line")?.as_f64()?;
    let character = start.get("character")?.as_f64()?;
    let num = |n: f64| {
        let n = n + 1.0;
        if n.fract() == 0.0 && n.abs() < 1e15 {
            format!("{}", n as i64)
        } else {
            n.to_string()
        }
    };
    let code = str_of(d, "code")
        .filter(|c| !c.is_empty())
        .map(|c| format!(" [{c}]"))
        .unwrap_or_default();
    let source = str_of(d, "source")
        .filter(|c| !c.is_empty())
        .map(|c| format!(" ({c})"))
        .unwrap_or_default();
    Some(format!(
        "  {} [Line {}:{}] {message}{code}{source}",
        severity_glyph(str_of(d, "severity")),
        num(line),
        num(character)
    ))
}

/// `diagnostics` (new IDE/LSP diagnostics): `<new-diagnostics>The following new
/// diagnostic issues were detected:\n\n{file}:\n  {glyph} [Line l:c] {message} [code]
/// (source)…</new-diagnostics>`, files separated by a blank line, the body cut at 4000
/// characters. Not in the corpus: made case `made_attachments__*`.
fn diagnostics(a: &Value, _: &ModelProfile) -> Vec<String> {
    let files: Vec<String> = a
        .get("files")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .filter_map(|f| {
            let uri = str_of(f, "uri")?;
            let lines: Vec<String> = f
                .get("diagnostics")?
                .as_array()?
                .iter()
                .filter_map(diagnostic_line)
                .collect();
            if lines.is_empty() {
                return None;
            }
            let name = match uri.rsplit('/').next() {
                Some(n) if !n.is_empty() => n,
                _ => uri,
            };
            Some(format!("{name}:\n{}", lines.join("\n")))
        })
        .collect();
    if files.is_empty() {
        return Vec::new();
    }
    let mut body = files.join("\n\n");
    if body.encode_utf16().count() > DIAGNOSTICS_MAX {
        let mut units = 0;
        let cut: String = body
            .chars()
            .take_while(|c| {
                units += c.len_utf16();
                units <= DIAGNOSTICS_MAX - 12
            })
            .collect();
        body = format!("{cut}\u{2026}[truncated]");
    }
    vec![format!("<new-diagnostics>The following new diagnostic issues were detected:\n\n{body}</new-diagnostics>")]
}

/// `read_truncation_notice`: its `banner`, HTML-escaped (`&`, `<`, `>`). Not in the
/// corpus: made case `made_attachments__*`.
fn read_truncation_notice(a: &Value, _: &ModelProfile) -> Vec<String> {
    str_of(a, "banner").map(escape_html).into_iter().collect()
}

#[cfg(test)]
#[path = "attachments_tests.rs"]
mod tests;
