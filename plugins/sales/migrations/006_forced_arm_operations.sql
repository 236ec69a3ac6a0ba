-- Forced response arms name the operation they answer (force_create_media_buy_arm, force_get_products_arm):
-- one directive per caller, account and operation.
ALTER TABLE sales_forced_arms ADD COLUMN operation text NOT NULL DEFAULT 'create_media_buy' CHECK (operation IN ('create_media_buy', 'get_products'));
ALTER TABLE sales_forced_arms DROP CONSTRAINT sales_forced_arms_pkey;
ALTER TABLE sales_forced_arms ADD PRIMARY KEY (owner, account_id, operation);
