//! `sessiondb config set KEY VALUE | get KEY | path`.

use crate::cli_setup::{ConfigAction, ConfigArgs};
use crate::output::outln;
use anyhow::Context;
use sessiondb::config;

pub fn run(args: ConfigArgs) -> anyhow::Result<()> {
    let path = config::config_path()
        .context("neither XDG_CONFIG_HOME nor HOME is set: no place for the config")?;
    match args.action {
        ConfigAction::Set { key, value } => {
            config::set(&path, &key, &value)?;
            eprintln!("{key} = {value} in {}", path.display());
        }
        ConfigAction::Get { key } => {
            let loaded = config::load(&path)?;
            match key.as_str() {
                "write_back" if loaded.write_back_set => outln!("{}", loaded.write_back),
                // Unset is not `false`: the verbs then write back when they can.
                "write_back" => outln!(
                    "unset: rename, tag and fork write back when the session's file is there; \
                     append does not"
                ),
                _ => anyhow::bail!(
                    "unknown setting {key:?} (known: {})",
                    config::KEYS.join(", ")
                ),
            }
        }
        ConfigAction::Path => outln!("{}", path.display()),
    }
    Ok(())
}
