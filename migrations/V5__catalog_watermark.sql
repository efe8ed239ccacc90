-- V5: a watermark per catalog row, so that a refresh after an append reads only the lines
-- added since the previous refresh instead of the whole session.

-- The main transcript the row was computed from; another one (a rewrite) means a full recompute.
ALTER TABLE catalog ADD COLUMN main_transcript INTEGER;
-- The ordinal of the last line seen; lines from it on are read again (it may have been an
-- unterminated line that an import replaced).
ALTER TABLE catalog ADD COLUMN scanned_ordinal INTEGER NOT NULL DEFAULT -1;
-- Bytes and messages of the lines before scanned_ordinal.
ALTER TABLE catalog ADD COLUMN base_size INTEGER NOT NULL DEFAULT 0;
ALTER TABLE catalog ADD COLUMN base_messages INTEGER NOT NULL DEFAULT 0;
-- Whether the first line is a sidechain record (the SDK then hides the session).
ALTER TABLE catalog ADD COLUMN first_line_sidechain INTEGER NOT NULL DEFAULT 0;
-- Whether first_prompt is only the slash-command fallback (a later real prompt replaces it).
ALTER TABLE catalog ADD COLUMN prompt_is_command INTEGER NOT NULL DEFAULT 0;
