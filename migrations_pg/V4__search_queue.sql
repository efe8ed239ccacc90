-- V4 (PostgreSQL): an append does not compute its lines' search vectors. `to_tsvector` in the
-- append's INSERT was nearly all of the server's time in a SessionStore append (issue 17);
-- as the SQLite store does since its V6, appended lines are queued and indexed before the
-- next search (`pg::search_queue::catch_up`), or by an idle `serve`.

-- A searchable line stored without its vector yet (its `rows.search` is the empty vector,
-- which matches nothing): the words it is to be searched by, cut as the importer cuts them
-- (`body` weighted A, `tools` D). A line leaves the queue in the transaction that writes its
-- vector, and with its row.
CREATE TABLE search_queue (
    row_id  bigint PRIMARY KEY REFERENCES rows(id) ON DELETE CASCADE,
    body    text,
    tools   text
);
