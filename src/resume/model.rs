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

/// The id a model is known by whatever spelling names it: lower case, without a date
/// suffix, `-latest` or a `-0` minor version (`claude-sonnet-4-0`,
/// `claude-sonnet-4-20250514` → `claude-sonnet-4`; `claude-3-7-sonnet-latest` →
/// `claude-3-7-sonnet`).
pub fn canonical_model(model: &str) -> String {
    let lower = model.trim().to_ascii_lowercase();
    let base = undated(&lower);
    let base = base.strip_suffix("-latest").unwrap_or(base);
    let base = match base.strip_suffix("-0") {
        Some(major) if major.ends_with(|c: char| c.is_ascii_digit()) => major,
        _ => base,
    };
    base.to_owned()
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ModelProfile {
    /// How attachment reminders are sent (B10).
    pub reminders: ReminderStyle,
}

/// Model families (undated ids) that still get folded reminders (B10: opus ≤ 4-7,
/// sonnet ≤ 4-6, haiku-4-5, claude-3-x); every other id, unknown ones included, gets
/// `system` messages.
const FOLDED_REMINDER_MODELS: &[&str] = &[
    "claude-opus-4-0",
    "claude-opus-4",
    "claude-opus-4-1",
    "claude-opus-4-5",
    "claude-opus-4-6",
    "claude-opus-4-7",
    "claude-sonnet-4-0",
    "claude-sonnet-4",
    "claude-sonnet-4-5",
    "claude-sonnet-4-6",
    "claude-haiku-4-5",
];

/// The profile of a target model (B10; `soph__01M089WX3QX7B7XFCSZF80QTY9_0_full__own`
/// with `claude-opus-5` vs `__other` with `claude-sonnet-4-5`). `None` (no model known)
/// keeps the folded form of the main pack.
pub fn model_profile(model: Option<&str>) -> ModelProfile {
    let Some(model) = model else {
        return ModelProfile::default();
    };
    let base = undated(model);
    let folded = FOLDED_REMINDER_MODELS.contains(&base) || base.starts_with("claude-3");
    ModelProfile {
        reminders: if folded {
            ReminderStyle::Folded
        } else {
            ReminderStyle::SystemMessages
        },
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
        ] {
            assert_eq!(model_profile(Some(m)).reminders, want, "{m}");
        }
        assert_eq!(model_profile(None).reminders, Folded);
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
