//! A mutation fuzzer for sessiondb on stable Rust (issue 13, item 20).
//!
//! It takes seed transcripts (`tools/fuzz/seeds/`, the hand-made fixtures of
//! `tests/fixtures/`, and, when present, the corpus and oracle trees of `../shared`), mutates
//! them (bytes, tokens that broke parsers before, whole lines, JSON values, nesting), and
//! checks every mutant with `check.rs`: the line reader, projections and search text never
//! panic and give the bytes back; the pure resume never panics and its API view is valid
//! JSON. Every `--store-every` executions a random tree of mutants (several sessions, a
//! sub-agent file, a sidecar) goes through a real store: import → export must give the same
//! bytes, and resume must give valid JSON; every `--bin-every` executions also through the
//! binary (`resume --api` as a whole process).
//!
//! ```sh
//! cargo run --release --example fuzz -- --seconds 600 --execs 10000000 \
//!     --bin target/release/sessiondb --crashes target/fuzz-crashes
//! ```
//!
//! A failing input is written to the crashes folder (`crash-<hash>.jsonl`, or a folder for a
//! tree) and the run goes on. Move it to `tests/fixtures/fuzz/` to make it a regression test.

mod check;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Command-line settings.
struct Settings {
    seconds: u64,
    execs: u64,
    seed: u64,
    store_every: u64,
    bin_every: u64,
    bin: Option<PathBuf>,
    crashes: PathBuf,
    max_seed_bytes: usize,
}

fn settings() -> Settings {
    let mut s = Settings {
        seconds: 60,
        execs: u64::MAX,
        seed: 0x5e55_10db,
        store_every: 5000,
        bin_every: 20,
        bin: None,
        crashes: PathBuf::from("target/fuzz-crashes"),
        max_seed_bytes: 256 * 1024,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| usage(&format!("{flag} needs a value")))
        };
        let number = |v: String| {
            v.parse::<u64>()
                .unwrap_or_else(|_| usage(&format!("{v:?} is not a number")))
        };
        match flag.as_str() {
            "--seconds" => s.seconds = number(value()),
            "--execs" => s.execs = number(value()),
            "--seed" => s.seed = number(value()),
            "--store-every" => s.store_every = number(value()).max(1),
            "--bin-every" => s.bin_every = number(value()).max(1),
            "--bin" => s.bin = Some(PathBuf::from(value())),
            "--crashes" => s.crashes = PathBuf::from(value()),
            "--max-seed-bytes" => s.max_seed_bytes = number(value()) as usize,
            "-h" | "--help" => usage(""),
            other => usage(&format!("unknown argument {other:?}")),
        }
    }
    s
}

fn usage(problem: &str) -> ! {
    if !problem.is_empty() {
        eprintln!("fuzz: {problem}");
    }
    eprintln!(
        "usage: fuzz [--seconds N] [--execs N] [--seed N] [--store-every N] [--bin-every N]\n\
         \x20           [--bin PATH] [--crashes DIR] [--max-seed-bytes N]\n\
         --bin-every counts store checks: every Nth one also runs the binary."
    );
    std::process::exit(2)
}

/// xorshift64*: small, fast and reproducible from `--seed`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// Byte strings that broke JSON readers before, or that steer the chain walk.
const TOKENS: &[&[u8]] = &[
    b"\\ud83d",
    b"\\udc00",
    b"\\ud83d\\ude00",
    b"\\u0000",
    b"\xef\xbb\xbf",
    b"\r\n",
    b"\n",
    b"\0",
    b"\xff\xfe",
    b"\xc3",
    b"\"",
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"null",
    b"true",
    b"1e999",
    b"-0",
    b"12345678901234567890123",
    b"\"parentUuid\":null,",
    b"\"isSidechain\":true,",
    b"\"isCompactSummary\":true,",
    b"\"isMeta\":true,",
    b"\"type\":\"user\",",
    b"\"type\":\"assistant\",",
    b"\"type\":\"system\",\"subtype\":\"compact_boundary\",",
    b"\"type\":\"attachment\",",
    b"\"type\":\"progress\",",
    b"\"type\":\"summary\",\"summary\":\"s\",\"leafUuid\":\"x\",",
    b"\"logicalParentUuid\":\"x\",",
    b"\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"Task\",\"input\":{}}],",
    b"\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":\"r\"}],",
    b"\"content\":[{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}],",
    b"\"content\":\"\",",
    b"\"content\":[],",
    b"\"message\":null,",
];

/// Seed transcripts: whole files.
fn load_seeds(max_bytes: usize) -> Vec<Seed> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seeds = Vec::new();
    let dirs = [
        root.join("tools/fuzz/seeds"),
        root.join("tests/fixtures"),
        root.join("../shared/corpus/claude-code"),
        root.join("../shared/oracle/cases"),
        root.join("../shared/oracle/real/cases"),
    ];
    for dir in &dirs {
        collect_jsonl(dir, max_bytes, &mut seeds);
    }
    seeds.into_iter().map(Seed::new).collect()
}

fn collect_jsonl(dir: &Path, max_bytes: usize, out: &mut Vec<Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect_jsonl(&path, max_bytes, out);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            if let Ok(bytes) = std::fs::read(&path) {
                if !bytes.is_empty() && bytes.len() <= max_bytes {
                    out.push(bytes);
                }
            }
        }
    }
}

/// The lines of a file, each with its `\n` when it had one.
fn lines(buf: &[u8]) -> Vec<Vec<u8>> {
    buf.split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

/// One random change to `buf`; `seeds` give lines to splice in.
fn mutate_once(rng: &mut Rng, buf: &mut Vec<u8>, seeds: &[Seed]) {
    match rng.below(11) {
        0 if !buf.is_empty() => {
            let i = rng.below(buf.len());
            buf[i] ^= 1 << rng.below(8);
        }
        1 => {
            let token = TOKENS[rng.below(TOKENS.len())];
            let i = rng.below(buf.len() + 1);
            buf.splice(i..i, token.iter().copied());
        }
        2 if !buf.is_empty() => {
            let i = rng.below(buf.len());
            let n = (rng.below(32) + 1).min(buf.len() - i);
            buf.drain(i..i + n);
        }
        3 | 4 => {
            let mut ls = lines(buf);
            if ls.is_empty() {
                return;
            }
            let i = rng.below(ls.len());
            match rng.below(4) {
                0 => {
                    let dup = ls[i].clone();
                    ls.insert(rng.below(ls.len() + 1), dup);
                }
                1 => {
                    let j = rng.below(ls.len());
                    ls.swap(i, j);
                }
                2 => {
                    ls.remove(i);
                }
                _ => {
                    let from = lines(&pick(rng, seeds));
                    if !from.is_empty() {
                        ls.insert(i, from[rng.below(from.len())].clone());
                    }
                }
            }
            *buf = ls.concat();
        }
        5 | 6 => mutate_json(rng, buf),
        7 => {
            // Nest a line's value deeper than serde_json's recursion limit.
            let depth = 100 + rng.below(200);
            let mut ls = lines(buf);
            if ls.is_empty() {
                return;
            }
            let i = rng.below(ls.len());
            let mut line = ls[i].clone();
            let newline = line.last() == Some(&b'\n');
            if newline {
                line.pop();
            }
            if let Some(pos) = line.iter().rposition(|&b| b == b'}') {
                let mut nested = b"\"deep\":".to_vec();
                nested.extend(std::iter::repeat_n(b'[', depth));
                nested.extend(std::iter::repeat_n(b']', depth));
                if line.len() > 2 {
                    nested.insert(0, b',');
                }
                line.splice(pos..pos, nested);
            }
            if newline {
                line.push(b'\n');
            }
            ls[i] = line;
            *buf = ls.concat();
        }
        8 if !buf.is_empty() => {
            let n = rng.below(buf.len());
            buf.truncate(n);
        }
        9 if !buf.is_empty() => {
            // Cut inside a string: what an interrupted writer leaves.
            let other = pick(rng, seeds);
            if other.is_empty() {
                return;
            }
            let i = rng.below(buf.len());
            let j = rng.below(other.len());
            buf.truncate(i);
            buf.extend_from_slice(&other[j..]);
        }
        _ => {
            // A lone surrogate inside a string value, as JavaScript writes a cut emoji.
            if let Some(pos) = find_string_position(rng, buf) {
                let s: &[u8] = if rng.chance(2) {
                    b"\\ud83d"
                } else {
                    b"\\ude00"
                };
                buf.splice(pos..pos, s.iter().copied());
            }
        }
    }
}

/// A position just after some quote of `buf` (a string's first character, mostly).
fn find_string_position(rng: &mut Rng, buf: &[u8]) -> Option<usize> {
    if buf.is_empty() {
        return None;
    }
    let from = rng.below(buf.len());
    buf[from..]
        .iter()
        .position(|&b| b == b'"')
        .map(|i| from + i + 1)
}

/// A change to one line's JSON value: a uuid link moved, a key dropped, a type changed, a
/// string replaced; then the line is written back compactly.
fn mutate_json(rng: &mut Rng, buf: &mut Vec<u8>) {
    let mut ls = lines(buf);
    if ls.is_empty() {
        return;
    }
    let uuids: Vec<String> = ls
        .iter()
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .filter_map(|v| v.get("uuid").and_then(|u| u.as_str()).map(str::to_owned))
        .collect();
    let i = rng.below(ls.len());
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&ls[i]) else {
        return;
    };
    let Some(obj) = value.as_object_mut() else {
        return;
    };
    const TYPES: &[&str] = &[
        "user",
        "assistant",
        "system",
        "attachment",
        "progress",
        "summary",
        "custom-title",
        "tag",
        "file-history-snapshot",
        "content-replacement",
        "queue-operation",
        "x-unknown",
    ];
    match rng.below(6) {
        0 if !uuids.is_empty() => {
            let u = uuids[rng.below(uuids.len())].clone();
            obj.insert("parentUuid".into(), u.into());
        }
        1 if !uuids.is_empty() => {
            let u = uuids[rng.below(uuids.len())].clone();
            obj.insert("uuid".into(), u.into());
        }
        2 => {
            let keys: Vec<String> = obj.keys().cloned().collect();
            if !keys.is_empty() {
                obj.remove(&keys[rng.below(keys.len())]);
            }
        }
        3 => {
            obj.insert("type".into(), TYPES[rng.below(TYPES.len())].into());
        }
        4 => {
            obj.insert("isSidechain".into(), rng.chance(2).into());
        }
        _ => {
            let keys: Vec<String> = obj.keys().cloned().collect();
            if !keys.is_empty() {
                let k = keys[rng.below(keys.len())].clone();
                let replacement = match rng.below(4) {
                    0 => serde_json::Value::Null,
                    1 => serde_json::Value::from(""),
                    2 => serde_json::json!([]),
                    _ => serde_json::json!({"type": "text", "text": " "}),
                };
                obj.insert(k, replacement);
            }
        }
    }
    let newline = ls[i].last() == Some(&b'\n');
    let mut line = serde_json::to_vec(&value).expect("a value serializes");
    if newline {
        line.push(b'\n');
    }
    ls[i] = line;
    *buf = ls.concat();
}

/// A seed file and where its lines start.
struct Seed {
    bytes: Vec<u8>,
    starts: Vec<usize>,
}

impl Seed {
    fn new(bytes: Vec<u8>) -> Seed {
        let starts = std::iter::once(0)
            .chain(memchr_all(&bytes).map(|i| i + 1))
            .filter(|&i| i < bytes.len())
            .collect();
        Seed { bytes, starts }
    }
}

/// A seed to mutate: mostly a window of up to 12 consecutive lines of a seed file (up to
/// 16 KiB, so the chain links inside it mostly hold and an execution stays cheap), now and
/// then the whole file.
fn pick(rng: &mut Rng, seeds: &[Seed]) -> Vec<u8> {
    let seed = &seeds[rng.below(seeds.len())];
    if rng.chance(1024) {
        return seed.bytes.clone();
    }
    let start = seed.starts[rng.below(seed.starts.len())];
    let mut out = Vec::new();
    for line in seed.bytes[start..]
        .split_inclusive(|&b| b == b'\n')
        .take(rng.below(12) + 1)
    {
        if out.len() + line.len() > 16 * 1024 && !out.is_empty() {
            break;
        }
        out.extend_from_slice(&line[..line.len().min(64 * 1024)]);
    }
    out
}

/// Positions of every `\n` in `buf`.
fn memchr_all(buf: &[u8]) -> impl Iterator<Item = usize> + '_ {
    buf.iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .map(|(i, _)| i)
}

fn mutant(rng: &mut Rng, seeds: &[Seed]) -> Vec<u8> {
    let mut buf = pick(rng, seeds);
    for _ in 0..=rng.below(4) {
        mutate_once(rng, &mut buf, seeds);
    }
    buf
}

/// A random projects tree of mutants: one or two projects, one to three sessions, sometimes
/// a sub-agent transcript with its sidecar and a tool-result file.
fn random_tree(rng: &mut Rng, seeds: &[Seed]) -> check::Tree {
    let mut tree = check::Tree::new();
    for s in 0..=rng.below(3) {
        let project = format!("-fuzz-project-{}", rng.below(2));
        let session = format!(
            "00000000-0000-4000-8000-{:012x}",
            rng.next() >> 16 | s as u64
        );
        tree.insert(format!("{project}/{session}.jsonl"), mutant(rng, seeds));
        if rng.chance(3) {
            let agent = format!("{project}/{session}/subagents/agent-a{s}");
            tree.insert(format!("{agent}.jsonl"), mutant(rng, seeds));
            tree.insert(
                format!("{agent}.meta.json"),
                br#"{"agentType":"general-purpose","description":"fuzz"}"#.to_vec(),
            );
        }
        if rng.chance(4) {
            tree.insert(
                format!("{project}/{session}/tool-results/t{s}.txt"),
                mutant(rng, seeds),
            );
        }
    }
    tree
}

fn hash_of(bytes: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

fn save_file(dir: &Path, bytes: &[u8], why: &str) {
    let path = dir.join(format!("crash-{:016x}.jsonl", hash_of(bytes)));
    if std::fs::create_dir_all(dir).is_ok() && std::fs::write(&path, bytes).is_ok() {
        eprintln!("fuzz: {why}; input saved to {}", path.display());
    }
}

fn save_tree(dir: &Path, tree: &check::Tree, why: &str) {
    let mut all = Vec::new();
    for (k, v) in tree {
        all.extend_from_slice(k.as_bytes());
        all.extend_from_slice(v);
    }
    let root = dir.join(format!("crash-tree-{:016x}", hash_of(&all)));
    for (rel, bytes) in tree {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::write(&path, bytes);
    }
    eprintln!("fuzz: {why}; tree saved to {}", root.display());
}

fn main() {
    let s = settings();
    let seeds = load_seeds(s.max_seed_bytes);
    if seeds.is_empty() {
        eprintln!("fuzz: no seed transcripts found");
        std::process::exit(1);
    }
    // Failures are reported once, by the harness, with the saved input's path.
    let last_panic = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let slot = last_panic.clone();
    std::panic::set_hook(Box::new(move |info| {
        if let Ok(mut m) = slot.lock() {
            *m = info.to_string();
        }
    }));
    let panic_message = || last_panic.lock().map(|m| m.clone()).unwrap_or_default();

    let mut rng = Rng(s.seed | 1);
    let started = Instant::now();
    let budget = Duration::from_secs(s.seconds);
    let (mut execs, mut store_checks, mut bin_checks, mut failures) = (0u64, 0u64, 0u64, 0u64);
    let scratch = tempfile::tempdir().expect("scratch folder");
    eprintln!(
        "fuzz: {} seeds, budget {} s, seed {}",
        seeds.len(),
        s.seconds,
        s.seed
    );
    while execs < s.execs && started.elapsed() < budget {
        let input = mutant(&mut rng, &seeds);
        execs += 1;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            check::check_lines(&input);
            check::check_resume_pure(&input);
        }));
        if outcome.is_err() {
            failures += 1;
            save_file(&s.crashes, &input, &panic_message());
        }
        if execs % s.store_every == 0 {
            store_checks += 1;
            let tree = random_tree(&mut rng, &seeds);
            let with_bin = s.bin.as_deref().filter(|_| store_checks % s.bin_every == 0);
            bin_checks += u64::from(with_bin.is_some());
            let dir = scratch.path().join(store_checks.to_string());
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                check::check_store(&dir, &tree, with_bin)
            }));
            if outcome.is_err() {
                failures += 1;
                save_tree(&s.crashes, &tree, &panic_message());
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
        if execs % 1_000_000 == 0 {
            eprintln!(
                "fuzz: {execs} executions, {store_checks} store checks, {failures} failures, {:.0} s",
                started.elapsed().as_secs_f64()
            );
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{execs} executions ({:.0}/s), {store_checks} store checks ({bin_checks} through the binary), {failures} failures, {secs:.0} s",
        execs as f64 / secs
    );
    if failures > 0 {
        std::process::exit(1);
    }
}
