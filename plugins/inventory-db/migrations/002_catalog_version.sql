-- Bumped by every write of the product catalog, in the writing transaction: an answer from an
-- instance's in-memory copy is exact when the version it was loaded at is still this one.
CREATE TABLE inventory_catalog_version (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  version bigint NOT NULL
);
INSERT INTO inventory_catalog_version (id, version) VALUES (true, 0);
