-- V8: which lines were written by sessiondb itself (`append`, `tag`, `rename`, `fork`, a
-- SessionStore append) rather than read from a source file. When a re-import finds the
-- source file rewritten, these lines are carried over to the new version of the transcript
-- (unless the new file already holds them), so local writes do not vanish with the old one.
-- Lines written before this migration read as imported (0).
ALTER TABLE rows ADD COLUMN local INTEGER NOT NULL DEFAULT 0;
