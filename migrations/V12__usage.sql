-- V12: the usage projection (docs/usage.md): one row per billed API response, filled from
-- each assistant record (and each sub-agent response inside a progress record) in the same
-- transaction that stores the line. Existing databases are filled by the step that runs
-- after this migration (`usage::sqlite::rebuild`), and `reindex` rebuilds it.
CREATE TABLE usage_responses (
    id                        INTEGER PRIMARY KEY,
    -- The row that holds the counts kept (not a foreign key: a replaced unterminated last
    -- line is deleted and stored again, and takes the response back by its key).
    row_id                    INTEGER NOT NULL,
    session_id                INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    -- message.id and requestId ('' when the record has none): one response, one row.
    message_id                TEXT,
    request_id                TEXT NOT NULL,
    agent_id                  TEXT,
    model                     TEXT,
    ts                        INTEGER NOT NULL,
    cwd                       TEXT,
    git_branch                TEXT,
    input_tokens              INTEGER NOT NULL,
    output_tokens             INTEGER NOT NULL,
    cache_creation_tokens     INTEGER NOT NULL,
    cache_creation_1h_tokens  INTEGER NOT NULL,
    cache_read_tokens         INTEGER NOT NULL,
    web_search_requests       INTEGER NOT NULL,
    service_tier              TEXT,
    speed                     TEXT,
    cost_usd                  REAL
);
-- The dedupe rule: a response seen again (streamed part, fork, resumed copy, replay) is
-- found by its key. Records without a message id (NULL) are each counted.
CREATE UNIQUE INDEX idx_usage_responses_key ON usage_responses(message_id, request_id);
-- Deleting a session deletes its responses; the session report reads by session.
CREATE INDEX idx_usage_responses_session ON usage_responses(session_id);
-- The status line reads today's responses.
CREATE INDEX idx_usage_responses_ts ON usage_responses(ts);

-- The stable interface for sqlite3 users: one row per response, with its session and
-- project by name and its time as ISO 8601 UTC.
CREATE VIEW usage AS
SELECT u.id, p.key AS project, s.session_id AS session, u.agent_id AS agent, u.cwd,
       u.git_branch AS branch, NULL AS host, u.model, u.request_id, u.message_id,
       strftime('%Y-%m-%dT%H:%M:%fZ', u.ts / 1000.0, 'unixepoch') AS timestamp,
       u.input_tokens, u.output_tokens, u.cache_creation_tokens,
       u.cache_creation_1h_tokens, u.cache_creation_tokens - u.cache_creation_1h_tokens
           AS cache_creation_5m_tokens,
       u.cache_read_tokens, u.web_search_requests, u.service_tier, u.speed, u.cost_usd
FROM usage_responses u JOIN sessions s ON s.id = u.session_id JOIN projects p ON p.id = s.project_id;

-- Tokens per UTC day and model (costs come from `sessiondb stats`, which owns the prices).
CREATE VIEW usage_daily AS
SELECT strftime('%Y-%m-%d', ts / 1000, 'unixepoch') AS day, model,
       count(*) AS responses, sum(input_tokens) AS input_tokens,
       sum(output_tokens) AS output_tokens, sum(cache_creation_tokens) AS cache_creation_tokens,
       sum(cache_read_tokens) AS cache_read_tokens, sum(web_search_requests) AS web_search_requests,
       sum(cost_usd) AS recorded_cost_usd
FROM usage_responses GROUP BY day, model;
