-- Named pricing options (cpm, percent_of_media, flat_fee, per_unit), as the seed or import gives them; NULL:
-- the one option derived from cpm/currency. And the signal's value type, with its categories or range.
ALTER TABLE signals ADD COLUMN pricing_options jsonb;
ALTER TABLE signals ADD COLUMN value_type text NOT NULL DEFAULT 'binary' CHECK (value_type IN ('binary', 'categorical', 'numeric'));
ALTER TABLE signals ADD COLUMN categories jsonb;
ALTER TABLE signals ADD COLUMN value_range jsonb;
