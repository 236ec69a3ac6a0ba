-- get_signals ranks with the catalog's text index in memory (signal-index.ts): the tsvector is unused.
DROP INDEX IF EXISTS signals_search;
ALTER TABLE signals DROP COLUMN IF EXISTS search;
