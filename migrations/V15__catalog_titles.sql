-- V15: the words of each session's titles, indexed, so that a search finds the sessions
-- whose titles match without reading every catalog row (at 100,000 sessions that scan was
-- most of a search's time). Contentless: the catalog holds the text; `rowid` is the
-- catalog's `session_key`. Kept by triggers, in the same transaction as the catalog row.
-- The text is what `search::title_hits` matches: the custom title, the AI title, and a
-- summary that is not the first prompt, one per line.
CREATE VIRTUAL TABLE catalog_titles USING fts5(
    titles,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);

INSERT INTO catalog_titles (rowid, titles)
    SELECT session_key,
           coalesce(custom_title, '') || char(10) || coalesce(ai_title, '') || char(10)
           || coalesce(CASE WHEN summary IS NOT first_prompt THEN summary END, '')
    FROM catalog;

CREATE TRIGGER catalog_titles_insert AFTER INSERT ON catalog BEGIN
    INSERT INTO catalog_titles (rowid, titles) VALUES (new.session_key,
        coalesce(new.custom_title, '') || char(10) || coalesce(new.ai_title, '') || char(10)
        || coalesce(CASE WHEN new.summary IS NOT new.first_prompt THEN new.summary END, ''));
END;

-- Most catalog updates leave the titles as they were: those touch no index.
CREATE TRIGGER catalog_titles_update AFTER UPDATE OF custom_title, ai_title, summary, first_prompt
ON catalog
WHEN old.custom_title IS NOT new.custom_title OR old.ai_title IS NOT new.ai_title
  OR old.summary IS NOT new.summary OR old.first_prompt IS NOT new.first_prompt
BEGIN
    DELETE FROM catalog_titles WHERE rowid = old.session_key;
    INSERT INTO catalog_titles (rowid, titles) VALUES (new.session_key,
        coalesce(new.custom_title, '') || char(10) || coalesce(new.ai_title, '') || char(10)
        || coalesce(CASE WHEN new.summary IS NOT new.first_prompt THEN new.summary END, ''));
END;

CREATE TRIGGER catalog_titles_delete AFTER DELETE ON catalog BEGIN
    DELETE FROM catalog_titles WHERE rowid = old.session_key;
END;
