-- Conversions the buyer logged, attributed to one line serving at the conversion's time.
CREATE TABLE adsim_conversions (
  media_buy_id text NOT NULL,
  package_id text NOT NULL,
  conversion_key text NOT NULL,
  event_type text NOT NULL,
  at timestamptz NOT NULL,
  value numeric(16, 2),
  PRIMARY KEY (media_buy_id, conversion_key),
  FOREIGN KEY (media_buy_id, package_id) REFERENCES adsim_lines (media_buy_id, package_id) ON DELETE CASCADE
);
CREATE INDEX adsim_conversions_line ON adsim_conversions (media_buy_id, package_id, at);

-- Delivery injected by sandbox test controls, counted on top of the model (its spend lowers the model's budget).
CREATE TABLE adsim_injected (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  media_buy_id text NOT NULL,
  package_id text NOT NULL,
  at timestamptz NOT NULL,
  impressions bigint NOT NULL CHECK (impressions >= 0),
  clicks bigint NOT NULL CHECK (clicks >= 0),
  spend numeric(16, 2) NOT NULL CHECK (spend >= 0),
  FOREIGN KEY (media_buy_id, package_id) REFERENCES adsim_lines (media_buy_id, package_id) ON DELETE CASCADE
);
CREATE INDEX adsim_injected_line ON adsim_injected (media_buy_id, package_id, at);
