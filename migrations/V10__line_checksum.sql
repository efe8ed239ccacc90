-- V10: a checksum of every stored line, so that bytes damaged on disk (a flipped bit inside a
-- page, which PRAGMA integrity_check does not see) are found by export, resume and
-- `sessiondb check` instead of being handed out as the transcript.
-- `checksum` is the XXH3-64 of `raw` (`integrity::line_checksum`), as a signed integer.
-- Lines stored before this migration have NULL: "not summed yet". A migration cannot hash
-- in Rust, and rewriting every row here would copy the whole database through the WAL on
-- upgrade; `sessiondb check --repair` sums them, and until then they are not checked.
ALTER TABLE rows ADD COLUMN checksum INTEGER;
