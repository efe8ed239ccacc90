//! Helpers shared by the integration tests.

use sessiondb::{import, model::NoProgress, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `../shared` beside the checkout. Under CI its absence is a failure; elsewhere the
/// tests that need it are skipped with a message.
pub fn shared_dir(what: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!("../shared is missing, so {what} cannot run (CI is set)");
    }
    eprintln!("skipping {what}: ../shared is missing");
    None
}

/// Says on the terminal, past the test harness's capture, that a test takes long, so that
/// it does not look like a hang (libtest only says so after 60 s).
pub fn slow(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "note: {test} is slow ({why}); it can take a minute or more in a debug build"
    );
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
            "SELECT s.session_id, t.subpath, r.ordinal, r.raw, r.terminated, r.status
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

/// A fresh PostgreSQL database for one test, on the server `SESSIONDB_TEST_PG` names; dropped
/// when the value is. Without the variable the test is skipped with a message, and under CI
/// it fails instead (CI starts a throwaway server, see .ci/run).
pub struct PgTestDb {
    admin: String,
    name: String,
    /// The URL of the test's own database.
    pub url: String,
}

/// The test database for `what`, or `None` (after a message) when no server is configured.
pub fn pg_db(what: &str) -> Option<PgTestDb> {
    let Some(admin) = std::env::var("SESSIONDB_TEST_PG")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        if std::env::var_os("CI").is_some() {
            panic!("SESSIONDB_TEST_PG is not set, so {what} cannot run (CI is set)");
        }
        eprintln!("skipping {what}: SESSIONDB_TEST_PG is not set");
        return None;
    };
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
            .batch_execute("TRUNCATE projects, source_files RESTART IDENTITY CASCADE")
            .expect("truncate");
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
