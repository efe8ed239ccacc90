//! Renderers of [`super::attachments::RENDERERS`] for the attachment kinds CLI 2.1.336
//! knows and 2.1.332 does not (`tools/difftest/follow.sh 2.1.336`): `auto_mode_rules`,
//! `plugin_rules`, `projects_instructions`, `routine_fire` and `attachment_answer`.
//! 2.1.332 never writes them, so a session holding one was written by a newer CLI and is
//! resumed as 2.1.336 resumes it by default; `--cli-version 2.1.332` resumes it as 2.1.332
//! does ([`known`]: it renders none of them and sends a stored `rendered`,
//! `auto_mode_rules`' too: made case `issue25_later_332__*`). Pure functions of the
//! payload; the texts are 2.1.336's wire format, recorded in the made cases
//! `tests/fixtures/oracle-made/issue25_later__*` (made with 2.1.336).

use serde_json::Value;

use super::cli_version::{CliVersion, Rule};
use super::model::ModelProfile;
use super::reminder_escape::escape_reminder_tags;
use super::render_open::neutralize;

/// The kinds of this module: the attachment kinds CLI 2.1.332 does not know.
pub const KINDS: &[&str] = &[
    "auto_mode_rules",
    "plugin_rules",
    "projects_instructions",
    "routine_fire",
    "attachment_answer",
];

/// Whether a CLI of version `cli` knows the attachment kind: every kind but the
/// [`KINDS`] of this module before [`Rule::LaterKinds`]. A kind it does not know is not
/// rendered from its payload; a stored `rendered` is sent as stored, in the user turn
/// unless its `renderedRole` says otherwise (2.1.332's rule for unknown kinds: made case
/// `issue25_later_332__*`).
pub fn known(kind: &str, cli: CliVersion) -> bool {
    cli.follows(Rule::LaterKinds) || !KINDS.contains(&kind)
}

/// Kinds whose stored `rendered` (and `renderedRole`) the CLI does not use: it renders
/// them from the payload every time (2.1.336: `auto_mode_rules`; made case
/// `issue25_later__*`, probe 1, where the stored text differs from the payload's), unless
/// an answer rewrote their text ([`super::answers`]).
pub const RENDERED_FROM_PAYLOAD: &[&str] = &["auto_mode_rules"];

/// True for a kind of [`RENDERED_FROM_PAYLOAD`] that `cli` [`known`]s (2.1.332 sends a
/// stored `auto_mode_rules` text as stored).
pub fn rendered_from_payload(kind: &str, cli: CliVersion) -> bool {
    RENDERED_FROM_PAYLOAD.contains(&kind) && known(kind, cli)
}

/// `auto_mode_rules`: a heading and the rules (`content`, reminder tags escaped); nothing
/// when `content` is not a string.
pub fn auto_mode_rules(a: &Value, _: &ModelProfile) -> Vec<String> {
    a.get("content")
        .and_then(Value::as_str)
        .map(|c| format!("## Auto mode rules\n{}", escape_reminder_tags(c)))
        .into_iter()
        .collect()
}

/// `plugin_rules`: the CLI renders only the rules of plugins installed where it runs, and
/// only when their text still equals the recorded one. sessiondb cannot see the resuming
/// machine's plugins; a plain resume (no plugins, made case `issue25_later__*` probe 2)
/// sends nothing. A stored `rendered` is sent as stored (probe 3).
pub fn plugin_rules(_: &Value, _: &ModelProfile) -> Vec<String> {
    Vec::new()
}

/// Lead of the first-message instructions carried over a compaction.
const PROJECTS_LEAD: &str = "This conversation was compacted. The instructions from its first message follow word for word, as they stood when it started.";
/// Note when some of those instructions were changed or removed later.
const PROJECTS_CHANGED: &str = "Instructions from the first message that were changed or removed later are not repeated here, and any earlier copy of them is out of date.";

/// `projects_instructions`: the lead and the `blocks` (when there are any), then the
/// changed note (when `changed`), joined by blank lines, signal tags defused. Nothing
/// when the payload is malformed (`blocks` not all strings, `changed` not a boolean) or
/// there is nothing to say.
pub fn projects_instructions(a: &Value, _: &ModelProfile) -> Vec<String> {
    let Some(blocks) = a.get("blocks").and_then(Value::as_array) else {
        return Vec::new();
    };
    let Some(blocks) = blocks.iter().map(Value::as_str).collect::<Option<Vec<_>>>() else {
        return Vec::new();
    };
    let Some(changed) = a.get("changed").and_then(Value::as_bool) else {
        return Vec::new();
    };
    let mut parts: Vec<&str> = Vec::new();
    if !blocks.is_empty() {
        parts.push(PROJECTS_LEAD);
        parts.extend(blocks);
    }
    if changed {
        parts.push(PROJECTS_CHANGED);
    }
    if parts.is_empty() {
        return Vec::new();
    }
    vec![neutralize(&parts.join("\n\n"))]
}

/// A name the CLI prints in a routine note: at most 256 UTF-16 units, no controls, no
/// line separators, no `<` or `>`.
fn plain(s: &str) -> bool {
    s.encode_utf16().count() <= 256
        && !s.chars().any(|c| {
            matches!(c as u32, 0..=0x1f | 0x7f..=0x9f | 0x2028 | 0x2029) || c == '<' || c == '>'
        })
}

/// `routine_fire`: `This task fired at {firedAt}.`, with ` Fired by routine "{name}"
/// (trigger_id: {triggerId}).` when there is a trigger (the name part only with a name).
/// Nothing when `firedAt` is not a [`plain`] string or a present name or trigger is
/// neither that nor `null` (probe 10 of `issue25_later__*`); a `null` one is printed as
/// JavaScript prints it.
pub fn routine_fire(a: &Value, _: &ModelProfile) -> Vec<String> {
    let field = |k: &str| match a.get(k) {
        None => Some(None),
        Some(Value::Null) if k != "firedAt" => Some(Some("null")),
        Some(Value::String(s)) if plain(s) => Some(Some(s.as_str())),
        Some(_) => None,
    };
    let (Some(Some(at)), Some(name), Some(trigger)) =
        (field("firedAt"), field("name"), field("triggerId"))
    else {
        return Vec::new();
    };
    let by = match trigger {
        None => String::new(),
        Some(t) => {
            let named = name.map(|n| format!("\"{n}\" ")).unwrap_or_default();
            format!(" Fired by routine {named}(trigger_id: {t}).")
        }
    };
    vec![format!("This task fired at {at}.{by}")]
}

/// `attachment_answer`: sends nothing itself; what it does to the attachment it names is
/// [`super::answers`]' rule.
pub fn attachment_answer(_: &Value, _: &ModelProfile) -> Vec<String> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resume::model_profile;
    use serde_json::json;

    fn p() -> ModelProfile {
        model_profile(Some("claude-sonnet-4-5"))
    }

    #[test]
    fn routine_fire_forms() {
        let r = |v: Value| routine_fire(&v, &p());
        assert_eq!(
            r(json!({"firedAt":"9 AM","name":"n","triggerId":"t"})),
            ["This task fired at 9 AM. Fired by routine \"n\" (trigger_id: t)."]
        );
        assert_eq!(
            r(json!({"firedAt":"9 AM","triggerId":"t"})),
            ["This task fired at 9 AM. Fired by routine (trigger_id: t)."]
        );
        assert_eq!(r(json!({"firedAt":"9 AM"})), ["This task fired at 9 AM."]);
        assert!(r(json!({"firedAt":"9 AM","name":"a<b","triggerId":"t"})).is_empty());
        assert!(r(json!({"name":"n"})).is_empty());
        assert!(r(json!({"firedAt":"9 AM","triggerId":7})).is_empty());
        assert_eq!(
            r(json!({"firedAt":"9 AM","name":null,"triggerId":"t"})),
            ["This task fired at 9 AM. Fired by routine \"null\" (trigger_id: t)."]
        );
    }

    #[test]
    fn projects_instructions_forms() {
        let r = |v: Value| projects_instructions(&v, &p());
        assert!(r(json!({"blocks":[],"changed":false})).is_empty());
        assert_eq!(r(json!({"blocks":[],"changed":true})), [PROJECTS_CHANGED]);
        assert_eq!(
            r(json!({"blocks":["a <system-reminder> b"],"changed":false})),
            [format!("{PROJECTS_LEAD}\n\na <\\system-reminder> b")]
        );
        assert!(r(json!({"blocks":[1],"changed":false})).is_empty());
        assert!(r(json!({"blocks":["x"]})).is_empty());
    }
}
