//! SDK equivalence: the projects tree of `../shared/oracle/sdk/manifest.json` is rebuilt in a
//! temporary folder, imported, and every answer of the catalog and of `sdk::*` is compared
//! with the goldens of Anthropic's Python Agent SDK (`list_sessions`, `get_session_info`,
//! `get_session_messages`, `list_subagents`, `get_subagent_messages`, `rename_session`,
//! `tag_session`).
//!
//! Every difference must be in [`KNOWN_DIFFERENCES`] (also in the README), and every entry
//! there must still occur: sessiondb reads whole sessions as JSON where the SDK reads two
//! 64 KiB windows of text.
//!
//! `SESSIONDB_SDK_ORACLE` points the test at another goldens folder of the same layout
//! (`SESSIONDB_SDK_HOLDOUT` is then the root of its `holdout` corpus); differences found
//! there are printed, and must be of the kinds the table explains.

use crate::support;
use serde_json::{json, Map, Value};
use sessiondb::model::SessionRef;
use sessiondb::query::{self, SessionFilter};
use sessiondb::{export, metadata, sdk, Store};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const NESTED_TIMESTAMP: &str = "SDK: the first \"timestamp\" text of the 64 KiB head, which is \
    the nested snapshot.timestamp of a file-history-snapshot; sessiondb: the first record's own timestamp";
const FOREIGN_SUMMARY: &str = "SDK: the last \"summary\" text of the tail, a summary record whose \
    leafUuid is not in this session (another session's summary); sessiondb skips it";
const ONLY_FOREIGN_SUMMARIES: &str = "SDK: lists a file whose only title is another session's \
    summary record; sessiondb finds no title, prompt or summary of its own, so hides it";
const NO_PROMPT_IN_HEAD: &str = "SDK: the 64 KiB head holds only tool results and the summaries \
    are outside the tail, so a 457-message session is hidden; sessiondb finds its first prompt";
const SUMMARY_OUTSIDE_TAIL: &str = "SDK: the session's own summary record is at the top of a \
    4 MB file, outside the 64 KiB tail; sessiondb reads it";
const GLUED_APPEND: &str = "SDK: appends to a file without a final newline by gluing its line onto \
    the last record, which then no longer parses (one message lost); sessiondb ends that line first";

/// Every difference between the SDK's answers and sessiondb's on the shared goldens:
/// (session, field, SDK value, sessiondb value, reason), values as JSON text. Fields
/// starting with `after` are read after `rename_session` / `tag_session`.
pub const KNOWN_DIFFERENCES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "062a8bdd-4322-4ffa-bc38-3e8b8bfb5a56",
        "created_at",
        "1770076790533",
        "1770076784568",
        NESTED_TIMESTAMP,
    ),
    (
        "0fae0449-64d3-4788-8622-d3a47d82c14b",
        "listed",
        "false",
        "true",
        NO_PROMPT_IN_HEAD,
    ),
    (
        "1b2c0332-e2dc-459f-88b9-1aad6e941e18",
        "summary",
        "\"This session is being continued from a previous conversation that ran out of context. The conversation is summarized below: Analysis: The conversation involves setting up and running a ZFS-based LiveC…\"",
        "\"Debugging Python Web Scraper with Selenium and BeautifulSoup\"",
        SUMMARY_OUTSIDE_TAIL,
    ),
    (
        "3a782158-6c7c-4d4d-9c73-eae031da5b18",
        "created_at",
        "1767719014818",
        "1767719014442",
        NESTED_TIMESTAMP,
    ),
    (
        "4734107e-ab8b-4034-bb65-423eaf94d5ba",
        "listed",
        "true",
        "false",
        ONLY_FOREIGN_SUMMARIES,
    ),
    (
        "5a3bb1c8-c3ce-466e-b487-24212cbf1da1",
        "after rename_session: created_at",
        "1768262439790",
        "1768262439236",
        NESTED_TIMESTAMP,
    ),
    (
        "5a3bb1c8-c3ce-466e-b487-24212cbf1da1",
        "after rename_session: file_size",
        "5897",
        "5898",
        GLUED_APPEND,
    ),
    (
        "5a3bb1c8-c3ce-466e-b487-24212cbf1da1",
        "after rename_session: message_count",
        "3",
        "4",
        GLUED_APPEND,
    ),
    (
        "5a3bb1c8-c3ce-466e-b487-24212cbf1da1",
        "after tag_session(None): created_at",
        "1768262439790",
        "1768262439236",
        NESTED_TIMESTAMP,
    ),
    (
        "5a3bb1c8-c3ce-466e-b487-24212cbf1da1",
        "after tag_session(None): file_size",
        "6052",
        "6053",
        GLUED_APPEND,
    ),
    (
        "5a3bb1c8-c3ce-466e-b487-24212cbf1da1",
        "after tag_session(None): message_count",
        "3",
        "4",
        GLUED_APPEND,
    ),
    (
        "5a3bb1c8-c3ce-466e-b487-24212cbf1da1",
        "after tag_session(set): created_at",
        "1768262439790",
        "1768262439236",
        NESTED_TIMESTAMP,
    ),
    (
        "5a3bb1c8-c3ce-466e-b487-24212cbf1da1",
        "after tag_session(set): file_size",
        "5977",
        "5978",
        GLUED_APPEND,
    ),
    (
        "5a3bb1c8-c3ce-466e-b487-24212cbf1da1",
        "after tag_session(set): message_count",
        "3",
        "4",
        GLUED_APPEND,
    ),
    (
        "5a3bb1c8-c3ce-466e-b487-24212cbf1da1",
        "created_at",
        "1768262439790",
        "1768262439236",
        NESTED_TIMESTAMP,
    ),
    (
        "5a3bb1c8-c3ce-466e-b487-24212cbf1da1",
        "summary",
        "\"Add session resume command to conflict message\"",
        "\"I am having problems if I start a claude session inside a folder while entire is enabled, becuase either is auto or manual mode, it is not creating checkpoints neither shadow branches. It only works i…\"",
        FOREIGN_SUMMARY,
    ),
    (
        "6b464920-7c9c-48b8-ac03-3fe804de8940",
        "after rename_session: created_at",
        "1774022168082",
        "1774022167757",
        NESTED_TIMESTAMP,
    ),
    (
        "6b464920-7c9c-48b8-ac03-3fe804de8940",
        "after tag_session(None): created_at",
        "1774022168082",
        "1774022167757",
        NESTED_TIMESTAMP,
    ),
    (
        "6b464920-7c9c-48b8-ac03-3fe804de8940",
        "after tag_session(set): created_at",
        "1774022168082",
        "1774022167757",
        NESTED_TIMESTAMP,
    ),
    (
        "6b464920-7c9c-48b8-ac03-3fe804de8940",
        "created_at",
        "1774022168082",
        "1774022167757",
        NESTED_TIMESTAMP,
    ),
    (
        "70d782f7-b303-4e48-9512-6bec16c37abd",
        "created_at",
        "1769639201871",
        "1769555616582",
        NESTED_TIMESTAMP,
    ),
    (
        "982581eb-41b9-46da-86c1-ac34168117a8",
        "summary",
        "\"Prerequisites Checking: Unveiling Hidden Requirements and Technical Nuances\"",
        "\"Summarize this part of a conversation in 2-3 sentences. What happened, what was built/discussed. Use <summary></summary> tags.  User: 1. try to be subtle  Agent: Creating subtler baseline tests where…\"",
        FOREIGN_SUMMARY,
    ),
    (
        "9a9eadc8-c1f1-493e-a0f1-884aa996b05b",
        "created_at",
        "1759891420858",
        "1759891420849",
        NESTED_TIMESTAMP,
    ),
    (
        "9b76dc0f-dc1b-4822-ac56-53cfa3fbc032",
        "created_at",
        "1770368176015",
        "1770368125552",
        NESTED_TIMESTAMP,
    ),
    (
        "9d5beed4-5d67-47fd-93b7-154b73dbffaf",
        "created_at",
        "1774029745011",
        "1774029744755",
        NESTED_TIMESTAMP,
    ),
    (
        "b00b80af-879f-4265-b95b-48db0938673c",
        "after rename_session: file_size",
        "3083076",
        "3083077",
        GLUED_APPEND,
    ),
    (
        "b00b80af-879f-4265-b95b-48db0938673c",
        "after rename_session: message_count",
        "289",
        "290",
        GLUED_APPEND,
    ),
    (
        "b00b80af-879f-4265-b95b-48db0938673c",
        "after tag_session(None): file_size",
        "3083231",
        "3083232",
        GLUED_APPEND,
    ),
    (
        "b00b80af-879f-4265-b95b-48db0938673c",
        "after tag_session(None): message_count",
        "289",
        "290",
        GLUED_APPEND,
    ),
    (
        "b00b80af-879f-4265-b95b-48db0938673c",
        "after tag_session(set): file_size",
        "3083156",
        "3083157",
        GLUED_APPEND,
    ),
    (
        "b00b80af-879f-4265-b95b-48db0938673c",
        "after tag_session(set): message_count",
        "289",
        "290",
        GLUED_APPEND,
    ),
    (
        "b4528cff-4805-571f-9796-4131c739ab17",
        "listed",
        "true",
        "false",
        ONLY_FOREIGN_SUMMARIES,
    ),
    (
        "c35cf82b-0486-4d17-94d7-7fa36376faff",
        "created_at",
        "1769097230495",
        "1769097230222",
        NESTED_TIMESTAMP,
    ),
    (
        "c9de1ad3-3355-4392-b91b-6fcf853be4b0",
        "summary",
        "\"Project Documentation Planning and Markdown Creation\"",
        "\"write an md doc detailing what this project does and what I should pay attention to, what the structure\"",
        FOREIGN_SUMMARY,
    ),
    (
        "cde341db-b80a-44f5-b0f2-94db2ef7a164",
        "created_at",
        "1768522461124",
        "1768522460168",
        NESTED_TIMESTAMP,
    ),
];

/// Fields that may differ on other goldens (`SESSIONDB_SDK_ORACLE`): those the SDK reads
/// from 64 KiB windows of text. Messages, sub-agents, ids, sizes and mtimes never may.
const WINDOW_FIELDS: &[&str] = &[
    "summary",
    "custom_title",
    "first_prompt",
    "git_branch",
    "cwd",
    "tag",
    "created_at",
    "listed",
];

struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
    oracle: PathBuf,
    projects: PathBuf,
    manifest: Value,
    shared_corpus: bool,
}

pub fn read_json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn oracle_dir() -> Option<(PathBuf, bool)> {
    if let Some(dir) = std::env::var_os("SESSIONDB_SDK_ORACLE") {
        return Some((PathBuf::from(dir), false));
    }
    let shared = support::shared_dir("the SDK goldens")?;
    let dir = shared.join("oracle/sdk");
    assert!(
        dir.join("manifest.json").is_file(),
        "{} is missing",
        dir.display()
    );
    Some((dir, true))
}

/// Rebuilds the projects tree of a manifest (what `rebuild_tree.py` does) under `root`.
pub fn rebuild_tree(oracle: &Path, manifest: &Value, root: &Path) -> PathBuf {
    let shared_parent = oracle.join("../../..");
    let mut roots: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (k, v) in manifest["corpus_roots"].as_object().expect("corpus_roots") {
        let p = PathBuf::from(v.as_str().expect("root"));
        roots.insert(
            k.clone(),
            if p.is_absolute() {
                p
            } else {
                shared_parent.join(p)
            },
        );
    }
    if let Some(holdout) = std::env::var_os("SESSIONDB_SDK_HOLDOUT") {
        roots.insert("holdout".into(), PathBuf::from(holdout));
    }
    let load = |src: &Value| -> Vec<u8> {
        let corpus = src["corpus"].as_str().expect("corpus");
        let path = roots[corpus].join(src["file"].as_str().expect("file"));
        let data = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let digest = format!("{:x}", Sha256::digest(&data));
        assert_eq!(
            digest,
            src["sha256"].as_str().expect("sha"),
            "{}",
            path.display()
        );
        data
    };
    let projects = root.join("projects");
    for proj in manifest["projects"].as_array().expect("projects") {
        let pdir = projects.join(proj["project_dir"].as_str().expect("project_dir"));
        fs::create_dir_all(&pdir).expect("mkdir");
        for s in proj["sessions"].as_array().expect("sessions") {
            let sid = s["session_id"].as_str().expect("sid");
            let dst = pdir.join(format!("{sid}.jsonl"));
            fs::write(&dst, load(&s["source"])).expect("write");
            for sa in s["subagents"].as_array().expect("subagents") {
                let sp = pdir.join(sid).join(sa["path"].as_str().expect("path"));
                fs::create_dir_all(sp.parent().expect("parent")).expect("mkdir");
                fs::write(&sp, load(&sa["source"])).expect("write");
                if let Some(meta) = sa["meta_json"].as_str() {
                    let name = sp.file_name().expect("name").to_string_lossy();
                    let meta_path =
                        sp.with_file_name(format!("{}.meta.json", name.trim_end_matches(".jsonl")));
                    fs::write(meta_path, meta).expect("write meta");
                }
            }
            let ms = s["mtime_ms"].as_u64().expect("mtime");
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
            fs::File::options()
                .write(true)
                .open(&dst)
                .and_then(|f| f.set_modified(t))
                .expect("set mtime");
        }
    }
    projects
}

fn fixture() -> Option<&'static Fixture> {
    static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();
    FIXTURE
        .get_or_init(|| {
            let (oracle, shared_corpus) = oracle_dir()?;
            let manifest = read_json(&oracle.join("manifest.json"));
            let dir = tempfile::tempdir().expect("temp dir");
            let projects = rebuild_tree(&oracle, &manifest, dir.path());
            let store = Store::open(dir.path().join("sessions.db")).expect("open");
            support::import(&store, &[projects.as_path()]);
            Some(Fixture {
                _dir: dir,
                store,
                oracle,
                projects,
                manifest,
                shared_corpus,
            })
        })
        .as_ref()
}

/// The SDK's fields of a session info, as JSON (what the goldens hold).
fn sdk_fields(info: &query::SessionInfo) -> Value {
    json!({
        "session_id": info.session_id,
        "summary": info.summary,
        "last_modified": info.last_modified,
        "file_size": info.file_size,
        "custom_title": info.custom_title,
        "first_prompt": info.first_prompt,
        "git_branch": info.git_branch,
        "cwd": info.cwd,
        "tag": info.tag,
        "created_at": info.created_at,
    })
}

type Diff = (String, String, String, String);

/// Field-by-field differences between an SDK info (or null) and ours (or None = not listed).
fn compare_info(
    sid: &str,
    want: &Value,
    got: Option<&query::SessionInfo>,
    out: &mut BTreeSet<Diff>,
) {
    let got_json = got.map(sdk_fields);
    match (want, &got_json) {
        (Value::Null, None) => {}
        (Value::Null, Some(_)) => {
            out.insert((sid.into(), "listed".into(), "false".into(), "true".into()));
        }
        (_, None) => {
            out.insert((sid.into(), "listed".into(), "true".into(), "false".into()));
        }
        (Value::Object(w), Some(Value::Object(g))) => {
            for (k, wv) in w {
                let gv = g.get(k).cloned().unwrap_or(Value::Null);
                if *wv != gv {
                    out.insert((sid.into(), k.clone(), wv.to_string(), gv.to_string()));
                }
            }
        }
        _ => panic!("{sid}: unexpected golden {want}"),
    }
}

fn session_ref(store: &Store, project: &str, sid: &str) -> Option<SessionRef> {
    query::resolve_session(
        &store.reader().expect("reader"),
        &format!("{project}/{sid}"),
    )
    .ok()
}

/// `serde_json::to_vec` with object keys sorted (the goldens' `message_sha256` bytes).
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), sorted(&m[k]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Compares messages with the goldens' message objects; returns the first mismatch.
pub fn compare_messages(want: &Value, got: &[sdk::SessionMessage], full: bool) -> Option<String> {
    let want = want.as_array().expect("messages");
    let wu: Vec<&str> = want
        .iter()
        .map(|m| m["uuid"].as_str().unwrap_or(""))
        .collect();
    let gu: Vec<&str> = got.iter().map(|m| m.uuid.as_str()).collect();
    if wu != gu {
        return Some(format!("uuids differ: want {} got {}", wu.len(), gu.len()));
    }
    for (w, g) in want.iter().zip(got) {
        let bytes = serde_json::to_vec(&sorted(&g.message)).expect("json");
        let sha = format!("{:x}", Sha256::digest(&bytes));
        let checks = [
            ("type", w["type"].clone(), json!(g.kind)),
            ("session_id", w["session_id"].clone(), g.session_id.clone()),
            (
                "parent_tool_use_id",
                w["parent_tool_use_id"].clone(),
                json!(g.parent_tool_use_id),
            ),
            (
                "parent_agent_id",
                w["parent_agent_id"].clone(),
                json!(g.parent_agent_id),
            ),
            ("message_sha256", w["message_sha256"].clone(), json!(sha)),
            (
                "message_bytes",
                w["message_bytes"].clone(),
                json!(bytes.len()),
            ),
        ];
        for (field, wv, gv) in checks {
            if wv != gv {
                return Some(format!("{}: {field} want {wv} got {gv}", g.uuid));
            }
        }
        if full && w["message"] != g.message {
            return Some(format!("{}: message payload differs", g.uuid));
        }
    }
    None
}

/// `"limit=3,offset=2"` → (limit, offset).
pub fn paging_args(key: &str) -> (Option<i64>, i64) {
    let (mut limit, mut offset) = (None, 0);
    for part in key.split(',') {
        let (k, v) = part.split_once('=').expect("k=v");
        let v: i64 = v.parse().expect("number");
        match k {
            "limit" => limit = Some(v),
            "offset" => offset = v,
            _ => panic!("paging key {key}"),
        }
    }
    (limit, offset)
}

pub fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_str().expect("id").to_owned())
        .collect()
}

/// Every difference found over the whole oracle.
fn all_differences(f: &Fixture) -> (BTreeSet<Diff>, Vec<String>, usize) {
    let mut diffs = BTreeSet::new();
    let mut failures = Vec::new();
    let mut compared = 0usize;
    let conn = f.store.reader().expect("reader");
    let directories: BTreeMap<String, String> = f.manifest["projects"]
        .as_array()
        .expect("projects")
        .iter()
        .map(|p| {
            (
                p["project_dir"].as_str().expect("dir").to_owned(),
                p["directory"].as_str().expect("directory").to_owned(),
            )
        })
        .collect();
    // Per-session goldens.
    let mut files: Vec<PathBuf> = fs::read_dir(f.oracle.join("goldens/sessions"))
        .expect("sessions dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    for path in files {
        let g = read_json(&path);
        let sid = g["session_id"].as_str().expect("sid");
        let project = g["project_dir"].as_str().expect("project");
        let directory = g["directory"].as_str().expect("directory");
        compared += 1;
        let Some(session) = session_ref(&f.store, project, sid) else {
            failures.push(format!("{sid}: not imported"));
            continue;
        };
        let info = query::get_session_info(&conn, &session, Some(directory)).expect("info");
        let listed = info.listed.then_some(&info);
        compare_info(sid, &g["get_session_info"], listed, &mut diffs);
        compare_info(sid, &g["list_sessions_entry"], listed, &mut diffs);
        let full = g["messages_full_payload"].as_bool().unwrap_or(false);
        let messages = sdk::get_session_messages(&conn, &session, None, 0).expect("messages");
        if let Some(m) = compare_messages(&g["get_session_messages"], &messages, full) {
            diffs.insert((sid.into(), "messages".into(), String::new(), m));
        }
        for (key, want) in g["get_session_messages_paging"]
            .as_object()
            .expect("paging")
        {
            let (limit, offset) = paging_args(key);
            let got: Vec<String> = sdk::get_session_messages(&conn, &session, limit, offset)
                .expect("page")
                .into_iter()
                .map(|m| m.uuid)
                .collect();
            if got != ids(want) {
                failures.push(format!("{sid}: messages paging {key}: {got:?} != {want}"));
            }
        }
        let agents = sdk::list_subagents(&conn, &session).expect("agents");
        if json!(agents) != g["list_subagents"] {
            failures.push(format!(
                "{sid}: list_subagents {agents:?} != {}",
                g["list_subagents"]
            ));
        }
        for (agent, a) in g["subagents"].as_object().expect("subagents") {
            let got = sdk::get_subagent_messages(&conn, &session, agent, None, 0).expect("agent");
            if let Some(m) = compare_messages(&a["get_subagent_messages"], &got, false) {
                diffs.insert((sid.into(), format!("agent {agent}"), String::new(), m));
            }
            for (key, want) in a["paging"].as_object().expect("paging") {
                let (limit, offset) = paging_args(key);
                let got: Vec<String> =
                    sdk::get_subagent_messages(&conn, &session, agent, limit, offset)
                        .expect("page")
                        .into_iter()
                        .map(|m| m.uuid)
                        .collect();
                if got != ids(want) {
                    failures.push(format!("{sid}/{agent}: paging {key}: {got:?} != {want}"));
                }
            }
        }
    }
    // Listings: per project (with its directory) and over all projects.
    let mut listings: Vec<(Option<String>, PathBuf)> = directories
        .keys()
        .map(|p| {
            (
                Some(p.clone()),
                f.oracle.join(format!("goldens/list_sessions/{p}.json")),
            )
        })
        .collect();
    listings.push((None, f.oracle.join("goldens/list_sessions_all.json")));
    for (project, path) in listings {
        let g = read_json(&path);
        let filter = SessionFilter {
            directory: project.as_ref().map(|p| directories[p].clone()),
            project: project.clone(),
            ..SessionFilter::default()
        };
        let ours = query::list_sessions(&conn, &filter).expect("list");
        let want = g["sessions"].as_array().expect("sessions");
        let by_id: BTreeMap<&str, &query::SessionInfo> =
            ours.iter().map(|s| (s.session_id.as_str(), s)).collect();
        let mut in_sdk = BTreeSet::new();
        for w in want {
            let sid = w["session_id"].as_str().expect("sid");
            in_sdk.insert(sid);
            compare_info(sid, w, by_id.get(sid).copied(), &mut diffs);
        }
        for s in &ours {
            if !in_sdk.contains(s.session_id.as_str()) {
                compare_info(&s.session_id, &Value::Null, Some(s), &mut diffs);
            }
        }
        // Order: ours must be the SDK's order with the known extra sessions in place.
        let ours_ids: Vec<&str> = ours.iter().map(|s| s.session_id.as_str()).collect();
        let common: Vec<&str> = ours_ids
            .iter()
            .copied()
            .filter(|s| in_sdk.contains(s))
            .collect();
        let sdk_ids: Vec<&str> = want
            .iter()
            .map(|w| w["session_id"].as_str().expect("sid"))
            .filter(|s| by_id.contains_key(s))
            .collect();
        if common != sdk_ids {
            failures.push(format!("{project:?}: order {common:?} != {sdk_ids:?}"));
        }
        // Paging: the SDK's rules over the SDK's list give the golden pages, and our paged
        // queries equal the same rules over our list.
        for (key, page) in g["paging"].as_object().expect("paging") {
            let (limit, offset) = paging_args(key);
            let all_sdk: Vec<String> = want
                .iter()
                .map(|w| w["session_id"].as_str().expect("sid").to_owned())
                .collect();
            let rule = |list: Vec<String>| -> Vec<String> {
                let list = if offset > 0 {
                    list.into_iter().skip(offset as usize).collect()
                } else {
                    list
                };
                match limit {
                    Some(l) if l > 0 => list.into_iter().take(l as usize).collect(),
                    _ => list,
                }
            };
            if rule(all_sdk) != ids(page) {
                failures.push(format!("{project:?}: SDK paging rule {key} misread"));
            }
            let paged = query::list_sessions(
                &conn,
                &SessionFilter {
                    limit,
                    offset: Some(offset),
                    ..filter.clone()
                },
            )
            .expect("paged");
            let paged: Vec<String> = paged.into_iter().map(|s| s.session_id).collect();
            let expected = rule(ours.iter().map(|s| s.session_id.clone()).collect());
            if paged != expected {
                failures.push(format!(
                    "{project:?}: paging {key}: {paged:?} != {expected:?}"
                ));
            }
        }
    }
    (diffs, failures, compared)
}

fn show(diffs: &BTreeSet<Diff>) -> String {
    diffs
        .iter()
        .map(|(s, f, w, g)| format!("    (\"{s}\", \"{f}\", {w:?}, {g:?}, \"\"),"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn sdk_goldens_match_except_the_known_differences() {
    let Some(f) = fixture() else { return };
    support::slow(
        "sdk_goldens::sdk_goldens_match_except_the_known_differences",
        "rebuilds and imports the SDK goldens' tree, then compares every listing and message",
    );
    let (diffs, failures, compared) = all_differences(f);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "SDK goldens: {compared} sessions compared, {} known differences",
        diffs.len()
    );
    if f.shared_corpus {
        check_table(&diffs, |field| !field.starts_with("after "));
    } else {
        eprintln!("differences:\n{}", show(&diffs));
        let allowed: BTreeSet<&str> = WINDOW_FIELDS.iter().copied().collect();
        let bad: BTreeSet<Diff> = diffs
            .iter()
            .filter(|d| !allowed.contains(d.1.as_str()))
            .cloned()
            .collect();
        assert!(
            bad.is_empty(),
            "differences of unexplained kinds:\n{}",
            show(&bad)
        );
    }
}

fn check_table(diffs: &BTreeSet<Diff>, keep: impl Fn(&str) -> bool) {
    let known: BTreeSet<Diff> = KNOWN_DIFFERENCES
        .iter()
        .filter(|(_, field, ..)| keep(field))
        .map(|(s, f, w, g, _)| (s.to_string(), f.to_string(), w.to_string(), g.to_string()))
        .collect();
    let unexpected: BTreeSet<Diff> = diffs.difference(&known).cloned().collect();
    let gone: BTreeSet<Diff> = known.difference(diffs).cloned().collect();
    assert!(
        unexpected.is_empty() && gone.is_empty(),
        "differences not in the table:\n{}\ntable entries that no longer occur:\n{}",
        show(&unexpected),
        show(&gone)
    );
}

/// `rename_session` / `tag_session` (set, clear) on a copy of each mutation session: the
/// same bytes appended, the same info read back.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn rename_and_tag_write_what_the_sdk_writes() {
    let Some(f) = fixture() else { return };
    let index = read_json(&f.oracle.join("mutations/index.json"));
    let mut diffs = BTreeSet::new();
    for entry in index["sessions"].as_array().expect("sessions") {
        let sid = entry["session_id"].as_str().expect("sid");
        let m = read_json(&f.oracle.join(format!("mutations/{sid}/mutations.json")));
        let directory = m["directory"].as_str().expect("directory");
        let project = sessiondb::paths::sanitize_path(directory);
        let source = f.projects.join(&project).join(format!("{sid}.jsonl"));
        let original = fs::read(&source).expect("source");
        let dir = tempfile::tempdir().expect("tmp");
        let copy = dir.path().join(&project).join(format!("{sid}.jsonl"));
        fs::create_dir_all(copy.parent().expect("parent")).expect("mkdir");
        fs::write(&copy, &original).expect("copy");
        let store = Store::open(dir.path().join("db.sqlite")).expect("open");
        support::import(&store, &[copy.as_path()]);
        let session = session_ref(&store, &project, sid).expect("session");
        let before =
            query::get_session_info(&store.reader().expect("r"), &session, Some(directory))
                .expect("info");
        compare_info(
            sid,
            &m["before"]["get_session_info"],
            Some(&before),
            &mut BTreeSet::new(),
        );
        let mut expected_file = original.clone();
        if !original.ends_with(b"\n") {
            expected_file.push(b'\n');
        }
        for step in m["append_steps"].as_array().expect("steps") {
            let call = step["call"].as_str().expect("call");
            let arg = step["args"][0].as_str();
            let line = match call {
                "rename_session" => {
                    metadata::rename_session(&store, &session, arg.expect("title")).expect("rename")
                }
                _ => metadata::tag_session(&store, &session, arg).expect("tag"),
            };
            let appended = format!("{line}\n");
            assert_eq!(
                appended,
                step["appended_utf8"].as_str().expect("bytes"),
                "{sid} {call}"
            );
            expected_file.extend_from_slice(appended.as_bytes());
            let conn = store.reader().expect("reader");
            let info = query::get_session_info(&conn, &session, Some(directory)).expect("info");
            assert!(
                info.last_modified > before.last_modified,
                "{sid}: mtime not bumped"
            );
            let mut want = step["get_session_info_after"].clone();
            want["last_modified"] = json!(info.last_modified);
            let mut step_diffs = BTreeSet::new();
            compare_info(sid, &want, Some(&info), &mut step_diffs);
            let count = sdk::get_session_messages(&conn, &session, None, 0)
                .expect("messages")
                .len();
            if json!(count) != step["message_count_after"] {
                step_diffs.insert((
                    sid.into(),
                    "message_count".into(),
                    step["message_count_after"].to_string(),
                    count.to_string(),
                ));
            }
            for (s, field, w, g) in step_diffs {
                diffs.insert((s, format!("after {call}: {field}"), w, g));
            }
        }
        let mut exported = Vec::new();
        export::export_session(&store, &session, &mut exported).expect("export");
        assert!(
            exported == expected_file,
            "{sid}: exported transcript differs"
        );
    }
    check_table(&diffs, |field| field.starts_with("after "));
}

/// `goldens/edge_cases.json`: unknown and malformed ids find nothing; an empty or unknown
/// agent id gives no messages.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn edge_cases_find_nothing() {
    let Some(f) = fixture() else { return };
    let g = read_json(&f.oracle.join("goldens/edge_cases.json"));
    let conn = f.store.reader().expect("reader");
    let sid = g["args"]["sid"].as_str().expect("sid");
    for arg in [
        "not-a-uuid".to_owned(),
        g["args"]["unknown"].as_str().expect("unknown").to_owned(),
        sid.to_uppercase(),
    ] {
        assert!(
            query::resolve_session(&conn, &arg).is_err(),
            "{arg} resolved"
        );
    }
    let project = sessiondb::paths::sanitize_path(g["args"]["directory"].as_str().expect("dir"));
    let session = session_ref(&f.store, &project, sid).expect("session");
    for agent in ["", "nope"] {
        let got = sdk::get_subagent_messages(&conn, &session, agent, None, 0).expect("agent");
        assert!(got.is_empty(), "agent {agent:?}");
    }
    let none = query::list_sessions(
        &conn,
        &SessionFilter {
            project: Some(sessiondb::paths::sanitize_path("/golden/nonexistent")),
            ..SessionFilter::default()
        },
    )
    .expect("list");
    assert!(none.is_empty());
}
