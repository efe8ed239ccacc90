//! Helpers shared by the integration tests.

use sessiondb::{import, model::NoProgress, Store};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::Duration;

/// `../shared` beside the checkout, for `what`. A test that calls this is marked
/// `#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]` (`tools/build.rs` sets the
/// flag when `../shared` is there, and always under `CI`), so that without it the test shows
/// as ignored; one that runs all the same (`--include-ignored`, or CI) fails here. The
/// `Option` is never `None`: it keeps the callers' `let … else` form.
pub fn shared_dir(what: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    assert!(
        dir.is_dir(),
        "../shared is missing, so {what} cannot run (a test that needs it is marked \
         #[cfg_attr(not(sessiondb_shared), ignore = \"needs ../shared\")])"
    );
    Some(dir)
}

/// The transcripts of `../shared/corpus/claude-code`, sorted.
pub fn corpus_files(shared: &Path) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(shared.join("corpus/claude-code"))
        .expect("corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus has transcripts");
    files
}

/// A user record of `session` as Claude Code writes one (without its newline).
pub fn user_record(session: &str, uuid: &str, parent: Option<&str>, text: &str) -> String {
    serde_json::json!({
        "parentUuid": parent, "isSidechain": false, "type": "user",
        "message": {"role": "user", "content": text}, "uuid": uuid,
        "timestamp": "2026-01-01T00:00:00.000Z", "sessionId": session, "cwd": "/w"
    })
    .to_string()
}

/// [`user_record`] with its newline.
pub fn user_line(session: &str, uuid: &str, parent: Option<&str>, text: &str) -> String {
    user_record(session, uuid, parent, text) + "\n"
}

/// An assistant record of `session` answering `parent` with one text block (without its
/// newline).
pub fn assistant_record(session: &str, uuid: &str, parent: &str, text: &str) -> String {
    serde_json::json!({
        "parentUuid": parent, "isSidechain": false, "type": "assistant",
        "message": {"id": format!("msg-{uuid}"), "role": "assistant", "model": "m",
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}},
        "uuid": uuid, "timestamp": "2026-01-01T00:00:01.000Z", "sessionId": session, "cwd": "/w"
    })
    .to_string()
}

/// Says on the terminal, past the test harness's capture, that a test takes long, so that
/// it does not look like a hang (libtest only says so after 60 s).
pub fn slow(test: &str, why: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "note: {test} is slow ({why}); it can take a minute or more in a debug build"
    );
}

/// The sample sessions the README imports: `tests/fixtures/sample-projects`.
pub fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sample-projects")
}

/// `sessiondb --db DB`: the binary under test, on the database `db`.
pub fn sessiondb_command(db: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sessiondb"));
    command.arg("--db").arg(db);
    command
}

/// Runs `sessiondb --db DB ARGS…` to its end: stdin empty, stdout and stderr captured.
pub fn sessiondb<S: AsRef<OsStr>>(db: &Path, args: &[S]) -> Output {
    sessiondb_command(db)
        .args(args)
        .output()
        .expect("run sessiondb")
}

/// Runs `sessiondb --db DB ARGS…` and returns its stdout, failing the test (naming the
/// arguments and showing stderr) unless it succeeds.
pub fn sessiondb_ok<S: AsRef<OsStr> + std::fmt::Debug>(db: &Path, args: &[S]) -> Vec<u8> {
    let out = sessiondb(db, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Runs `command` to its end with `stdin` as its standard input, stdout and stderr captured.
/// A process that exits before reading all of it (a refusal) is not an error here.
pub fn output_with_stdin(mut command: Command, stdin: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sessiondb");
    let written = child.stdin.take().expect("stdin").write_all(stdin);
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    child.wait_with_output().expect("wait")
}

/// Starts `command` (its output discarded) and kills it after `delay`: for the tests that a
/// killed writer leaves the database as it was before its last transaction.
pub fn kill_after(mut command: Command, delay: Duration) -> ExitStatus {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn sessiondb");
    std::thread::sleep(delay);
    let _ = child.kill();
    child.wait().expect("wait")
}

/// Fails the test, showing the exit code and stderr, unless the run succeeded.
pub fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Imports the sample sessions into `db` with the binary (creating the database).
///
/// A copy of them, in a temporary folder of its own that is kept (a few KB; tests look at
/// the database's folder): rename, tag and fork write back to the imported files by
/// default, which must never be the repository's own.
pub fn import_samples(db: &Path) {
    let copy = tempfile::Builder::new()
        .prefix("sessiondb-samples-")
        .tempdir()
        .expect("tmp")
        .keep();
    copy_tree(&samples(), &copy);
    assert_success(&sessiondb(db, &[OsStr::new("import"), copy.as_os_str()]));
}

/// Copies the files and folders under `from` into the existing folder `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read dir") {
        let path = entry.expect("entry").path();
        let target = to.join(path.file_name().expect("name"));
        if path.is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copy");
        }
    }
}

/// A fresh store in its own temporary folder.
pub fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("sessions.db")).expect("open store");
    (dir, store)
}

/// Imports `paths`, panicking on a hard error.
pub fn import(store: &Store, paths: &[&Path]) -> sessiondb::model::ImportReport {
    let paths: Vec<PathBuf> = paths.iter().map(|p| p.to_path_buf()).collect();
    import::import_paths(store, &paths, &NoProgress).expect("import")
}

/// Every file under `root`, by relative path, with its bytes (empty folders are ignored).
pub fn read_tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("under root");
                out.insert(
                    rel.to_string_lossy().into_owned(),
                    std::fs::read(&path).expect("read file"),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Asserts two trees hold the same files with the same bytes, naming the first difference.
pub fn assert_same_tree(expected: &Path, actual: &Path) {
    let want = read_tree(expected);
    let got = read_tree(actual);
    let missing: Vec<_> = want.keys().filter(|k| !got.contains_key(*k)).collect();
    let extra: Vec<_> = got.keys().filter(|k| !want.contains_key(*k)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "tree mismatch under {}: missing {missing:?}, extra {extra:?}",
        expected.display()
    );
    for (path, bytes) in &want {
        assert!(
            &got[path] == bytes,
            "{path} differs after the round trip ({} vs {} bytes)",
            bytes.len(),
            got[path].len()
        );
    }
}

/// The stored rows of every live transcript, as comparable tuples.
pub fn dump_rows(store: &Store) -> Vec<(String, String, i64, Vec<u8>, bool, i64)> {
    let conn = store.reader().expect("reader");
    let mut stmt = conn
        .prepare(
            "SELECT s.session_id, t.subpath, r.ordinal, line(r.raw, r.dict), r.terminated, r.status
             FROM rows r JOIN transcripts t ON t.id = r.transcript_id
             JOIN sessions s ON s.id = t.session_id
             WHERE t.superseded_at IS NULL ORDER BY s.session_id, t.subpath, r.ordinal",
        )
        .expect("prepare");
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .expect("query");
    rows.collect::<Result<_, _>>().expect("rows")
}

/// Counts the rows of a table.
pub fn count(store: &Store, table: &str) -> i64 {
    store
        .reader()
        .expect("reader")
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .expect("count")
}

/// Where a killed import is stopped: once its WAL holds more than this many bytes (0: once
/// the database has a WAL at all), so that the kill lands at the same stage of the import
/// however loaded the machine is (a fixed delay landed before the database existed, or
/// after the import ended, depending on the load).
pub const KILL_POINTS: [u64; 3] = [0, 10 << 20, 30 << 20];

/// Runs `sessiondb --db DB import PATH` and kills it with SIGKILL once its WAL is larger
/// than `wal_bytes` (or it is gone when the import finished first). Returns whether it was
/// killed before it ended.
pub fn import_killed_at(db: &Path, path: &Path, wal_bytes: u64) -> bool {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--db")
        .arg(db)
        .arg("import")
        .arg(path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    // Not a timing bound: only a guard against a hung child.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    loop {
        if child.try_wait().expect("wait").is_some() {
            return false;
        }
        let grown = std::fs::metadata(&wal).is_ok_and(|m| m.len() > wal_bytes);
        if grown || std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// A fresh PostgreSQL database for one test, on the server `SESSIONDB_TEST_PG` names; dropped
/// when the value is. A test that needs one is marked
/// `#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]`
/// (`tools/build.rs` sets the flag when the variable is, and always under `CI`, where
/// `.ci/run` starts a throwaway server), so that without a server it shows as ignored; one
/// that runs all the same fails here.
pub struct PgTestDb {
    admin: String,
    name: String,
    /// The URL of the test's own database.
    pub url: String,
}

/// The test database for `what`. The `Option` is never `None` (a missing server fails the
/// test): it keeps the callers' `let … else` form.
pub fn pg_db(what: &str) -> Option<PgTestDb> {
    let admin = std::env::var("SESSIONDB_TEST_PG")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| {
            panic!(
                "SESSIONDB_TEST_PG is not set, so {what} cannot run (a test that needs it is \
                 marked #[cfg_attr(not(sessiondb_pg), ignore = \"needs PostgreSQL \
                 (SESSIONDB_TEST_PG)\")])"
            )
        });
    let name = format!("sessiondb_test_{}", uuid::Uuid::new_v4().simple());
    let mut client = postgres::Client::connect(&admin, postgres::NoTls)
        .unwrap_or_else(|e| panic!("cannot connect to SESSIONDB_TEST_PG for {what}: {e}"));
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the test database");
    let url = with_database(&admin, &name);
    Some(PgTestDb { admin, name, url })
}

/// `url` naming database `name` instead of its own.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[after_scheme..]
        .find('/')
        .map_or(base.len(), |i| after_scheme + i);
    format!("{}/{name}{query}", &base[..host_end])
}

impl PgTestDb {
    /// Empties every sessiondb table (faster than a new database per case).
    pub fn empty(&self) {
        let mut client = postgres::Client::connect(&self.url, postgres::NoTls).expect("connect");
        client
            .batch_execute("TRUNCATE projects, source_files, rows RESTART IDENTITY CASCADE")
            .expect("truncate");
    }
}

/// A throwaway cluster of a test's own (`tools/pg/cluster.sh start DIR OPTIONS…`: TLS, or
/// password logins), stopped and removed when dropped.
pub struct OwnCluster {
    dir: PathBuf,
    /// `postgres://sessiondb@127.0.0.1:PORT/postgres`.
    pub url: String,
}

/// Starts a cluster with `options`; it needs a configured test server (the binaries are
/// then known to be there) and fails without one, exactly as [`pg_db`].
pub fn own_cluster(what: &str, options: &[std::ffi::OsString]) -> Option<OwnCluster> {
    drop(pg_db(what)?);
    // The cluster's owner (the `postgres` user under root) must reach its folder: not
    // inside a private temporary folder.
    let dir = std::env::temp_dir().join(format!("sessiondb-pg-{}", uuid::Uuid::new_v4().simple()));
    let out = Command::new("bash")
        .arg(cluster_script())
        .arg("start")
        .arg(&dir)
        .args(options)
        .output()
        .expect("run cluster.sh");
    let cluster = OwnCluster {
        dir,
        url: String::from_utf8_lossy(&out.stdout).trim().to_owned(),
    };
    assert!(
        out.status.success() && cluster.url.starts_with("postgres://"),
        "cannot start a cluster ({options:?}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(cluster)
}

fn cluster_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/pg/cluster.sh")
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(cluster_script())
            .arg("stop")
            .arg(&self.dir)
            .status();
    }
}

impl Drop for PgTestDb {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = client.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}
