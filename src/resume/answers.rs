//! `attachment_answer` records (CLI 2.1.336): a later record that rewrites the text of an
//! earlier attachment, named by `rowUuid`. On load the CLI applies every answer that
//! carries `leftOut: true` or a `rendered` list to the attachment it names, when an answer
//! may touch that kind ([`answerable`]); the last answer to a record wins:
//! - `leftOut`: the attachment sends nothing (its `rendered` is dropped and
//!   `textRewritten.leftOut` set; with `keepsText` the text stays stored but is still not
//!   sent);
//! - `rendered`: the attachment sends the answer's texts instead of its own (with
//!   `rendersLive` the CLI keeps them in `textRewritten.rendered` rather than `rendered`,
//!   and sends them all the same).
//!
//! The answer itself sends nothing. A record that carries a `textRewritten` (written so
//! by the CLI, or rewritten above; not one with `keepsText`) sends `textRewritten.rendered`,
//! else its `rendered`, else nothing (a queued command falls back to its payload); an
//! `auto_mode_rules` one sends only `textRewritten.rendered`. A `textRewritten.leftOut` on
//! a kind no answer may touch is dropped: the record is sent as usual. Made case
//! `issue25_later__*` (recorded with CLI 2.1.336), the turns after the probes.
//!
//! Not followed: answers off the chain (the CLI applies the answers of the whole file),
//! rewritten `project_doc_reads` and `message_pdf_reads` (the CLI renders the rewritten
//! payload; sessiondb renders the stored one), and `critical_system_reminder` records
//! that the CLI never lets an answer touch (sessiondb treats them as any attachment).
//! Pure functions over the chain's records, applied before the API view is built.
//!
//! CLI 2.1.332 knows neither answers nor `textRewritten` ([`Rule::LaterKinds`],
//! [`Rule::TextRewritten`]): resumed as that version, the answers are not applied and
//! every `textRewritten` is dropped, so the records are sent as 2.1.332 sends them (made
//! case `issue25_later_332__*`).

use serde_json::{json, Value};

use super::cli_version::{CliVersion, Rule};
use super::util::{rec_type, FastMap};

/// What an answer does to the attachment it names.
enum Answer {
    LeftOut,
    Rendered { texts: Value, live: bool },
}

/// The attachments of `records` as the CLI has them after applying the answers among
/// them (see the module doc): a left-out one loses `rendered` and gets
/// `textRewritten.leftOut` ([`left_out`]); one whose text was rewritten, now or by the
/// CLI that wrote it, gets the texts it sends in `rendered` ([`rewritten`]). Records
/// without a `textRewritten` or an answer are untouched. As a `cli` before
/// [`Rule::TextRewritten`]: only the `textRewritten` fields go ([`forget_rewrites`]).
pub fn apply(records: &mut [Value], cli: CliVersion) {
    if !cli.follows(Rule::TextRewritten) {
        forget_rewrites(records);
        return;
    }
    let mut answers: FastMap<String, Answer> = FastMap::default();
    for r in records.iter().filter(|_| cli.follows(Rule::LaterKinds)) {
        let Some(a) = answer(r) else { continue };
        let left_out = a.get("leftOut") == Some(&Value::Bool(true));
        let rendered = a.get("rendered").filter(|v| v.is_array());
        let Some(row) = a.get("rowUuid").and_then(Value::as_str) else {
            continue;
        };
        let what = match rendered {
            _ if left_out => Answer::LeftOut,
            Some(t) => Answer::Rendered {
                texts: t.clone(),
                live: a.get("rendersLive") == Some(&Value::Bool(true)),
            },
            None => continue,
        };
        answers.insert(row.to_owned(), what);
    }
    for r in records.iter_mut() {
        if rec_type(r) != Some("attachment")
            || r.get("textRewritten").is_none() && answers.is_empty()
        {
            continue;
        }
        if !answerable(r) {
            if left_out(r) {
                if let Some(o) = r.as_object_mut() {
                    o.remove("textRewritten");
                }
            }
            continue;
        }
        let uuid = r.get("uuid").and_then(Value::as_str).unwrap_or("");
        if let (Some(what), Some(o)) = (answers.get(uuid), r.as_object_mut()) {
            let mut tr = json!({"by": "prompt.attachment"});
            match what {
                Answer::LeftOut => {
                    o.remove("rendered");
                    tr["leftOut"] = Value::Bool(true);
                }
                Answer::Rendered { texts, live: true } => {
                    o.remove("rendered");
                    tr["rendered"] = texts.clone();
                }
                Answer::Rendered { texts, live: false } => {
                    o.insert("rendered".to_owned(), texts.clone());
                }
            }
            o.insert("textRewritten".to_owned(), tr);
        }
        settle(r);
    }
}

/// A CLI that does not read `textRewritten` (2.1.332): the field is dropped from every
/// attachment, so that nothing after reads it.
fn forget_rewrites(records: &mut [Value]) {
    for r in records.iter_mut() {
        if rec_type(r) == Some("attachment") {
            if let Some(o) = r.as_object_mut() {
                o.remove("textRewritten");
            }
        }
    }
}

/// The CLI's rule for a record with a `textRewritten` (not `keepsText`, not left out):
/// its texts are `textRewritten.rendered`, else (not for `auto_mode_rules`) `rendered`;
/// with neither it sends nothing, but a queued command renders its payload.
fn settle(r: &mut Value) {
    let Some(tr) = r.get("textRewritten").filter(|t| t.is_object()) else {
        return;
    };
    if tr.get("keepsText") == Some(&Value::Bool(true)) || left_out(r) {
        return;
    }
    let kind = r
        .pointer("/attachment/type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if matches!(kind.as_str(), "project_doc_reads" | "message_pdf_reads") {
        return;
    }
    let own = tr.get("rendered").filter(|v| v.is_array()).cloned();
    let texts = match own {
        Some(t) => Some(t),
        None if kind == "auto_mode_rules" => None,
        None => r.get("rendered").filter(|v| v.is_array()).cloned(),
    };
    let Some(o) = r.as_object_mut() else { return };
    match texts {
        Some(t) => {
            o.insert("rendered".to_owned(), t);
        }
        None if kind == "queued_command" => {
            o.remove("rendered");
        }
        None => {
            o.remove("rendered");
            if let Some(tr) = o.get_mut("textRewritten").and_then(Value::as_object_mut) {
                tr.insert("leftOut".to_owned(), Value::Bool(true));
            }
        }
    }
}

/// An attachment left out (`textRewritten.leftOut: true`, after [`apply`]): it sends
/// nothing, whatever its kind or stored text.
pub fn left_out(r: &Value) -> bool {
    r.get("textRewritten")
        .and_then(|t| t.get("leftOut"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// An attachment whose text was rewritten (a `textRewritten` without `keepsText`, after
/// [`apply`]): its `rendered` is what it sends, even for a kind whose stored text the CLI
/// otherwise does not use.
pub fn rewritten(r: &Value) -> bool {
    r.get("textRewritten")
        .is_some_and(|t| t.is_object() && t.get("keepsText") != Some(&Value::Bool(true)))
}

/// The payload of an `attachment_answer` record.
fn answer(r: &Value) -> Option<&Value> {
    if rec_type(r) != Some("attachment") {
        return None;
    }
    let a = r.get("attachment")?;
    (a.get("type").and_then(Value::as_str) == Some("attachment_answer")).then_some(a)
}

/// Whether an answer may rewrite this attachment: not the kinds whose text the CLI builds
/// from several records (`poll_events`, `plugin_note`, `batching_reminder`,
/// `secondary_reminder`), not a queued command delivered by a task, not a withdrawn
/// prefetched memory.
fn answerable(r: &Value) -> bool {
    let Some(a) = r.get("attachment") else {
        return false;
    };
    match a.get("type").and_then(Value::as_str) {
        Some("poll_events" | "plugin_note" | "batching_reminder" | "secondary_reminder") => false,
        Some("queued_command") => a.get("taskDelivery").is_none(),
        Some("cowork_memory_context") => a.get("prefetchedWithdrawn") != Some(&Value::Bool(true)),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn att(uuid: &str, a: Value) -> Value {
        json!({"type":"attachment","uuid":uuid,"attachment":a,
               "rendered":[{"content":"own"}],"renderedRole":"user"})
    }

    #[test]
    fn left_out_and_rewritten() {
        let mut rs = vec![
            att("a", json!({"type":"date_change","newDate":"x"})),
            att("b", json!({"type":"date_change","newDate":"y"})),
            att("c", json!({"type":"poll_events"})),
            att("d", json!({"type":"date_change","newDate":"z"})),
            att(
                "q1",
                json!({"type":"attachment_answer","rowUuid":"a","leftOut":true}),
            ),
            att(
                "q2",
                json!({"type":"attachment_answer","rowUuid":"b","rendered":[{"content":"new"}]}),
            ),
            att(
                "q3",
                json!({"type":"attachment_answer","rowUuid":"c","leftOut":true}),
            ),
            att(
                "q4",
                json!({"type":"attachment_answer","rowUuid":"d","askedOf":[]}),
            ),
        ];
        apply(&mut rs, CliVersion::default());
        assert!(left_out(&rs[0]) && rs[0].get("rendered").is_none());
        assert_eq!(rs[1]["rendered"], json!([{"content":"new"}]));
        assert!(!left_out(&rs[1]));
        assert_eq!(rs[1]["renderedRole"], "user");
        assert!(!left_out(&rs[2]));
        assert_eq!(rs[2]["rendered"], json!([{"content":"own"}]));
        assert_eq!(rs[3]["rendered"], json!([{"content":"own"}]));
    }

    #[test]
    fn cli_2_1_332_reads_neither_answers_nor_rewrites() {
        let mut stored = att("s", json!({"type":"date_change","newDate":"y"}));
        stored["textRewritten"] = json!({"by":"prompt.attachment","leftOut":true});
        let mut rs = vec![
            att("a", json!({"type":"date_change","newDate":"x"})),
            att(
                "q1",
                json!({"type":"attachment_answer","rowUuid":"a","leftOut":true}),
            ),
            stored,
        ];
        let before = rs.clone();
        apply(&mut rs, "2.1.332".parse().expect("version"));
        assert_eq!(rs[..2], before[..2]);
        assert!(rs[2].get("textRewritten").is_none() && !left_out(&rs[2]));
        assert_eq!(rs[2]["rendered"], json!([{"content":"own"}]));
    }

    #[test]
    fn live_answers_and_stored_rewrites() {
        let mut rs = vec![
            att("a", json!({"type":"date_change","newDate":"x"})),
            att("b", json!({"type":"auto_mode_rules","content":"r"})),
            att("c", json!({"type":"auto_mode_rules","content":"r"})),
            att(
                "q1",
                json!({"type":"attachment_answer","rowUuid":"a","rendersLive":true,
                             "rendered":[{"content":"live"}]}),
            ),
            att(
                "q2",
                json!({"type":"attachment_answer","rowUuid":"b",
                             "rendered":[{"content":"not live"}]}),
            ),
            att(
                "q3",
                json!({"type":"attachment_answer","rowUuid":"c","rendersLive":true,
                             "rendered":[{"content":"live rules"}]}),
            ),
        ];
        let mut poll = att("p", json!({"type":"poll_events"}));
        poll["textRewritten"] = json!({"by":"prompt.attachment","leftOut":true});
        let mut stored = att("s", json!({"type":"date_change","newDate":"y"}));
        stored["textRewritten"] = json!({"by":"prompt.attachment","rendered":[{"content":"tr"}]});
        let mut bare = att("t", json!({"type":"date_change","newDate":"z"}));
        bare.as_object_mut().unwrap().remove("rendered");
        bare["textRewritten"] = json!({"by":"prompt.attachment"});
        rs.extend([poll, stored, bare]);
        apply(&mut rs, CliVersion::default());
        assert_eq!(rs[0]["rendered"], json!([{"content":"live"}]));
        assert!(left_out(&rs[1]) && rs[1].get("rendered").is_none());
        assert_eq!(rs[2]["rendered"], json!([{"content":"live rules"}]));
        assert!(rewritten(&rs[2]));
        assert!(rs[6].get("textRewritten").is_none());
        assert_eq!(rs[7]["rendered"], json!([{"content":"tr"}]));
        assert!(left_out(&rs[8]));
    }
}
