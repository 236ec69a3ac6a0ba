-- The seller's credit limit for the account (core/account.json credit_limit: {amount, currency}), set by
-- the operator (`bun run sales set-credit-limit`); NULL: the sales plugin's default applies.
ALTER TABLE sales_accounts ADD COLUMN credit_limit jsonb;
