//! Unit tests of `resume::chain` (R1–R3, B4, B19).
use super::*;
use serde_json::json;

fn uuids(chain: &[Value]) -> Vec<&str> {
    chain
        .iter()
        .map(|r| r["uuid"].as_str().unwrap_or("?"))
        .collect()
}

fn user(u: &str, p: Option<&str>, text: &str) -> Value {
    json!({"type":"user","uuid":u,"parentUuid":p,"timestamp":format!("t-{u}"),
           "message":{"role":"user","content":text}})
}
fn asst(u: &str, p: Option<&str>, mid: &str, block: Value, ts: &str) -> Value {
    json!({"type":"assistant","uuid":u,"parentUuid":p,"timestamp":ts,
           "message":{"id":mid,"role":"assistant","content":[block]}})
}
fn result(u: &str, p: &str, tid: &str, ts: &str) -> Value {
    json!({"type":"user","uuid":u,"parentUuid":p,"timestamp":ts,"sourceToolAssistantUUID":p,
           "message":{"role":"user","content":[{"tool_use_id":tid,"type":"tool_result","content":"ok"}]}})
}

#[test]
fn linear_chain_and_leaf() {
    let recs = vec![
        user("a", None, "hi"),
        json!({"type":"summary","leafUuid":"b"}),
        asst(
            "b",
            Some("a"),
            "m1",
            json!({"type":"text","text":"yo"}),
            "t2",
        ),
        json!({"type":"user","uuid":"side","parentUuid":"b","isSidechain":true,"message":{"content":"x"}}),
    ];
    assert_eq!(pick_leaf(&recs).as_deref(), Some("b"));
    assert_eq!(uuids(&build_chain(&recs, None).expect("chain")), ["a", "b"]);
}

#[test]
fn branches_follow_newest_leaf_in_file_order() {
    let recs = vec![
        user("a", None, "hi"),
        user("b1", Some("a"), "branch 1"),
        user("b2", Some("a"), "branch 2"),
    ];
    assert_eq!(
        uuids(&build_chain(&recs, None).expect("chain")),
        ["a", "b2"]
    );
    assert_eq!(
        uuids(&build_chain(&recs, Some("b1")).expect("chain")),
        ["a", "b1"]
    );
}

#[test]
fn missing_leaf_is_an_error() {
    let recs = vec![user("a", None, "hi")];
    assert_eq!(
        build_chain(&recs, Some("zz")),
        Err(ChainError::LeafNotFound("zz".into()))
    );
    assert!(build_chain(&[], None).expect("empty").is_empty());
}

#[test]
fn cycle_is_safe() {
    let recs = vec![user("a", Some("b"), "x"), user("b", Some("a"), "y")];
    assert_eq!(pick_leaf(&recs), None);
    assert_eq!(
        uuids(&build_chain(&recs, Some("a")).expect("chain")),
        ["b", "a"]
    );
}

#[test]
fn parallel_tool_calls_are_recovered() {
    // A1 -> A2 (same message id), R2 hangs off A2 (leaf), R1 off A1.
    let recs = vec![
        user("p", None, "go"),
        asst(
            "a1",
            Some("p"),
            "m",
            json!({"type":"tool_use","id":"t1","name":"X","input":{}}),
            "t1",
        ),
        asst(
            "a2",
            Some("a1"),
            "m",
            json!({"type":"tool_use","id":"t2","name":"X","input":{}}),
            "t2",
        ),
        result("r1", "a1", "t1", "t4"),
        result("r2", "a2", "t2", "t3"),
    ];
    let c = build_chain(&recs, None).expect("chain");
    assert_eq!(uuids(&c), ["p", "a1", "a2", "r1", "r2"]);
    // leaf r1 (file order newest terminal is r2); branch via a1: a2 and r2 come back
    let c = build_chain_from(&recs, "r1", false).expect("chain");
    assert_eq!(uuids(&c), ["p", "a1", "a2", "r2", "r1"]);
    // R18: cut after the requested record
    let c = build_chain(&recs, Some("a1")).expect("chain");
    assert_eq!(uuids(&c), ["p", "a1"]);
}

#[test]
fn compaction_splices_preserved_segment() {
    let recs = vec![
        user("old", None, "old prompt"),
        asst(
            "keep",
            Some("old"),
            "m0",
            json!({"type":"text","text":"kept"}),
            "t1",
        ),
        json!({"type":"system","subtype":"compact_boundary","uuid":"cb","parentUuid":null,
               "compactMetadata":{"preservedSegment":{"headUuid":"keep","anchorUuid":"sum","tailUuid":"keep"}}}),
        user("sum", Some("cb"), "summary"),
        user("next", Some("keep"), "after"),
    ];
    // `next` is a child of `keep` (the tail): leaf choice picks it, and the
    // walk goes next -> keep -> old; no boundary on that chain.
    let c = build_chain(&recs, None).expect("chain");
    assert_eq!(uuids(&c), ["old", "keep", "next"]);
    // R18 at the summary: the splice lands after the cut point.
    let c = build_chain(&recs, Some("sum")).expect("chain");
    assert_eq!(uuids(&c), ["cb", "sum"]);
    let c = build_chain_from(&recs, "sum", false).expect("chain");
    assert_eq!(uuids(&c), ["cb", "sum", "keep"]);
    let mut recs2 = recs.clone();
    recs2[4] = user("next", Some("sum"), "after");
    let c = build_chain(&recs2, None).expect("chain");
    assert_eq!(uuids(&c), ["cb", "sum", "keep", "next"]);
}

#[test]
fn legacy_progress_records_are_bridged() {
    let recs = vec![
        user("a", None, "hi"),
        json!({"type":"progress","uuid":"p1","parentUuid":"a","data":{"type":"hook_progress"}}),
        json!({"type":"progress","uuid":"p2","parentUuid":"p1","data":{"type":"hook_progress"}}),
        asst(
            "b",
            Some("p2"),
            "m",
            json!({"type":"text","text":"yo"}),
            "t2",
        ),
    ];
    assert_eq!(pick_leaf(&recs).as_deref(), Some("b"));
    assert_eq!(uuids(&build_chain(&recs, None).expect("chain")), ["a", "b"]);
}

#[test]
fn subset_gives_same_answer() {
    let recs = vec![
        user("p", None, "go"),
        user("unrelated", None, "other branch"),
        asst(
            "a1",
            Some("p"),
            "m",
            json!({"type":"tool_use","id":"t1","name":"X","input":{}}),
            "t1",
        ),
        asst(
            "a2",
            Some("a1"),
            "m",
            json!({"type":"tool_use","id":"t2","name":"X","input":{}}),
            "t2",
        ),
        result("r1", "a1", "t1", "t4"),
        result("r2", "a2", "t2", "t3"),
    ];
    let full = build_chain_from(&recs, "r2", false).expect("full");
    let subset: Vec<Value> = recs
        .iter()
        .filter(|r| r["uuid"] != "unrelated")
        .cloned()
        .collect();
    assert_eq!(
        full,
        build_chain_from(&subset, "r2", false).expect("subset")
    );
}

/// A record at second `sec` of a fixed minute, with a parsable timestamp.
fn at(u: &str, p: Option<&str>, sec: u32) -> Value {
    json!({"type":"user","uuid":u,"parentUuid":p,
           "timestamp":format!("2026-01-01T00:00:{sec:02}.000Z"),
           "message":{"role":"user","content":u}})
}

#[test]
fn a_missing_parent_continues_from_the_record_just_before_in_time() {
    // "c" names "gone", which is not in the file: the CLI goes on with the newest
    // record not after "c" (here "b", 2 s older), and from there by its parent.
    let recs = vec![
        at("a", None, 1),
        at("b", Some("a"), 3),
        at("c", Some("gone"), 5),
    ];
    assert_eq!(
        uuids(&build_chain(&recs, Some("c")).expect("chain")),
        ["a", "b", "c"]
    );
}

#[test]
fn a_missing_parent_ends_the_walk_when_the_gap_is_over_five_seconds() {
    let recs = vec![at("a", None, 1), at("c", Some("gone"), 7)];
    assert_eq!(uuids(&build_chain(&recs, Some("c")).expect("chain")), ["c"]);
    let recs = vec![at("a", None, 2), at("c", Some("gone"), 7)];
    assert_eq!(
        uuids(&build_chain(&recs, Some("c")).expect("chain")),
        ["a", "c"]
    );
}

#[test]
fn the_fallback_skips_walked_records_snapshots_and_other_sides() {
    let mut snapshot = at("snap", None, 4);
    snapshot["type"] = json!("system");
    snapshot["subtype"] = json!("file_snapshot");
    let mut other_side = at("other", None, 4);
    other_side["isSidechain"] = json!(false);
    // Equal times: the first in file order wins ("b1" before "b2").
    let recs = vec![
        at("a", None, 1),
        at("b1", Some("a"), 3),
        at("b2", Some("a"), 3),
        snapshot,
        other_side,
        at("c", Some("gone"), 5),
        at("d", Some("c"), 5),
    ];
    assert_eq!(
        uuids(&build_chain(&recs, Some("d")).expect("chain")),
        ["a", "b1", "c", "d"]
    );
}

#[test]
fn a_cycle_continues_by_time_like_a_missing_parent() {
    // "c" names "d", already walked: the walk goes on by time instead of stopping.
    let recs = vec![
        at("a", None, 1),
        at("c", Some("d"), 3),
        at("d", Some("c"), 4),
    ];
    assert_eq!(
        uuids(&build_chain(&recs, Some("d")).expect("chain")),
        ["a", "c", "d"]
    );
}
