-- Every instance caches what credentials resolve to (plugins/auth/credential-cache.ts). Any write
-- that can change that announces itself on commit, whichever process or code path made it (the
-- admin CLI, another instance, a hand-written UPDATE): `key:<sha256 hex>`, `org:<id>`,
-- `user:<id>`, `identities`, or `*` (truncation: drop everything). Inserting an organization or a
-- user is not announced: nothing cached can name a row that did not exist.
CREATE FUNCTION auth_credential_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify('auth_credential_changes', '*');
  ELSIF TG_TABLE_NAME = 'api_keys' THEN
    IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('auth_credential_changes', 'key:' || encode(OLD.key_hash, 'hex')); END IF;
    IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('auth_credential_changes', 'key:' || encode(NEW.key_hash, 'hex')); END IF;
  ELSIF TG_TABLE_NAME = 'organizations' THEN
    PERFORM pg_notify('auth_credential_changes', 'org:' || (CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END)::text);
  ELSIF TG_TABLE_NAME = 'users' THEN
    PERFORM pg_notify('auth_credential_changes', 'user:' || (CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END)::text);
  ELSE
    PERFORM pg_notify('auth_credential_changes', 'identities');
  END IF;
  RETURN NULL;
END;
$$;

-- api_keys: not on last_used_at, which every instance touches once a minute per key in use.
CREATE TRIGGER api_keys_credential_changed AFTER INSERT OR DELETE OR UPDATE OF org_id, user_id, key_hash, revoked_at ON api_keys
  FOR EACH ROW EXECUTE FUNCTION auth_credential_changed();
CREATE TRIGGER organizations_credential_changed AFTER DELETE OR UPDATE OF id, name, tier ON organizations
  FOR EACH ROW EXECUTE FUNCTION auth_credential_changed();
CREATE TRIGGER users_credential_changed AFTER DELETE OR UPDATE OF id, org_id, name ON users
  FOR EACH ROW EXECUTE FUNCTION auth_credential_changed();
CREATE TRIGGER user_identities_credential_changed AFTER INSERT OR DELETE OR UPDATE ON user_identities
  FOR EACH ROW EXECUTE FUNCTION auth_credential_changed();
CREATE TRIGGER api_keys_truncated AFTER TRUNCATE ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION auth_credential_changed();
CREATE TRIGGER organizations_truncated AFTER TRUNCATE ON organizations FOR EACH STATEMENT EXECUTE FUNCTION auth_credential_changed();
CREATE TRIGGER users_truncated AFTER TRUNCATE ON users FOR EACH STATEMENT EXECUTE FUNCTION auth_credential_changed();
CREATE TRIGGER user_identities_truncated AFTER TRUNCATE ON user_identities FOR EACH STATEMENT EXECUTE FUNCTION auth_credential_changed();
