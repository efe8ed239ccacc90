//! The model a resumed conversation is sent to, and what the resume rules read of it.
//!
//! CLI 2.1.332 shapes the API view by the model it is about to call (oracle `real/`
//! pack): thinking of other models is dropped (B1) and newer models get reminders as
//! `system` messages (B10). These helpers are pure: they take model ids, never look
//! anything up.

use serde_json::Value;

use super::util::{rec_type, str_field};

/// B14: what `--model` ids the CLI rewrites before calling the API. Aliases resolve to
/// the current model of their family; retired Opus 4.0/4.1 ids are remapped to the latest
/// Opus. Shown by `happycli__0-say-lol-session__own` (`model_note`: `--model
/// claude-opus-4-20250514` is sent as `claude-opus-5-5`) and the `oracle-made/model_mix__*`
/// cases (`case.json.request_model`: `opus`, `haiku`, `fable`, `claude-opus-4-1-20250805`;
/// `claude-3-7-sonnet-latest` and `claude-sonnet-4-0` are sent unchanged).
pub const MODEL_REWRITES: &[(&str, &str)] = &[
    ("opus", "claude-opus-5-5"),
    ("sonnet", "claude-sonnet-5-5"),
    ("haiku", "claude-haiku-5-5"),
    ("fable", "claude-fable-5-2"),
    ("claude-opus-4-20250514", "claude-opus-5-5"),
    ("claude-opus-4-1-20250805", "claude-opus-5-5"),
    ("claude-opus-4-0", "claude-opus-5-5"),
    ("claude-opus-4-1", "claude-opus-5-5"),
];

/// The model id the CLI actually calls for a `--model` argument (B14): a rewritten alias
/// or retired id, else the argument unchanged (trimmed). Case-insensitive like the CLI.
pub fn resolve_model(requested: &str) -> String {
    let id = requested.trim();
    let lower = id.to_ascii_lowercase();
    MODEL_REWRITES
        .iter()
        .find(|(from, _)| *from == lower)
        .map_or_else(|| id.to_owned(), |(_, to)| (*to).to_owned())
}

/// A model id without a trailing `-YYYYMMDD` date (`claude-sonnet-4-5-20250929` →
/// `claude-sonnet-4-5`); other ids unchanged.
pub fn undated(model: &str) -> &str {
    match model.rsplit_once('-') {
        Some((base, date))
            if !base.is_empty() && date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) =>
        {
            base
        }
        _ => model,
    }
}

/// True when two ids name the same model ([`canonical_model`]). B1:
/// `claude-sonnet-4-5` keeps `claude-sonnet-4-5-20250929` thinking
/// (`entirecli__63590d292e96_0_full__own`), `claude-sonnet-4-0` keeps
/// `claude-sonnet-4-20250514` thinking (`oracle-made/model_mix__claude-sonnet-4-0`).
pub fn same_model(a: &str, b: &str) -> bool {
    a == b || canonical_model(a) == canonical_model(b)
}

/// How a model is sent reminders (B10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReminderStyle {
    /// Reminders are `<system-reminder>` text folded into user messages (R6, R9, R10).
    #[default]
    Folded,
    /// Reminders are separate `role: "system"` messages.
    SystemMessages,
}

/// What the resume rules need to know about the target model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelProfile {
    /// How attachment reminders are sent (B10).
    pub reminders: ReminderStyle,
    /// In `system` messages, each reminder keeps its `<system-reminder>` wrapper. The CLI
    /// does this for `claude-sonnet-5` only (its `_ve`: wrap when the canonical model is
    /// `claude-sonnet-5`); every other system-message model gets bare text.
    pub wrap_system_reminders: bool,
    /// The task tools (TaskCreate/TaskUpdate) are offered, so a `task_reminder` renders
    /// (B3). The CLI enables them by default only for the models of [`TASK_TOOL_MODELS`]:
    /// `ccbackup__3e89eb15-32e7-43f8-8734-8d47310263ea__other` (sonnet-4-5) shows the
    /// reminders, `__own` (opus-4-8) does not.
    pub task_tools: bool,
    /// The canonical target model when the CLI's generation list names it (an
    /// `output_limit_note` is sent only to the model it was written for).
    pub canonical: Option<&'static str>,
}

impl Default for ModelProfile {
    /// No model known: the main pack's behaviour (folded reminders, task tools offered).
    fn default() -> Self {
        ModelProfile {
            reminders: ReminderStyle::Folded,
            wrap_system_reminders: false,
            task_tools: true,
            canonical: None,
        }
    }
}

/// The CLI's model generations in release order (2.1.332's list). Models before
/// `claude-opus-4-8` in it, and every `claude-3-*`, get folded reminders (B10).
const MODEL_GENERATIONS: &[&str] = &[
    "claude-opus-4-0",
    "claude-sonnet-4-0",
    "claude-opus-4-1",
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
    "claude-opus-4-5",
    "claude-opus-4-6",
    "claude-sonnet-4-6",
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-mythos-5",
    "claude-fable-5",
    "claude-sonnet-5",
    "claude-opus-5",
    "claude-mythos-5-1",
    "claude-fable-5-1",
    "claude-opus-5-5",
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
    "claude-mythos-5-2",
    "claude-fable-5-2",
];

/// The first generation that gets `system` messages (B10).
const FIRST_SYSTEM_MESSAGE_MODEL: &str = "claude-opus-4-8";

/// Canonical models for which the CLI offers the task tools by default (B3
/// `task_reminder`).
pub const TASK_TOOL_MODELS: &[&str] = &[
    "claude-3-opus",
    "claude-3-sonnet",
    "claude-3-haiku",
    "claude-3-5-sonnet",
    "claude-3-5-haiku",
    "claude-3-7-sonnet",
    "claude-opus-4-0",
    "claude-opus-4-1",
    "claude-opus-4-5",
    "claude-opus-4-6",
    "claude-opus-4-7",
    "claude-sonnet-4-0",
    "claude-sonnet-4-5",
    "claude-sonnet-4-6",
    "claude-haiku-4-5",
];

/// Families recognised inside an id, most specific first, as the CLI canonicalises
/// (`claude-opus-4-5-20251101` → `claude-opus-4-5`, `us.anthropic.claude-…` too).
const FAMILIES: &[&str] = &[
    "claude-fable-5-2",
    "claude-fable-5-1",
    "claude-fable-5",
    "claude-mythos-5-2",
    "claude-mythos-5-1",
    "claude-mythos-5",
    "claude-opus-5-5",
    "claude-opus-5",
    "claude-opus-4-8",
    "claude-opus-4-7",
    "claude-opus-4-6",
    "claude-opus-4-5",
    "claude-opus-4-1",
];

/// Families after the `claude-opus-4` (Opus 4.0) and `claude-sonnet-4` (4.0) checks.
const LATER_FAMILIES: &[&str] = &[
    "claude-sonnet-5-5",
    "claude-sonnet-5",
    "claude-sonnet-4-6",
    "claude-sonnet-4-5",
];

/// Families after the `claude-sonnet-4` (4.0) check.
const LAST_FAMILIES: &[&str] = &[
    "claude-haiku-5-5",
    "claude-haiku-4-5",
    "claude-3-7-sonnet",
    "claude-3-5-sonnet",
    "claude-3-5-haiku",
    "claude-3-opus",
    "claude-3-sonnet",
    "claude-3-haiku",
];

/// True when `id` contains `family` followed by no further `-<digit>` version part
/// (`claude-opus-4` matches `claude-opus-4-20250514` but not `claude-opus-4-6`).
fn names_version_zero(id: &str, family: &str) -> bool {
    id.match_indices(family).any(|(i, _)| {
        let rest = &id[i + family.len()..];
        let mut chars = rest.chars();
        match (chars.next(), chars.next(), chars.next()) {
            (Some('-'), Some(d), next) if d.is_ascii_digit() => {
                // `-2025…` (a date, several digits) is still version 0; `-6` is not.
                next.is_some_and(|c| c.is_ascii_digit())
            }
            _ => true,
        }
    })
}

/// The canonical name the CLI gives a model id: lower case, without `[1m]`, the family
/// it contains (checked in the CLI's order), else the id without a `-YYYYMMDD` date.
/// `MiniMax-M2.7` → `minimax-m2.7`.
pub fn canonical_model(model: &str) -> String {
    let id = model.trim().to_lowercase().replace("[1m]", "");
    let found = FAMILIES
        .iter()
        .find(|f| id.contains(**f))
        .map(|f| (*f).to_owned())
        .or_else(|| names_version_zero(&id, "claude-opus-4").then(|| "claude-opus-4-0".into()))
        .or_else(|| {
            LATER_FAMILIES
                .iter()
                .find(|f| id.contains(**f))
                .map(|f| (*f).to_owned())
        })
        .or_else(|| names_version_zero(&id, "claude-sonnet-4").then(|| "claude-sonnet-4-0".into()))
        .or_else(|| {
            LAST_FAMILIES
                .iter()
                .find(|f| id.contains(**f))
                .map(|f| (*f).to_owned())
        });
    found.unwrap_or_else(|| undated(&id).to_owned())
}

/// True when the canonical model gets folded reminders: a `claude-3-*` model, or one
/// released before `claude-opus-4-8` (B10).
fn gets_folded_reminders(canonical: &str) -> bool {
    if canonical.contains("claude-3-") {
        return true;
    }
    let pos = |m: &str| MODEL_GENERATIONS.iter().position(|g| *g == m);
    match (pos(canonical), pos(FIRST_SYSTEM_MESSAGE_MODEL)) {
        (Some(i), Some(first)) => i < first,
        _ => false,
    }
}

/// The profile of a target model (B10; `soph__01M089WX3QX7B7XFCSZF80QTY9_0_full__own`
/// with `claude-opus-5` vs `__other` with `claude-sonnet-4-5`; `MiniMax-M2.7`, an
/// unknown id, gets `system` messages in `ccbackup__2764ab64-…__own`). `None` (no model
/// known) keeps the folded form of the main pack.
pub fn model_profile(model: Option<&str>) -> ModelProfile {
    let Some(model) = model else {
        return ModelProfile::default();
    };
    let canonical = canonical_model(model);
    let folded = gets_folded_reminders(&canonical);
    ModelProfile {
        reminders: if folded {
            ReminderStyle::Folded
        } else {
            ReminderStyle::SystemMessages
        },
        wrap_system_reminders: !folded && canonical == "claude-sonnet-5",
        task_tools: TASK_TOOL_MODELS.contains(&canonical.as_str()),
        canonical: MODEL_GENERATIONS.iter().copied().find(|g| *g == canonical),
    }
}

/// The model a session was last talking to: `message.model` of its last assistant record
/// that is not a `<synthetic>` repair or API error. `records` in file order.
pub fn last_assistant_model(records: &[Value]) -> Option<&str> {
    records
        .iter()
        .rev()
        .filter(|r| rec_type(r) == Some("assistant"))
        .filter_map(|r| r.get("message").and_then(|m| str_field(m, "model")))
        .find(|m| is_real_model(m))
}

/// False for the placeholder model of records the CLI made itself.
pub fn is_real_model(model: &str) -> bool {
    !model.is_empty() && model != "<synthetic>"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rewrites_and_dates() {
        assert_eq!(resolve_model("opus"), "claude-opus-5-5");
        assert_eq!(resolve_model("Sonnet"), "claude-sonnet-5-5");
        assert_eq!(resolve_model("haiku"), "claude-haiku-5-5");
        assert_eq!(resolve_model("claude-opus-4-20250514"), "claude-opus-5-5");
        assert_eq!(
            resolve_model("claude-sonnet-4-20250514"),
            "claude-sonnet-4-20250514"
        );
        assert_eq!(resolve_model("MiniMax-M2.7"), "MiniMax-M2.7");
        assert_eq!(undated("claude-sonnet-4-5-20250929"), "claude-sonnet-4-5");
        assert_eq!(undated("claude-opus-4-6"), "claude-opus-4-6");
        assert_eq!(undated("-20250929"), "-20250929");
        assert!(same_model(
            "claude-sonnet-4-5",
            "claude-sonnet-4-5-20250929"
        ));
        assert!(!same_model("claude-sonnet-4-5", "claude-opus-4-6"));
        assert!(same_model("claude-sonnet-4-0", "claude-sonnet-4-20250514"));
        assert!(same_model(
            "claude-3-7-sonnet-latest",
            "claude-3-7-sonnet-20250219"
        ));
        assert!(!same_model("claude-sonnet-4-0", "claude-sonnet-4-5"));
    }

    #[test]
    fn profiles() {
        use ReminderStyle::*;
        for (m, want) in [
            ("claude-sonnet-4-5-20250929", Folded),
            ("claude-opus-4-7", Folded),
            ("claude-haiku-4-5", Folded),
            ("claude-3-5-haiku-20241022", Folded),
            ("claude-opus-4-8", SystemMessages),
            ("claude-fable-5", SystemMessages),
            ("MiniMax-M2.7", SystemMessages),
            ("claude-sonnet-4-20250514", Folded),
            ("claude-opus-4-20250514", Folded),
            ("claude-sonnet-4-6", Folded),
            ("claude-opus-5", SystemMessages),
            ("claude-sonnet-5", SystemMessages),
            ("claude-opus-5-5", SystemMessages),
            ("some-unknown-model", SystemMessages),
        ] {
            assert_eq!(model_profile(Some(m)).reminders, want, "{m}");
        }
        assert_eq!(model_profile(None).reminders, Folded);
    }

    #[test]
    fn canonical_names() {
        for (id, want) in [
            ("claude-opus-4-5-20251101", "claude-opus-4-5"),
            ("claude-opus-4-20250514", "claude-opus-4-0"),
            ("claude-sonnet-4-20250514", "claude-sonnet-4-0"),
            ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
            ("claude-3-5-haiku-20241022", "claude-3-5-haiku"),
            ("claude-opus-4-6[1m]", "claude-opus-4-6"),
            ("us.anthropic.claude-opus-4-8-v1", "claude-opus-4-8"),
            ("MiniMax-M2.7", "minimax-m2.7"),
        ] {
            assert_eq!(canonical_model(id), want, "{id}");
        }
    }

    #[test]
    fn task_tools_and_wrapping() {
        assert!(model_profile(Some("claude-sonnet-4-5-20250929")).task_tools);
        assert!(model_profile(Some("claude-3-5-haiku-20241022")).task_tools);
        assert!(!model_profile(Some("claude-opus-4-8")).task_tools);
        assert!(!model_profile(Some("MiniMax-M2.7")).task_tools);
        assert!(model_profile(None).task_tools);
        assert!(model_profile(Some("claude-sonnet-5")).wrap_system_reminders);
        assert!(!model_profile(Some("claude-opus-5")).wrap_system_reminders);
        assert!(!model_profile(Some("claude-sonnet-4-5")).wrap_system_reminders);
    }

    #[test]
    fn last_model_skips_synthetic() {
        let recs = vec![
            json!({"type":"assistant","message":{"model":"claude-opus-4-6"}}),
            json!({"type":"assistant","message":{"model":"<synthetic>"}}),
            json!({"type":"user","message":{"content":"x"}}),
        ];
        assert_eq!(last_assistant_model(&recs), Some("claude-opus-4-6"));
        assert_eq!(last_assistant_model(&recs[1..]), None);
    }
}
