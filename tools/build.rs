//! Build steps of the crate:
//! - embeds `migrations/V<n>__<name>.sql` as a table (`$OUT_DIR/migrations.rs`, read by
//!   `schema`), so that knowing the shipped migrations costs nothing when a process starts;
//! - links the binaries as position-dependent executables: a PIE of this size applied
//!   about 25,000 relocations and copied their pages on every start (see
//!   docs/performance.md).

use std::fmt::Write;

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-changed=migrations_pg");
    embed_migrations();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}

/// Writes `(version, name, include_str!(file))` for each migration file, oldest first.
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
    let mut out = String::from("&[\n");
    for (version, name, file) in &found {
        writeln!(
            out,
            "    ({version}, {name:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/migrations/{file}\"))),"
        )
        .expect("writing to a String");
    }
    out.push_str("]\n");
    let target = std::path::Path::new(&std::env::var("OUT_DIR").expect("set by cargo"))
        .join("migrations.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}
