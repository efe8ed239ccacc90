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

/// A transcript held in memory whose columns are the envelope's fields, as import stores
/// them; counts the lines read.
struct InMemory {
    lines: Vec<String>,
    kept: KeptLines,
    read: usize,
}

impl InMemory {
    fn envelope(&self, row: i64) -> Option<Envelope<'_>> {
        let (status, env) = Envelope::parse(self.lines[row as usize - 1].as_bytes());
        let entry = ["user", "assistant", "progress", "system", "attachment"];
        (status == LineStatus::Record && env.kind.as_deref().is_some_and(|k| entry.contains(&k)))
            .then_some(env)
    }
}

impl SdkSource for InMemory {
    fn main_transcript(&mut self, _: &SessionRef) -> Result<Option<i64>> {
        Ok(Some(1))
    }

    fn entry_lines(&mut self, _: i64, each: &mut dyn FnMut(i64, &[u8])) -> Result<()> {
        self.kept.clear();
        for row in 1..=self.lines.len() as i64 {
            if self.envelope(row).is_some() {
                self.read += 1;
                let line = self.lines[row as usize - 1].clone();
                each(row, line.as_bytes());
                self.kept.keep(row, line.as_bytes());
            }
        }
        Ok(())
    }

    fn entry_columns(&mut self, _: i64) -> Result<Vec<EntryColumns>> {
        self.kept.clear();
        Ok((1..=self.lines.len() as i64)
            .filter_map(|row| {
                let env = self.envelope(row)?;
                Some(EntryColumns {
                    row,
                    kind: env.kind?.into_owned(),
                    uuid: env.uuid?.into_owned(),
                    parent: env.parent_uuid.map(|p| p.into_owned()),
                    source_tool: env.source_tool_assistant_uuid.map(|s| s.into_owned()),
                })
            })
            .collect())
    }

    fn lines(&mut self, rows: &[i64], each: &mut dyn FnMut(usize, &[u8])) -> Result<()> {
        for (i, row) in rows.iter().enumerate() {
            if let Some(line) = self.kept.get(*row) {
                each(i, line);
                continue;
            }
            self.read += 1;
            let line = self.lines[*row as usize - 1].clone();
            each(i, line.as_bytes());
            self.kept.keep(*row, line.as_bytes());
        }
        Ok(())
    }

    fn subagents(&mut self, _: &SessionRef) -> Result<Vec<StoredSubagent>> {
        Ok(vec![StoredSubagent {
            transcript: 1,
            agent_id: "a".to_owned(),
            subpath: "subagents/agent-a".to_owned(),
            meta: None,
        }])
    }
}

/// A small random transcript with what the SDK's chain looks at drawn from few values:
/// parallel tool calls, results placed by parent, source or call id, unanswered calls,
/// calls claimed twice, sidechain, meta and team records, repeated uuids, odd types.
fn random_transcript(seed: u64) -> Vec<String> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let len = 1 + next(30) as usize;
    let mut uuids: Vec<String> = Vec::new();
    let mut lines = Vec::new();
    for i in 0..len {
        let uuid = if !uuids.is_empty() && next(20) == 0 {
            uuids[next(uuids.len() as u64) as usize].clone()
        } else {
            format!("u{i}")
        };
        let kind = [
            "user",
            "user",
            "user",
            "assistant",
            "assistant",
            "assistant",
            "progress",
            "system",
            "attachment",
            "summary",
        ][next(10) as usize];
        let mut fields = vec![format!(r#""type":"{kind}""#)];
        fields.push(match next(30) {
            0 => r#""uuid":7"#.to_owned(),
            _ => format!(r#""uuid":"{uuid}""#),
        });
        let pick = |next: &mut dyn FnMut(u64) -> u64| -> Option<String> {
            (!uuids.is_empty()).then(|| {
                if next(3) > 0 {
                    uuids[uuids.len() - 1].clone()
                } else {
                    uuids[next(uuids.len() as u64) as usize].clone()
                }
            })
        };
        match next(20) {
            0..=2 => fields.push(r#""parentUuid":null"#.to_owned()),
            3 => fields.push(r#""parentUuid":"""#.to_owned()),
            4 => fields.push(r#""parentUuid":"gone""#.to_owned()),
            _ => {
                if let Some(p) = pick(&mut next) {
                    fields.push(format!(r#""parentUuid":"{p}""#));
                }
            }
        }
        match next(25) {
            0..=2 => fields.push(r#""isSidechain":true"#.to_owned()),
            3 => fields.push(r#""isSidechain":"yes""#.to_owned()),
            _ => fields.push(r#""isSidechain":false"#.to_owned()),
        }
        if next(15) == 0 {
            fields.push(r#""isMeta":true"#.to_owned());
        }
        if next(25) == 0 {
            fields.push(r#""teamName":"t""#.to_owned());
        }
        if next(8) == 0 {
            fields.push(r#""agentId":"a1""#.to_owned());
        }
        if next(6) == 0 {
            if let Some(s) = pick(&mut next) {
                fields.push(format!(r#""sourceToolAssistantUUID":"{s}""#));
            }
        }
        fields.push(format!(r#""timestamp":"2025-01-0{}""#, next(4)));
        fields.push(r#""sessionId":"s""#.to_owned());
        let call = |next: &mut dyn FnMut(u64) -> u64| format!("t{}", next(6));
        let message = match kind {
            "assistant" => {
                let mut blocks = vec![r#"{"type":"text","text":"x"}"#.to_owned()];
                for _ in 0..next(3) {
                    blocks.push(format!(
                        r#"{{"type":"tool_use","id":"{}","input":{{}}}}"#,
                        call(&mut next)
                    ));
                }
                let id = match next(10) {
                    0 => String::new(),
                    _ => format!(r#""id":"m{}","#, next(4)),
                };
                format!(
                    r#"{{{id}"role":"assistant","content":[{}]}}"#,
                    blocks.join(",")
                )
            }
            "user" if next(3) > 0 => {
                let mut blocks = Vec::new();
                for _ in 0..1 + next(2) {
                    blocks.push(format!(
                        r#"{{"type":"tool_result","tool_use_id":"{}","content":"r"}}"#,
                        call(&mut next)
                    ));
                }
                format!(r#"{{"role":"user","content":[{}]}}"#, blocks.join(","))
            }
            _ => r#"{"role":"user","content":"hi"}"#.to_owned(),
        };
        fields.insert(
            next(fields.len() as u64 + 1) as usize,
            format!(r#""message":{message}"#),
        );
        if next(40) == 0 {
            fields.push(r#""type":"user""#.to_owned());
        }
        uuids.push(uuid);
        lines.push(format!("{{{}}}", fields.join(",")));
    }
    lines
}

/// The chain read from the columns and the lines that decide it
/// ([`entries_from_columns`]) is the chain read from every line, and reads fewer lines.
#[test]
fn chains_from_columns_are_the_chains_from_every_line() {
    let session = SessionRef {
        key: 1,
        project: "p".to_owned(),
        session_id: "s".to_owned(),
    };
    let (mut lazy, mut fewer) = (0, 0);
    for seed in 0..4_000 {
        let lines = random_transcript(seed);
        let mut src = InMemory {
            lines: lines.clone(),
            kept: KeptLines::default(),
            read: 0,
        };
        let entries = entries_of(&mut src, 1).expect("in memory");
        let full = messages_of(&mut src, &visible_chain(&entries), None, None).expect("in memory");
        let all_read = src.read;
        let mut src = InMemory {
            lines: lines.clone(),
            kept: KeptLines::default(),
            read: 0,
        };
        let ours = session_messages_with(&mut src, &session, None, 0).expect("in memory");
        assert_eq!(ours, full, "seed {seed}:\n{}", lines.join("\n"));
        let columns = entries_from_columns(&mut src, 1).expect("in memory");
        if columns
            .as_ref()
            .is_some_and(|e| chain::audited_visible_chain(e).is_some())
        {
            lazy += 1;
        }
        let mut src = InMemory {
            lines: lines.clone(),
            kept: KeptLines::default(),
            read: 0,
        };
        let _ = session_messages_with(&mut src, &session, None, 0);
        fewer += usize::from(src.read < all_read);
        // The sub-agent's chain.
        let chain: Vec<&Entry> = subagent_chain(&entries)
            .into_iter()
            .filter(|e| e.kind == "user" || e.kind == "assistant")
            .collect();
        let mut src = InMemory {
            lines: lines.clone(),
            kept: KeptLines::default(),
            read: 0,
        };
        let full = messages_of(&mut src, &chain, None, None).expect("in memory");
        let ours = subagent_messages_with(&mut src, &session, "a", None, 0).expect("in memory");
        assert_eq!(ours, full, "seed {seed} (sub-agent):\n{}", lines.join("\n"));
    }
    assert!(lazy > 2_000, "only {lazy} of 4000 chains from the columns");
    assert!(fewer > 1_000, "only {fewer} of 4000 read fewer lines");
}
