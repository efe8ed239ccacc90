-- V11: the import ledger checks the end of what it imported from a file, not all of it.
-- `tail_hash` is a hash of the last 262144 bytes (256 KiB) of the imported prefix, or of all
-- of it when shorter (`import::TAIL_BYTES` and `import::Fingerprint` in the code). A file
-- that grew is then read from there instead of from its start: capturing one turn of a long
-- session read and hashed the whole transcript again.
-- Entries written before keep their `prefix_hash` (a hash of the whole prefix) and a NULL
-- `tail_hash`: the next import of the file checks the whole prefix once more and fills
-- `tail_hash`. Entries written since store 0 in `prefix_hash`.
ALTER TABLE source_files ADD COLUMN tail_hash INTEGER;
