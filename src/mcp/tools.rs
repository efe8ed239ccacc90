//! The tool list, written by hand: names, one-line descriptions and small input schemas.
//! Claude Code sends the whole list with every request, so every word here is paid for on
//! every turn; [`estimated_tokens`] measures it (tested ≤ 1,500).

use serde_json::{json, Map, Value};

/// A tool of the list.
pub struct ToolSpec {
    /// Its name (Claude Code calls it `mcp__sessiondb__<name>`).
    pub name: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// Whether it only reads (`readOnlyHint`).
    pub read_only: bool,
    /// Its input schema's `properties` as `(name, type, description)`.
    pub params: &'static [(&'static str, &'static str, &'static str)],
    /// The parameters it needs.
    pub required: &'static [&'static str],
}

impl ToolSpec {
    /// The names of its parameters.
    pub fn param_names(&self) -> Vec<&'static str> {
        self.params.iter().map(|(n, _, _)| *n).collect()
    }
}

const FILTERS: [(&str, &str, &str); 7] = [
    ("project", "string", "project folder name or path"),
    ("cwd", "string", "only sessions run in this directory"),
    ("branch", "string", "git branch"),
    ("tag", "string", ""),
    ("host", "string", "team stores only"),
    (
        "since",
        "string",
        "2026-01-31, RFC 3339, or an age: 3d, 12h",
    ),
    ("until", "string", ""),
];

/// The read-only tools.
pub const READ_TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "find",
        description: "Full-text search of past Claude Code sessions (prompts, replies; tool \
                      calls with tools=true). Every word must match. A session id or id \
                      prefix as query returns that session. Hits: session, title, snippet, \
                      message uuid (for read). Excludes sub-agents and the calling session \
                      unless asked.",
        read_only: true,
        params: &[
            ("query", "string", ""),
            FILTERS[0],
            FILTERS[1],
            FILTERS[2],
            FILTERS[3],
            FILTERS[4],
            FILTERS[5],
            FILTERS[6],
            ("role", "string", "user or assistant"),
            ("tools", "boolean", "also search tool calls and results"),
            ("agents", "boolean", "include sub-agent transcripts"),
            ("include_self", "boolean", "include the calling session"),
            ("limit", "integer", "max 20"),
            ("cursor", "string", "`next` of the previous answer"),
        ],
        required: &["query"],
    },
    ToolSpec {
        name: "list_sessions",
        description: "List stored sessions, newest first, with filters.",
        read_only: true,
        params: &[
            FILTERS[0],
            ("name", "string", "text in the title or first prompt"),
            FILTERS[2],
            FILTERS[3],
            FILTERS[4],
            FILTERS[5],
            FILTERS[6],
            ("all", "boolean", "also sessions the SDK hides"),
            ("limit", "integer", "max 50"),
            ("cursor", "string", ""),
        ],
        required: &[],
    },
    ToolSpec {
        name: "session_overview",
        description: "One session at a glance: title, tag, first prompt, last messages, \
                      sub-agents, fork origin, compactions, token totals.",
        read_only: true,
        params: &[
            ("session", "string", "id, id prefix or title"),
            ("last", "integer", "last messages to show, max 10"),
        ],
        required: &["session"],
    },
    ToolSpec {
        name: "read",
        description: "Read a session's conversation from offset (negative: from the end) \
                      or from a message uuid. Follow `next` for more.",
        read_only: true,
        params: &[
            ("session", "string", ""),
            ("around", "string", "start at this message uuid"),
            ("offset", "integer", ""),
            ("limit", "integer", "messages, max 100"),
            ("tools", "boolean", "include tool calls and results"),
            ("agent", "string", "a sub-agent id instead"),
            ("max_bytes", "integer", "max 40000"),
            ("cursor", "string", ""),
        ],
        required: &["session"],
    },
    ToolSpec {
        name: "files",
        description: "Sessions whose tool calls read, edited or mentioned a file path, \
                      newest first.",
        read_only: true,
        params: &[
            ("path", "string", "absolute, or its last parts"),
            FILTERS[0],
            ("limit", "integer", "max 20"),
            ("cursor", "string", ""),
        ],
        required: &["path"],
    },
    ToolSpec {
        name: "resume_plan",
        description: "The shell command that resumes a session in Claude Code (returned, \
                      never run).",
        read_only: true,
        params: &[
            ("session", "string", ""),
            ("cwd", "string", "directory to resume in"),
            ("fork", "boolean", "as a new session"),
        ],
        required: &["session"],
    },
    ToolSpec {
        name: "usage",
        description: "Tokens and USD cost: one session's (per model), or all sessions' \
                      by day, week, month, session, project or model.",
        read_only: true,
        params: &[
            ("session", "string", ""),
            (
                "by",
                "string",
                "day (default), week, month, session, project, model",
            ),
            ("since", "string", "2026-01-31 or an age: 7d"),
            ("until", "string", ""),
            FILTERS[0],
            FILTERS[3],
            ("limit", "integer", "rows, max 100"),
            ("cursor", "string", ""),
        ],
        required: &[],
    },
];

/// The tools that change the store, listed only with `--allow-write`.
pub const WRITE_TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "tag",
        description: "Set a session's tag, or clear it with clear=true.",
        read_only: false,
        params: &[
            ("session", "string", ""),
            ("tag", "string", ""),
            ("clear", "boolean", ""),
        ],
        required: &["session"],
    },
    ToolSpec {
        name: "rename",
        description: "Set a session's custom title.",
        read_only: false,
        params: &[("session", "string", ""), ("title", "string", "")],
        required: &["session", "title"],
    },
    ToolSpec {
        name: "fork",
        description: "Copy a session's conversation (up to a message uuid) into a new \
                      session; returns its id.",
        read_only: false,
        params: &[
            ("session", "string", ""),
            ("up_to", "string", "message uuid"),
            ("title", "string", ""),
        ],
        required: &["session"],
    },
];

/// The tools a server offers: the read-only ones, and the writes when allowed.
pub fn specs(allow_write: bool) -> impl Iterator<Item = &'static ToolSpec> {
    let writes: &[ToolSpec] = if allow_write { WRITE_TOOLS } else { &[] };
    READ_TOOLS.iter().chain(writes)
}

/// The spec of the tool `name` among those offered.
pub fn spec(name: &str, allow_write: bool) -> Option<&'static ToolSpec> {
    specs(allow_write).find(|s| s.name == name)
}

/// A tool's input schema.
pub fn input_schema(spec: &ToolSpec) -> Map<String, Value> {
    let properties: Map<String, Value> = spec
        .params
        .iter()
        .map(|(name, kind, description)| {
            let mut p = json!({ "type": kind });
            if !description.is_empty() {
                p["description"] = json!(description);
            }
            ((*name).to_owned(), p)
        })
        .collect();
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !spec.required.is_empty() {
        schema.insert("required".into(), json!(spec.required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    schema
}

/// A tool as `tools/list` shows it (name, description, schema, annotations).
pub fn listed(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name,
        "description": spec.description,
        "inputSchema": input_schema(spec),
        "annotations": if spec.read_only {
            json!({ "readOnlyHint": true })
        } else {
            json!({ "readOnlyHint": false, "destructiveHint": false })
        },
    })
}

/// The estimated token cost of the tool list: its compact JSON's UTF-8 bytes divided by
/// four, rounded up. No tokenizer is needed, and Claude's tokenizers average about four
/// bytes a token on English prose and JSON keys; Claude Code's own size estimate for tool
/// output uses the same ratio.
pub fn estimated_tokens(allow_write: bool) -> usize {
    let list: Vec<Value> = specs(allow_write).map(listed).collect();
    serde_json::to_vec(&list).map_or(usize::MAX, |v| v.len().div_ceil(4))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tool list stays cheap: the budget is 1,500 tokens.
    #[test]
    fn the_tool_list_costs_at_most_1500_tokens() {
        let read = estimated_tokens(false);
        let all = estimated_tokens(true);
        eprintln!("tool list: {read} tokens read-only, {all} with the write tools");
        assert!(read <= 1500, "read-only tool list: {read} tokens");
        assert!(all <= 1500, "tool list with writes: {all} tokens");
    }

    #[test]
    fn names_are_unique_and_required_params_exist() {
        let all: Vec<&ToolSpec> = specs(true).collect();
        for (i, s) in all.iter().enumerate() {
            assert!(all[..i].iter().all(|o| o.name != s.name), "{}", s.name);
            for r in s.required {
                assert!(s.param_names().contains(r), "{}: {r}", s.name);
            }
        }
        assert!(spec("tag", false).is_none());
        assert!(spec("tag", true).is_some());
    }
}
