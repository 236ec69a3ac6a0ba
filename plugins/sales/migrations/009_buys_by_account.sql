-- The started buys of an account, by start and by end (their flight's end until they end): conversions
-- (log_event, pixel hits) are attributed to the account's buys serving at their time, and without it
-- every event batch read every buy of every account. Both bounds are in the index, so the buys that
-- started after the events, or ended before them, are passed over without reading their rows.
CREATE INDEX sales_media_buys_account_serving ON sales_media_buys (account_id, started_at, (COALESCE(ended_at, end_time)))
  INCLUDE (media_buy_id) WHERE started_at IS NOT NULL;
