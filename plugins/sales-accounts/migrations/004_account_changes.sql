-- Every instance keeps the accounts it resolves (account-cache.ts). A change to a stored account
-- announces its id on commit, whichever code path made it (another instance, a test-controller
-- scenario, a hand-written UPDATE); truncation announces `*` (drop everything). An inserted account
-- is not announced: nothing kept can name a row that did not exist.
CREATE FUNCTION sales_account_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify('sales_account_changes', '*');
  ELSE
    PERFORM pg_notify('sales_account_changes', OLD.account_id);
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER sales_accounts_changed AFTER UPDATE OR DELETE ON sales_accounts FOR EACH ROW EXECUTE FUNCTION sales_account_changed();
CREATE TRIGGER sales_accounts_truncated AFTER TRUNCATE ON sales_accounts FOR EACH STATEMENT EXECUTE FUNCTION sales_account_changed();
