//! File-history restore (spec §10.3): which snapshots a resumed conversation can restore,
//! with retroactive updates and per-file deltas applied at their messages' positions.

use serde_json::{Map, Value};
use std::collections::HashMap;

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Builds the snapshot chain for `messages` (the resumed conversation, in order) from the
/// transcript's `file-history-snapshot` and `file-history-delta` records (in file order).
///
/// Snapshots are keyed by their entry-level `messageId`, last write wins. Walking the
/// conversation, a message with a snapshot appends it, unless it is an update
/// (`isSnapshotUpdate`) of a snapshot already in the chain, which it replaces in place. A
/// delta (`{messageId, snapshotMessageId, trackingPath, backup}`) sets one file's backup in
/// the chained snapshot of `snapshotMessageId`, at its message's position.
pub fn restore(messages: &[Value], records: &[Value]) -> Vec<Value> {
    let mut snapshots: HashMap<&str, &Value> = HashMap::new();
    let mut deltas: HashMap<&str, Vec<&Value>> = HashMap::new();
    for record in records {
        let Some(message_id) = text(record, "messageId") else {
            continue;
        };
        match text(record, "type") {
            Some("file-history-snapshot") => {
                snapshots.insert(message_id, record);
            }
            Some("file-history-delta") => deltas.entry(message_id).or_default().push(record),
            _ => {}
        }
    }
    let mut chain: Vec<Value> = Vec::new();
    for message in messages {
        let Some(uuid) = text(message, "uuid") else {
            continue;
        };
        if let Some(entry) = snapshots.get(uuid) {
            let snapshot = entry.get("snapshot").cloned().unwrap_or(Value::Null);
            let is_update = entry
                .get("isSnapshotUpdate")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let key = text(&snapshot, "messageId").map(str::to_owned);
            let earlier = key
                .as_deref()
                .and_then(|k| chain.iter().position(|s| text(s, "messageId") == Some(k)));
            match (is_update, earlier) {
                (true, Some(i)) => chain[i] = snapshot,
                _ => chain.push(snapshot),
            }
        }
        for delta in deltas.get(uuid).into_iter().flatten() {
            let (Some(target), Some(path)) = (
                text(delta, "snapshotMessageId"),
                text(delta, "trackingPath"),
            ) else {
                continue;
            };
            let backup = delta.get("backup").cloned().unwrap_or(Value::Null);
            if let Some(snapshot) = chain
                .iter_mut()
                .find(|s| text(s, "messageId") == Some(target))
            {
                if let Some(obj) = snapshot.as_object_mut() {
                    let files = obj
                        .entry("trackedFileBackups")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Some(files) = files.as_object_mut() {
                        files.insert(path.to_owned(), backup);
                    }
                }
            }
        }
    }
    chain
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_update_replaces_its_snapshot_at_the_assistant_position() {
        let messages = vec![
            json!({"uuid": "p1"}),
            json!({"uuid": "a1"}),
            json!({"uuid": "p2"}),
        ];
        let records = vec![
            json!({"type": "file-history-snapshot", "messageId": "p1", "isSnapshotUpdate": false,
                   "snapshot": {"messageId": "p1", "trackedFileBackups": {}}}),
            json!({"type": "file-history-snapshot", "messageId": "a1", "isSnapshotUpdate": true,
                   "snapshot": {"messageId": "p1", "trackedFileBackups": {"x.rs": {"version": 1}}}}),
            json!({"type": "file-history-snapshot", "messageId": "p2", "isSnapshotUpdate": false,
                   "snapshot": {"messageId": "p2", "trackedFileBackups": {"x.rs": {"version": 2}}}}),
            json!({"type": "file-history-snapshot", "messageId": "dead", "isSnapshotUpdate": false,
                   "snapshot": {"messageId": "dead", "trackedFileBackups": {}}}),
        ];
        let chain = restore(&messages, &records);
        assert_eq!(chain.len(), 2);
        assert_eq!(chain[0]["trackedFileBackups"]["x.rs"]["version"], 1);
        assert_eq!(chain[1]["messageId"], "p2");
    }

    #[test]
    fn a_delta_sets_one_file_of_its_snapshot() {
        let messages = vec![json!({"uuid": "p1"}), json!({"uuid": "a1"})];
        let records = vec![
            json!({"type": "file-history-snapshot", "messageId": "p1",
                   "snapshot": {"messageId": "p1", "trackedFileBackups": {}}}),
            json!({"type": "file-history-delta", "messageId": "a1", "snapshotMessageId": "p1",
                   "trackingPath": "y.rs", "backup": {"backupFileName": null, "version": 1}}),
        ];
        let chain = restore(&messages, &records);
        assert_eq!(chain[0]["trackedFileBackups"]["y.rs"]["version"], 1);
    }
}
