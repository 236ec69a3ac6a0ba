-- The caller (organization) whose comply_test_controller seed_product wrote this product; NULL for the
-- seller's own catalog. Only that caller may seed over it again.
ALTER TABLE inventory_products ADD COLUMN seeded_by text;
