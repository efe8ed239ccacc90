-- V4: where a session written by `sessiondb fork` came from. The fork's lines carry no
-- origin (Claude Code's --fork-session writes none), so sessiondb keeps it beside them.
CREATE TABLE forks (
    session_key         INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    -- NULL once the source session is deleted; its ids below stay.
    source_session_key  INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
    source_project      TEXT NOT NULL,
    source_session_id   TEXT NOT NULL,
    -- The --up-to record, when the fork ends at one.
    up_to_uuid          TEXT,
    -- The source record the fork's conversation ends at.
    leaf_uuid           TEXT,
    -- When the fork was made, epoch ms.
    created_at          INTEGER NOT NULL
);
-- "Which sessions were forked from this one" looks forks up by source.
CREATE INDEX idx_forks_source ON forks(source_session_key);
