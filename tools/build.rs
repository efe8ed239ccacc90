//! Build steps of the crate:
//! - embeds `migrations/V<n>__<name>.sql` as a table (`$OUT_DIR/migrations.rs`, read by
//!   `schema`) with each one's checksum, so that knowing the shipped migrations, and
//!   checking those a database records, costs nothing when a process starts;
//! - links the binaries as position-independent executables (the default), so that ASLR
//!   places `serve`, a network server, at a random address; `SESSIONDB_NO_PIE=1` at build
//!   time links them position-dependent instead, which saves the ~25,000 relocations a PIE
//!   applies at every start (about 100 page faults; see docs/performance.md), for
//!   benchmarks that compare start-up;
//! - tells the tests what they may need beside the checkout: `sessiondb_shared` when
//!   `../shared` is there, `sessiondb_pg` when `SESSIONDB_TEST_PG` names a server,
//!   `sessiondb_tmux` when `tmux` is on `PATH` (the picker's terminal tests). A test
//!   that needs one is `#[cfg_attr(not(...), ignore = "needs …")]`, so that it shows as
//!   ignored with its reason instead of passing; under `CI=true` all are set whatever is
//!   there, so such a test runs, and fails when what it needs is missing.

use std::fmt::Write;

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-changed=migrations_pg");
    embed_migrations();
    test_prerequisites();
    link_position_dependent_when_asked();
}

/// `-no-pie` for the binaries when `SESSIONDB_NO_PIE=1` (Linux/glibc only; see the
/// crate-level comment above).
fn link_position_dependent_when_asked() {
    println!("cargo:rerun-if-env-changed=SESSIONDB_NO_PIE");
    let asked = std::env::var("SESSIONDB_NO_PIE").is_ok_and(|v| v == "1");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if asked && os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}

/// Sets `sessiondb_shared` and `sessiondb_pg` (see the crate-level comment above). A
/// `../shared` added after a build is noticed once this script runs again (any change to
/// it, `migrations/`, or the variables below): watching a folder that is not there would
/// run it, and rebuild the crate, on every build.
fn test_prerequisites() {
    println!("cargo::rustc-check-cfg=cfg(sessiondb_shared)");
    println!("cargo::rustc-check-cfg=cfg(sessiondb_pg)");
    println!("cargo::rustc-check-cfg=cfg(sessiondb_tmux)");
    println!("cargo:rerun-if-env-changed=CI");
    println!("cargo:rerun-if-env-changed=SESSIONDB_TEST_PG");
    println!("cargo:rerun-if-changed=tools/build.rs");
    let ci = std::env::var_os("CI").is_some();
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo");
    let shared = std::path::Path::new(&manifest).join("../shared/README.md");
    if shared.is_file() {
        println!("cargo:rerun-if-changed={}", shared.display());
    }
    if ci || shared.is_file() {
        println!("cargo:rustc-cfg=sessiondb_shared");
    }
    if ci || std::env::var_os("SESSIONDB_TEST_PG").is_some_and(|v| !v.is_empty()) {
        println!("cargo:rustc-cfg=sessiondb_pg");
    }
    if ci || on_path("tmux") {
        println!("cargo:rustc-cfg=sessiondb_tmux");
    }
}

/// Whether `program` is in a folder of `PATH` (tmux, for the picker's terminal tests).
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Writes `(version, name, include_str!(file), checksum)` for each migration file, oldest
/// first. The checksum is refinery's (see `schema::Migration::checksum`, which a unit test
/// holds equal to it); it hashes an integer in the machine's byte order, so it is left to
/// run time (`None`) when building for a machine of the other order.
fn embed_migrations() {
    let dir = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("migrations");
    let mut found: Vec<(i32, String, String)> = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the migrations folder is readable") {
        let file = entry.expect("a readable folder entry").file_name();
        let file = file
            .to_str()
            .expect("migration file names are UTF-8")
            .to_owned();
        let Some(stem) = file.strip_suffix(".sql") else {
            continue;
        };
        let (version, name) = stem
            .strip_prefix('V')
            .and_then(|rest| rest.split_once("__"))
            .and_then(|(v, name)| Some((v.parse::<i32>().ok()?, name)))
            .filter(|(_, name)| {
                !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            })
            .unwrap_or_else(|| panic!("migrations/{file} is not named V<number>__<name>.sql"));
        found.push((version, name.to_owned(), file.clone()));
    }
    found.sort();
    let target_little = std::env::var("CARGO_CFG_TARGET_ENDIAN").as_deref() == Ok("little");
    let same_order = target_little == cfg!(target_endian = "little");
    let mut out = String::from("&[\n");
    for (version, name, file) in &found {
        let checksum = if same_order {
            let sql = std::fs::read_to_string(dir.join(file))
                .unwrap_or_else(|e| panic!("migrations/{file} is readable UTF-8: {e}"));
            format!("Some({})", refinery_checksum(name, *version, &sql))
        } else {
            "None".to_owned()
        };
        writeln!(
            out,
            "    ({version}, {name:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/migrations/{file}\")), {checksum}),"
        )
        .expect("writing to a String");
    }
    out.push_str("]\n");
    let target = std::path::Path::new(&std::env::var("OUT_DIR").expect("set by cargo"))
        .join("migrations.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}

/// refinery's checksum of a migration: SipHash-1-3 of its name (as a `String`), version
/// (as an `i32`) and SQL (as a `str`), in that order.
fn refinery_checksum(name: &str, version: i32, sql: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = siphasher::sip::SipHasher13::new();
    name.hash(&mut hasher);
    version.hash(&mut hasher);
    sql.hash(&mut hasher);
    hasher.finish()
}
