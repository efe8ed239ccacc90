-- V1: the lossless transcript store. Every JSONL line is one row holding its exact bytes;
-- the other columns are projections that resume, listing and metadata queries need.

-- A Claude Code project folder (the sanitized cwd) and, where a record names it, the cwd.
CREATE TABLE projects (
    id   INTEGER PRIMARY KEY,
    key  TEXT NOT NULL UNIQUE,
    cwd  TEXT
);

-- A session is keyed by project + session id: one id under two projects is two sessions.
CREATE TABLE sessions (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    session_id  TEXT NOT NULL,
    UNIQUE (project_id, session_id)
);

-- One JSONL file of a session: the main transcript (subpath '') or a sidechain
-- ('subagents/agent-<id>'). A rewritten source file supersedes its old version
-- instead of deleting it, so nothing once imported is lost.
CREATE TABLE transcripts (
    id                INTEGER PRIMARY KEY,
    session_id        INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    subpath           TEXT NOT NULL,
    agent_id          TEXT,
    meta_json         BLOB,
    superseded_at     TEXT
);
-- Only one live version of each file per session.
CREATE UNIQUE INDEX idx_transcripts_session_subpath ON transcripts(session_id, subpath)
    WHERE superseded_at IS NULL;

-- Other files of a session folder (tool-results/*, sidecars without a transcript), verbatim.
CREATE TABLE session_files (
    id          INTEGER PRIMARY KEY,
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    relpath     TEXT NOT NULL,
    content     BLOB NOT NULL,
    UNIQUE (session_id, relpath)
);

-- One row per line, in file order. `raw` is the line without its '\n'; `terminated` is 0
-- only for a last line that had no newline. `status`: 0 JSON object, 1 blank, 2 malformed.
-- No unique constraint on uuid: forks and agent files repeat them. `raw` is the last column:
-- a long line spills to overflow pages, and columns stored after it would be read through them.
CREATE TABLE rows (
    id                          INTEGER PRIMARY KEY,
    transcript_id               INTEGER NOT NULL REFERENCES transcripts(id) ON DELETE CASCADE,
    ordinal                     INTEGER NOT NULL,
    terminated                  INTEGER NOT NULL DEFAULT 1,
    status                      INTEGER NOT NULL DEFAULT 0,
    type                        TEXT,
    uuid                        TEXT,
    parent_uuid                 TEXT,
    logical_parent_uuid         TEXT,
    is_sidechain                INTEGER NOT NULL DEFAULT 0,
    entry_session_id            TEXT,
    agent_id                    TEXT,
    timestamp                   TEXT,
    subtype                     TEXT,
    message_id                  TEXT,
    role                        TEXT,
    is_meta                     INTEGER NOT NULL DEFAULT 0,
    is_compact_summary          INTEGER NOT NULL DEFAULT 0,
    is_api_error                INTEGER NOT NULL DEFAULT 0,
    source_tool_assistant_uuid  TEXT,
    unknown_type                INTEGER NOT NULL DEFAULT 0,
    unknown_fields              INTEGER NOT NULL DEFAULT 0,
    raw                         BLOB NOT NULL
);
-- File order within a transcript: export and every "last wins" rule scan this.
CREATE UNIQUE INDEX idx_rows_transcript_ordinal ON rows(transcript_id, ordinal);
-- The parentUuid walk looks rows up by uuid.
CREATE INDEX idx_rows_transcript_uuid ON rows(transcript_id, uuid) WHERE uuid IS NOT NULL;
-- Leaf choice and tool-result recovery look for children of a row.
CREATE INDEX idx_rows_transcript_parent ON rows(transcript_id, parent_uuid) WHERE parent_uuid IS NOT NULL;
-- Parallel tool-call recovery groups assistant rows by message.id.
CREATE INDEX idx_rows_transcript_message ON rows(transcript_id, message_id) WHERE message_id IS NOT NULL;
-- Tool results name their assistant through sourceToolAssistantUUID when it differs from the parent.
CREATE INDEX idx_rows_transcript_source_tool ON rows(transcript_id, source_tool_assistant_uuid)
    WHERE source_tool_assistant_uuid IS NOT NULL;

-- A compact boundary and what it preserved (spec §5.4, §11).
CREATE TABLE compactions (
    row_id               INTEGER PRIMARY KEY REFERENCES rows(id) ON DELETE CASCADE,
    transcript_id        INTEGER NOT NULL REFERENCES transcripts(id) ON DELETE CASCADE,
    boundary_uuid        TEXT,
    logical_parent_uuid  TEXT,
    trigger              TEXT,
    pre_tokens           INTEGER,
    head_uuid            TEXT,
    anchor_uuid          TEXT,
    tail_uuid            TEXT,
    summary_uuid         TEXT
);
CREATE INDEX idx_compactions_transcript ON compactions(transcript_id);

-- content-replacement records, one row per replacement, keyed by session or agent.
CREATE TABLE content_replacements (
    id                INTEGER PRIMARY KEY,
    row_id            INTEGER NOT NULL REFERENCES rows(id) ON DELETE CASCADE,
    transcript_id     INTEGER NOT NULL REFERENCES transcripts(id) ON DELETE CASCADE,
    entry_session_id  TEXT,
    agent_id          TEXT,
    kind              TEXT,
    tool_use_id       TEXT,
    replacement       TEXT
);
CREATE INDEX idx_content_replacements_transcript ON content_replacements(transcript_id);

-- file-history-snapshot and file-history-delta records; the snapshot itself stays in rows.raw.
CREATE TABLE file_history (
    row_id              INTEGER PRIMARY KEY REFERENCES rows(id) ON DELETE CASCADE,
    transcript_id       INTEGER NOT NULL REFERENCES transcripts(id) ON DELETE CASCADE,
    kind                TEXT NOT NULL,
    message_id          TEXT,
    is_snapshot_update  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_file_history_transcript ON file_history(transcript_id);

-- Session metadata entries (custom-title, tag, summary, ...): "last write wins" is
-- the row with the highest (transcript, ordinal) for a kind and key.
CREATE TABLE metadata (
    row_id            INTEGER PRIMARY KEY REFERENCES rows(id) ON DELETE CASCADE,
    transcript_id     INTEGER NOT NULL REFERENCES transcripts(id) ON DELETE CASCADE,
    kind              TEXT NOT NULL,
    entry_session_id  TEXT,
    leaf_uuid         TEXT,
    value             TEXT
);
CREATE INDEX idx_metadata_transcript_kind ON metadata(transcript_id, kind);

-- The import ledger: what was read from each source file, so that an unchanged file
-- costs one stat and a grown one only its new lines.
CREATE TABLE source_files (
    path            TEXT PRIMARY KEY,
    transcript_id   INTEGER REFERENCES transcripts(id) ON DELETE CASCADE,
    session_file_id INTEGER REFERENCES session_files(id) ON DELETE CASCADE,
    size            INTEGER NOT NULL,
    mtime_ns        INTEGER NOT NULL,
    imported_bytes  INTEGER NOT NULL,
    prefix_hash     INTEGER NOT NULL,
    vanished        INTEGER NOT NULL DEFAULT 0
);
