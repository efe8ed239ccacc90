-- V8 (PostgreSQL): a row's transcript is checked once per statement instead of once per row.
-- The foreign key from rows to transcripts ran its check (a query on transcripts) for each
-- inserted row: about a quarter of the server's time in a 500-entry SessionStore append
-- (issue 17). The same promises, kept by triggers: an INSERT's transcripts exist, locked
-- FOR KEY SHARE as the key locked them, so that deleting one waits for the inserting
-- transaction; deleting a transcript deletes its rows (ON DELETE CASCADE did); a row never
-- moves to another transcript.
ALTER TABLE rows DROP CONSTRAINT rows_transcript_id_fkey;

CREATE FUNCTION rows_transcripts_exist() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    named bigint;
    found bigint;
BEGIN
    SELECT count(DISTINCT transcript_id) INTO named FROM new_rows;
    SELECT count(*) INTO found FROM (
        SELECT 1 FROM transcripts
        WHERE id IN (SELECT transcript_id FROM new_rows) FOR KEY SHARE
    ) locked;
    IF found <> named THEN
        RAISE EXCEPTION 'insert into rows names a transcript that does not exist'
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER rows_transcripts_exist AFTER INSERT ON rows
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION rows_transcripts_exist();

CREATE FUNCTION rows_keep_transcript() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a row cannot move to another transcript'
        USING ERRCODE = 'foreign_key_violation';
END
$$;

CREATE TRIGGER rows_keep_transcript BEFORE UPDATE OF transcript_id ON rows
    FOR EACH ROW WHEN (OLD.transcript_id IS DISTINCT FROM NEW.transcript_id)
    EXECUTE FUNCTION rows_keep_transcript();

CREATE FUNCTION transcripts_delete_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM rows WHERE transcript_id IN (SELECT id FROM gone);
    RETURN NULL;
END
$$;

CREATE TRIGGER transcripts_delete_rows AFTER DELETE ON transcripts
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION transcripts_delete_rows();
