-- Who may read an event, decided when it is written (the writer knows the entity's visibility),
-- so the feed filters without reading other plugins' tables: public to every key, members_only to
-- member and admin keys, private to the owning organization only.
ALTER TABLE registry_event_staging
  ADD COLUMN visibility text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'members_only', 'private')),
  ADD COLUMN owner_org_id uuid;
ALTER TABLE registry_events
  ADD COLUMN visibility text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'members_only', 'private')),
  ADD COLUMN owner_org_id uuid;
