-- The public id of an event source's conversion pixel (`GET /events/pixel/{pixel_id}`): what the snippet on the
-- buyer's pages names instead of the caller and source (set when the source is next synced).
ALTER TABLE sales_event_sources ADD COLUMN pixel_id text;
CREATE UNIQUE INDEX sales_event_sources_pixel ON sales_event_sources (pixel_id);
