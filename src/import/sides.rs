//! What a record puts in a side table beside its row (compactions, content replacements,
//! file-history snapshots, metadata): the one reading of these records, shared by both
//! engines' row writers.

use crate::jsonl::{self, Envelope};
use serde_json::Value;

/// Metadata record types and the field that holds each one's value (spec §3).
const METADATA_FIELDS: &[(&str, &str)] = &[
    ("custom-title", "customTitle"),
    ("ai-title", "aiTitle"),
    ("tag", "tag"),
    ("agent-name", "agentName"),
    ("agent-color", "agentColor"),
    ("agent-setting", "agentSetting"),
    ("mode", "mode"),
    ("permission-mode", "permissionMode"),
    ("worktree-state", "worktreeSession"),
    ("last-prompt", "lastPrompt"),
    ("summary", "summary"),
    ("task-summary", "summary"),
    ("cost-state", "costState"),
];

/// What a record puts in a side table, beside its row: the one reading of these records,
/// shared by both backends.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Side {
    /// A compact boundary: `compactMetadata`'s trigger, token count and preserved segment.
    Compaction {
        trigger: Option<String>,
        pre_tokens: Option<i64>,
        head_uuid: Option<String>,
        anchor_uuid: Option<String>,
        tail_uuid: Option<String>,
    },
    /// A content-replacement record: (kind, toolUseId, replacement) per replacement.
    Replacements(Vec<(Option<String>, Option<String>, Option<String>)>),
    /// A file-history snapshot or delta.
    FileHistory {
        message_id: Option<String>,
        is_snapshot_update: bool,
    },
    /// A metadata entry of kind `env.kind`.
    Metadata {
        leaf_uuid: Option<String>,
        value: Option<String>,
    },
}

/// The side-table entry of a record, if its kind has one. Only these records are parsed
/// whole.
pub(crate) fn side_of(bytes: &[u8], env: &Envelope<'_>) -> Option<Side> {
    let kind = env.kind.as_deref()?;
    let is_boundary = kind == "system" && env.subtype.as_deref() == Some("compact_boundary");
    let is_side = is_boundary
        || matches!(
            kind,
            "content-replacement" | "file-history-snapshot" | "file-history-delta" | "pr-link"
        )
        || METADATA_FIELDS.iter().any(|(k, _)| *k == kind);
    if !is_side {
        return None;
    }
    let record = jsonl::parse_record(bytes)?;
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    if is_boundary {
        let meta = record
            .get("compactMetadata")
            .cloned()
            .unwrap_or(Value::Null);
        let seg = meta.get("preservedSegment").cloned().unwrap_or(Value::Null);
        return Some(Side::Compaction {
            trigger: text(&meta, "trigger"),
            pre_tokens: meta.get("preTokens").and_then(Value::as_i64),
            head_uuid: text(&seg, "headUuid"),
            anchor_uuid: text(&seg, "anchorUuid"),
            tail_uuid: text(&seg, "tailUuid"),
        });
    }
    Some(match kind {
        "content-replacement" => {
            let replacements = record.get("replacements").and_then(Value::as_array);
            Side::Replacements(
                replacements
                    .into_iter()
                    .flatten()
                    .map(|r| {
                        let replacement = r.get("replacement").map(|v| match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        });
                        (text(r, "kind"), text(r, "toolUseId"), replacement)
                    })
                    .collect(),
            )
        }
        "file-history-snapshot" | "file-history-delta" => Side::FileHistory {
            message_id: text(&record, "messageId"),
            is_snapshot_update: record
                .get("isSnapshotUpdate")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        },
        _ => {
            let value = if kind == "pr-link" {
                let mut link = serde_json::Map::new();
                for key in ["prNumber", "prUrl", "prRepository"] {
                    if let Some(v) = record.get(key) {
                        link.insert(key.to_owned(), v.clone());
                    }
                }
                Some(Value::Object(link).to_string())
            } else {
                let field = METADATA_FIELDS
                    .iter()
                    .find(|(k, _)| *k == kind)
                    .map(|(_, f)| *f)
                    .expect("is_side checked the kind");
                match record.get(field) {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Null) | None => None,
                    Some(other) => Some(other.to_string()),
                }
            };
            Side::Metadata {
                leaf_uuid: text(&record, "leafUuid"),
                value,
            }
        }
    })
}
