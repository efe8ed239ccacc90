-- V3 (PostgreSQL): the import ledger keeps the SQLite store's tail fingerprint, and lines are
-- compressed with lz4 where the server has it.

-- The hash of the last 256 KiB of what was imported (SQLite V11, `import::Fingerprint`):
-- a grown file is checked by its tail, and `sync` carries the local ledger entry over as it
-- is, so that an import from the same machine afterwards goes on where the local store
-- stood. NULL in entries written before: their `prefix_hash` covers the whole prefix.
ALTER TABLE source_files ADD COLUMN tail_hash bigint;

-- PostgreSQL compresses long lines (most transcript lines are over its 2 KB threshold)
-- with pglz by default, which took a tenth of the server's time in an import; lz4
-- compresses as well at a fraction of the cost. Servers built without lz4 keep pglz.
DO $$
BEGIN
    ALTER TABLE rows ALTER COLUMN raw SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    NULL;
END
$$;
