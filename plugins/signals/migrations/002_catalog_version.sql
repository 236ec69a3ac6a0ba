-- Version of the catalog (signals, signal_destinations), bumped by every writing transaction
-- (announceCatalogChange): instances serving the catalog from memory compare it on every answer.
CREATE TABLE signal_catalog_version (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  version bigint NOT NULL
);
INSERT INTO signal_catalog_version (id, version) VALUES (true, 0);
