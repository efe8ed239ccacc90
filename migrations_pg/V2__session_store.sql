-- V2 (PostgreSQL): what the Agent SDK's SessionStore protocol needs beside the rows
-- (`sessiondb serve`), as the SQLite store's V7.

-- The storage write time of each stream (transcript) written through the SessionStore API,
-- epoch ms, strictly increasing per stream: the protocol's `mtime`. Imported streams have no
-- row here until the API writes to them (their mtime is the catalog's last_modified).
CREATE TABLE store_streams (
    transcript_id  bigint PRIMARY KEY REFERENCES transcripts(id) ON DELETE CASCADE,
    mtime          bigint NOT NULL
);

-- The SDK-owned summary sidecar of a main session, persisted verbatim (`data` is the JSON the
-- SDK's fold_session_summary returned, never interpreted here; `text`, not `jsonb`, so that
-- it comes back byte for byte). `folded_transcript` and `folded_ordinal` say which stored
-- lines the fold has seen, so a client folds each stored line exactly once, in commit order,
-- and two clients cannot fold over each other.
CREATE TABLE store_summaries (
    session_key        bigint PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    mtime              bigint NOT NULL,
    data               text NOT NULL,
    folded_transcript  bigint NOT NULL,
    folded_ordinal     bigint NOT NULL
);
