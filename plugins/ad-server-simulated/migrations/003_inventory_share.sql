-- The share of a line's product inventory its targeting leaves (a property list keeps only its publishers):
-- delivery scales with it; 0 never delivers.
ALTER TABLE adsim_lines ADD COLUMN inventory_share numeric NOT NULL DEFAULT 1 CHECK (inventory_share >= 0 AND inventory_share <= 1);
