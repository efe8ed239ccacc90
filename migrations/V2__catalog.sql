-- V2: the session catalog. One row per session, recomputed by `catalog::refresh_session` in
-- the same transaction as every write that touches the session (import, append, rename,
-- tag), so that listing and filtering never scan transcript rows.

-- Per-session summary, field names after the Agent SDK's SDKSessionInfo where it has one.
CREATE TABLE catalog (
    session_key     INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    session_id      TEXT NOT NULL,
    project_id      INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    -- 1 when the SDK's listing rules show the session: a non-empty main file whose first
    -- line is not a sidechain record, and some title, summary or prompt to show.
    listed          INTEGER NOT NULL,
    summary         TEXT,
    custom_title    TEXT,
    user_title      TEXT,
    ai_title        TEXT,
    last_prompt     TEXT,
    summary_record  TEXT,
    first_prompt    TEXT,
    git_branch      TEXT,
    cwd             TEXT,
    tag             TEXT,
    created_at      INTEGER,
    first_timestamp TEXT,
    last_timestamp  TEXT,
    last_modified   INTEGER NOT NULL,
    -- When sessiondb itself last wrote to the session (rename, tag, append), epoch ms.
    written_at      INTEGER,
    file_size       INTEGER NOT NULL,
    message_count   INTEGER NOT NULL,
    subagent_count  INTEGER NOT NULL,
    -- 'present', 'vanished' (the source file is gone; rows are kept) or 'none' (never
    -- imported from a file: written through the API).
    source_state    TEXT NOT NULL,
    -- Lower-cased titles, summary and first prompt joined by newlines: what --name searches.
    name_text       TEXT NOT NULL
);
-- The listing is newest first; this index gives the order and makes LIMIT cheap.
CREATE INDEX idx_catalog_last_modified ON catalog(last_modified DESC, session_id DESC);
-- The all-projects listing keeps one entry per session id (the newest), looked up here.
CREATE INDEX idx_catalog_session_id ON catalog(session_id);
-- --tag and --branch filters.
CREATE INDEX idx_catalog_tag ON catalog(tag) WHERE tag IS NOT NULL;
CREATE INDEX idx_catalog_git_branch ON catalog(git_branch) WHERE git_branch IS NOT NULL;
-- Resolving a SESSION argument by its exact custom title.
CREATE INDEX idx_catalog_custom_title ON catalog(custom_title) WHERE custom_title IS NOT NULL;
-- Refreshing the catalog after a vanished source file finds the session by its transcript.
CREATE INDEX idx_source_files_transcript ON source_files(transcript_id);
