-- When a publisher's valid adagents.json was last handed to the AdagentsRecords port (registry-properties),
-- so property resolution serves every publisher the projection knows, including rows written without the
-- crawl pipeline (demo seed, imports, crawls made before registry-properties was deployed).
ALTER TABLE registry_publishers ADD COLUMN adagents_recorded_at timestamptz;
CREATE INDEX registry_publishers_unrecorded ON registry_publishers (domain) WHERE adagents_valid AND adagents_recorded_at IS NULL;
