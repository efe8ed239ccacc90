//! Unit tests of the SDK readers (`super`), kept apart to keep that file short.

use super::parse::{message_of, python_strip};
use super::*;
use crate::jsonl::{Envelope, LineStatus};
use serde::Deserialize;

/// What a stored line gives, by the fast path and by a full parse of the whole line.
fn both_ways(line: &[u8]) -> [(String, Value); 2] {
    #[derive(Deserialize)]
    struct Only {
        #[serde(default)]
        message: Value,
    }
    let full_message = python_strip(line)
        .and_then(|t| serde_json::from_str::<Only>(t).ok())
        .map_or(Value::Null, |o| o.message);
    let fast = parse_stored_entry(line);
    let fast_message = fast
        .as_ref()
        .map_or_else(|| message_of(line), |e| e.message_in(line).into_value());
    // The full parse does not know where `message` is.
    let unplaced = fast.map(|e| Entry {
        message_at: None,
        ..e
    });
    [
        (format!("{unplaced:?}"), fast_message),
        (format!("{:?}", parse_entry(line)), full_message),
    ]
}

#[test]
fn stored_lines_read_by_fields_as_by_a_full_parse() {
    let lines: [&[u8]; 12] = [
        br#"{"type":"user","uuid":"u","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"a\\"}"}]},"toolUseResult":{"x":["]","}\\\\"]}}"#,
        br#"{"type":"assistant","uuid":"a","isSidechain":1,"teamName":"","message":{"id":"m","content":[{"type":"tool_use","id":"t"},"text",7]}}"#,
        br#"{"type":"user","uuid":"u","uuid":"v"}"#,
        br#"{"type":"user","uuid":"u","message":{"id":1,"id":2}}"#,
        br#"{"type":"user","uuid":"u","message":{"content":[{"type":"a","type":"b"}]}}"#,
        br#"{"type":"user","uuid":"u","message":"text"}"#,
        br#"{"type":"user","uuid":"u","message":{"content":{"type":"tool_result"}}}"#,
        br#"{"type":"user","uuid":"u","message":null,"parentUuid":null}"#,
        br#"{"t\u0079pe":"user","uuid":"u"}"#,
        b"\x1c {\"type\":\"system\",\"uuid\":\"s\",\"message\":{\"content\":[]}}\t\x1f",
        "\u{feff}{\"type\":\"user\",\"uuid\":\"u\"}".as_bytes(),
        "{\"type\":\"user\",\"uuid\":\"u\"}\u{a0}".as_bytes(),
    ];
    for line in lines {
        let [fast, full] = both_ways(line);
        assert_eq!(fast, full, "{}", String::from_utf8_lossy(line));
    }
}

/// Calls `each(where, line)` for every line of the corpus that import stores as a
/// record. A test that calls it is ignored without `../shared` (`sessiondb_shared`,
/// set by `tools/build.rs`), and fails here when run all the same.
fn for_each_corpus_record(mut each: impl FnMut(&str, &[u8])) -> bool {
    let corpus =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/claude-code");
    assert!(corpus.is_dir(), "../shared is missing");
    let mut files = vec![corpus];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            let entries = std::fs::read_dir(&path).expect("read the corpus");
            files.extend(entries.map(|e| e.expect("a corpus entry").path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let bytes = std::fs::read(&path).expect("read a corpus file");
        for (n, line) in jsonl::split_lines(&bytes).enumerate() {
            if Envelope::parse(line.bytes).0 == LineStatus::Record {
                each(&format!("{}:{}", path.display(), n + 1), line.bytes);
            }
        }
    }
    true
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn every_corpus_line_reads_by_fields_as_by_a_full_parse() {
    let mut compared = 0;
    let found = for_each_corpus_record(|at, line| {
        let [fast, full] = both_ways(line);
        assert_eq!(fast, full, "{at}");
        compared += 1;
    });
    assert!(
        !found || compared > 10_000,
        "only {compared} lines compared"
    );
}

/// `messages --json` writes each `message` from its stored text: for every record of
/// the corpus, the bytes are the ones the parsed value gives (at the indentation the
/// message has there), and most messages are copied rather than parsed.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn every_corpus_message_is_written_from_its_text_as_from_its_value() {
    let (mut compared, mut texts, mut copied) = (0, 0, 0);
    let found = for_each_corpus_record(|at, line| {
        let Some(entry) = parse_stored_entry(line) else {
            return;
        };
        let stored = entry.message_in(line);
        let write = |how: &dyn Fn(&mut Pretty<'_>)| {
            let mut out = Vec::new();
            let mut p = Pretty::new(&mut out);
            p.open(b'[');
            p.item(true);
            p.open(b'{');
            p.key(true, "message");
            how(&mut p);
            String::from_utf8(out).expect("UTF-8")
        };
        let ours = write(&|p| stored.write_pretty(p));
        let value = stored.clone().into_value();
        assert_eq!(ours, write(&|p| p.value(&value)), "{at}");
        let mut nested =
            serde_json::to_string_pretty(&[serde_json::json!({"message": value})]).expect("JSON");
        nested.truncate(nested.len() - "\n  }\n]".len());
        assert_eq!(ours, nested, "{at}: serde_json's bytes");
        compared += 1;
        if let MessageJson::Text(text) = &stored {
            texts += 1;
            copied += usize::from(Pretty::new(&mut Vec::new()).json_text(text));
        }
    });
    assert!(
        !found || compared > 10_000,
        "only {compared} messages compared"
    );
    assert!(
        !found || copied * 100 > texts * 99,
        "only {copied} of {texts} messages copied from their text"
    );
}

#[test]
fn paging_is_a_python_slice() {
    let v: Vec<i32> = (0..10).collect();
    assert_eq!(page(v.clone(), Some(5), 3), vec![3, 4, 5, 6, 7]);
    assert_eq!(page(v.clone(), Some(2), -3), vec![7, 8]);
    assert_eq!(page(v.clone(), Some(2), -1), Vec::<i32>::new());
    assert_eq!(page(v.clone(), None, 8), vec![8, 9]);
    assert_eq!(page(v.clone(), None, -1), v);
    assert_eq!(page(v.clone(), Some(0), 2), vec![2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(page(v.clone(), Some(3), 1000), Vec::<i32>::new());
}

fn entry(line: &str) -> Entry {
    parse_entry(line.as_bytes()).expect("an entry")
}

#[test]
fn leaf_prefers_main_records_and_returns_visible_ones() {
    let entries = vec![
        entry(r#"{"type":"user","uuid":"a","message":{"content":"hi"}}"#),
        entry(
            r#"{"type":"assistant","uuid":"b","parentUuid":"a","message":{"id":"m1","content":[]}}"#,
        ),
        entry(
            r#"{"type":"user","uuid":"s","parentUuid":"b","isSidechain":true,"message":{"content":"x"}}"#,
        ),
        entry(r#"{"type":"progress","uuid":"p","parentUuid":"b"}"#),
    ];
    let uuids: Vec<&str> = visible_chain(&entries)
        .into_iter()
        .map(|e| e.uuid.as_str())
        .collect();
    assert_eq!(uuids, ["a", "b"]);
    assert!(parse_entry(br#"{"type":"summary","uuid":"x"}"#).is_none());
    assert!(parse_entry(br#"{"type":"user","uuid":7}"#).is_none());
}
