-- V7 (PostgreSQL): the search queue holds one row per append instead of one per line. V4's
-- queue stored each appended line's words beside it: a row, a primary-key entry and a
-- foreign-key check per line, about a third of the server's time in a 500-entry
-- SessionStore append (issue 17). A run names the append's lines by their ordinals, and the
-- catch-up (`pg::search_queue::catch_up`) cuts their words from the stored bytes, with the
-- reader import uses, when it writes their vectors.

-- A run of appended lines, `first_ordinal` to `last_ordinal` of one transcript, whose
-- searchable lines hold the empty vector until a catch-up writes theirs. A catch-up that
-- indexes part of a run moves `first_ordinal` past what it wrote. A run leaves the queue in
-- the transaction that writes its last vectors, and with its transcript.
CREATE TABLE search_queue_runs (
    transcript_id bigint NOT NULL REFERENCES transcripts(id) ON DELETE CASCADE,
    first_ordinal bigint NOT NULL,
    last_ordinal  bigint NOT NULL,
    PRIMARY KEY (transcript_id, first_ordinal)
);

-- Lines V4 queued: their vectors written now, from their queued words, by import's own
-- expression (`pg::import::SEARCH_VECTOR`), and V4's queue dropped.
UPDATE rows r SET search =
        setweight(to_tsvector('simple', coalesce(q.body, '')), 'A')
        || setweight(to_tsvector('simple', coalesce(q.tools, '')), 'D')
    FROM search_queue q WHERE r.id = q.row_id;
DROP TABLE search_queue;
