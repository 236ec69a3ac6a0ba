-- Product briefs are ranked with the catalog's text index in memory (product-index.ts): the tsvector is unused.
DROP INDEX IF EXISTS inventory_products_search;
ALTER TABLE inventory_products DROP COLUMN IF EXISTS search;
