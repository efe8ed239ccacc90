//! The resume benchmark of issue 3: `cargo bench --bench resume`.
//!
//! 1. Imports `../shared/corpus/claude-code` and resumes its largest session (API view
//!    included), reporting the median of repeated runs.
//! 2. Generates a ~100 MB session (`$SESSIONDB_BENCH_SESSION_MB`, default 100) shaped like
//!    a long real one: turns of a prompt, a two-record assistant reply (text + tool_use),
//!    a ~1.5 KB tool result and a closing reply, with a compaction every ~10 MB, so the live
//!    chain after the last boundary is about a tenth of the file. It reports the resume
//!    time and how many records were parsed (memory follows the chain, not the file).
//! 3. When python3 can import `claude_agent_sdk`, times the SDK's `get_session_messages`
//!    on the same largest corpus file in the same run (tools/sdk_messages_timing.py) and
//!    prints the ratio.

use sessiondb::resume::ResumeOptions;
use sessiondb::{import::import_paths, model::NoProgress, query, Store};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn median_ms(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    samples[samples.len() / 2]
}

fn time_resume(store: &Store, arg: &str, runs: usize) -> (f64, usize, usize) {
    let session =
        query::resolve_session(&store.reader().expect("reader"), arg).expect("the session");
    let mut samples = Vec::new();
    let (mut records, mut messages) = (0, 0);
    for _ in 0..runs {
        let started = Instant::now();
        let resumed = store
            .resume(&session, &ResumeOptions::default())
            .expect("resume");
        records = resumed.messages.len();
        // As `resume --api` does.
        let view = resumed.into_api_view();
        samples.push(started.elapsed().as_secs_f64() * 1e3);
        messages = view.len();
    }
    (median_ms(samples), records, messages)
}

fn main() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/claude-code");
    if corpus.is_dir() {
        let store = Store::open(scratch.path().join("corpus.db")).expect("open");
        import_paths(&store, std::slice::from_ref(&corpus), &NoProgress).expect("import");
        let largest = std::fs::read_dir(&corpus)
            .expect("corpus")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
            .expect("a corpus file");
        let size = std::fs::metadata(&largest).expect("stat").len();
        let stem = largest
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let (ms, records, messages) = time_resume(&store, &format!("claude-code/{stem}"), 31);
        println!(
            "largest corpus session: {stem} ({:.1} MB): resume + API view {ms:.2} ms median \
             ({records} records, {messages} API messages); target <= 15 ms",
            size as f64 / 1e6
        );
        sdk_comparison(&largest, ms);
    } else {
        println!("../shared/corpus is missing: skipping the corpus session");
    }

    let mb: usize = std::env::var("SESSIONDB_BENCH_SESSION_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let project = scratch.path().join("projects").join("-bench");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("b0000000-0000-4000-8000-000000000100.jsonl");
    let bytes = generate_session(&file, mb * 1_000_000);
    let store = Store::open(scratch.path().join("big.db")).expect("open");
    import_paths(&store, std::slice::from_ref(&file), &NoProgress).expect("import");
    let (ms, records, messages) = time_resume(&store, "-bench/b0000000", 21);
    println!(
        "generated session ({:.1} MB, compaction every ~10 MB): resume + API view {ms:.1} ms \
         median ({records} records parsed on the live chain, {messages} API messages); \
         target <= 300 ms",
        bytes as f64 / 1e6
    );
    phases(&store, "-bench/b0000000", 21);
}

/// Medians of resume's steps, to tell where the time goes: the leaf choice, the SQL gather
/// (walk, neighbours, parsing the gathered lines) and the pure chain + repair.
fn phases(store: &Store, arg: &str, runs: usize) {
    use sessiondb::resume::{api, gather};
    let conn = store.reader().expect("reader");
    let session = query::resolve_session(&conn, arg).expect("the session");
    let transcript: i64 = conn
        .query_row(
            "SELECT id FROM transcripts WHERE session_id = ?1 AND subpath = '' \
             AND superseded_at IS NULL",
            [session.key],
            |r| r.get(0),
        )
        .expect("the main transcript");
    let (mut leaf_ms, mut gather_ms, mut chain_ms) = (vec![], vec![], vec![]);
    for _ in 0..runs {
        let started = Instant::now();
        let leaf = gather::pick_leaf(&conn, transcript)
            .expect("leaf")
            .expect("a leaf");
        leaf_ms.push(started.elapsed().as_secs_f64() * 1e3);
        let started = Instant::now();
        let records =
            gather::gather(&conn, transcript, &leaf, false, gather::Records::Full).expect("gather");
        gather_ms.push(started.elapsed().as_secs_f64() * 1e3);
        let started = Instant::now();
        let options = api::ApiOptions {
            interactive: false,
            at: None,
            resume_interrupted_turn: false,
            leaf: Some(leaf),
            ..api::ApiOptions::default()
        };
        let conversation = api::load_conversation_owned(records, &options).expect("chain");
        chain_ms.push(started.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(conversation);
    }
    let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "  its steps, median (best): leaf {:.1} ({:.1}) ms, gather {:.1} ({:.1}) ms, \
         chain + repair {:.1} ({:.1}) ms",
        median_ms(leaf_ms.clone()),
        best(&leaf_ms),
        median_ms(gather_ms.clone()),
        best(&gather_ms),
        median_ms(chain_ms.clone()),
        best(&chain_ms)
    );
}

/// Times the Agent SDK on the same file when it is installed, and prints the ratio.
fn sdk_comparison(file: &Path, ours_ms: f64) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/sdk_messages_timing.py");
    let python = std::env::var("SESSIONDB_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = std::process::Command::new(&python)
        .arg(&script)
        .arg(file)
        .arg("11")
        .output();
    match out {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            match text.trim().parse::<f64>() {
                Ok(sdk_ms) => println!(
                    "Agent SDK get_session_messages on the same file: {sdk_ms:.1} ms median; \
                     sessiondb is {:.1}x faster (goal >= 10x)",
                    sdk_ms / ours_ms
                ),
                Err(_) => println!("SDK timing printed {text:?}"),
            }
        }
        Ok(out) => println!(
            "Agent SDK comparison skipped: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ),
        Err(e) => println!("Agent SDK comparison skipped: {python}: {e}"),
    }
}

/// Writes a long session with compactions; returns its size.
fn generate_session(path: &PathBuf, target: usize) -> usize {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let session = "b0000000-0000-4000-8000-000000000100";
    let filler = "lorem ipsum dolor sit amet ".repeat(55);
    let (mut written, mut n, mut parent) = (0usize, 0usize, None::<String>);
    let mut since_compaction = 0usize;
    let line = |out: &mut std::io::BufWriter<std::fs::File>, value: serde_json::Value| {
        let text = value.to_string();
        out.write_all(text.as_bytes()).expect("write");
        out.write_all(b"\n").expect("write");
        text.len() + 1
    };
    while written < target {
        let next = |n: &mut usize| {
            *n += 1;
            format!("00000000-0000-4000-8000-{:012}", *n)
        };
        let ts = |n: usize| {
            format!(
                "2026-01-01T{:02}:{:02}:{:02}.000Z",
                (n / 3600) % 24,
                (n / 60) % 60,
                n % 60
            )
        };
        if since_compaction > 10_000_000 {
            let boundary = next(&mut n);
            let size = line(
                &mut out,
                serde_json::json!({"parentUuid": null, "logicalParentUuid": parent,
                "isSidechain": false, "type": "system", "subtype": "compact_boundary",
                "compactMetadata": {"trigger": "auto", "preTokens": 150000}, "uuid": boundary,
                "timestamp": ts(n), "sessionId": session}),
            );
            let summary = next(&mut n);
            let size2 = line(
                &mut out,
                serde_json::json!({"parentUuid": boundary, "isSidechain": false,
                "type": "user", "isCompactSummary": true, "message": {"role": "user",
                "content": format!("This session is being continued from a previous conversation. Summary: {filler}")},
                "uuid": summary, "timestamp": ts(n), "sessionId": session}),
            );
            written += size + size2;
            parent = Some(summary);
            since_compaction = 0;
        }
        let prompt = next(&mut n);
        let mut turn = line(
            &mut out,
            serde_json::json!({"parentUuid": parent, "isSidechain": false,
            "type": "user", "message": {"role": "user", "content": format!("step {n}: please continue")},
            "uuid": prompt, "timestamp": ts(n), "sessionId": session}),
        );
        let text = next(&mut n);
        turn += line(
            &mut out,
            serde_json::json!({"parentUuid": prompt, "isSidechain": false,
            "type": "assistant", "message": {"id": format!("msg_{n}"), "role": "assistant",
            "content": [{"type": "text", "text": "Running the tests."}]},
            "uuid": text, "timestamp": ts(n), "sessionId": session}),
        );
        let tool = next(&mut n);
        turn += line(
            &mut out,
            serde_json::json!({"parentUuid": text, "isSidechain": false,
            "type": "assistant", "message": {"id": format!("msg_{}", n - 1), "role": "assistant",
            "content": [{"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash",
            "input": {"command": "cargo test"}}]},
            "uuid": tool, "timestamp": ts(n), "sessionId": session}),
        );
        let result = next(&mut n);
        turn += line(
            &mut out,
            serde_json::json!({"parentUuid": tool, "isSidechain": false,
            "type": "user", "sourceToolAssistantUUID": tool, "message": {"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{}", n - 1), "content": filler}]},
            "uuid": result, "timestamp": ts(n), "sessionId": session}),
        );
        let reply = next(&mut n);
        turn += line(
            &mut out,
            serde_json::json!({"parentUuid": result, "isSidechain": false,
            "type": "assistant", "message": {"id": format!("msg_{n}"), "role": "assistant",
            "content": [{"type": "text", "text": "All tests pass."}]},
            "uuid": reply, "timestamp": ts(n), "sessionId": session}),
        );
        parent = Some(reply);
        written += turn;
        since_compaction += turn;
    }
    out.flush().expect("flush");
    written
}
