import { TtlCache } from '../../lib/cache.ts';
import { followChanges } from '../../lib/follow-changes.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { Principal } from '../../core/ports/auth.ts';
import type { Logger } from '../../core/log.ts';

/** Channel of migration 003's triggers: `key:<sha256 hex>`, `org:<id>`, `user:<id>`, `identities`, `*`. */
export const CREDENTIAL_CHANGES = 'auth_credential_changes';

/** What a credential resolved to; `keyId` for API keys. */
export interface Resolved {
  principal: Principal;
  keyId?: string;
}

export interface CredentialCacheOptions {
  maxEntries?: number;
  /** Safety net if a change announcement is ever lost; announcements normally drop entries at once. */
  ttlMs?: number;
  /** Unknown credentials are remembered briefly, in their own bounded map (junk cannot evict hits). */
  missTtlMs?: number;
}

/**
 * Per-instance read-through cache of credential lookups, hits and misses, keyed `key:<sha256 hex>`
 * (API keys) or `identity:...` (OAuth subjects). The database announces every change on commit
 * (triggers, migration 003) and each instance drops what the change touches. A lookup that
 * overlaps any change is answered but not kept, so a slow read cannot re-insert a revoked key.
 */
export class CredentialCache {
  private readonly found: TtlCache<string, Resolved>;
  private readonly missing: TtlCache<string, true>;
  private generation = 0;

  constructor(options: CredentialCacheOptions = {}) {
    const max = options.maxEntries ?? 10_000;
    this.found = new TtlCache(max, options.ttlMs ?? 30_000);
    this.missing = new TtlCache(max, options.missTtlMs ?? 5_000);
  }

  async get(key: string, load: () => Promise<Resolved | null>): Promise<Resolved | null> {
    const hit = this.found.get(key);
    if (hit) return hit;
    if (this.missing.has(key)) return null;
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation) {
      if (value) this.found.set(key, value);
      else this.missing.set(key, true);
    }
    return value;
  }

  /** Apply one change announcement; anything not understood drops everything. */
  invalidate(change: string): void {
    this.generation++;
    const colon = change.indexOf(':');
    const [kind, id] = colon < 0 ? [change, ''] : [change.slice(0, colon), change.slice(colon + 1)];
    if (kind === 'key') {
      this.found.delete(change);
      this.missing.delete(change);
    } else if (kind === 'org') {
      this.found.deleteWhere((r) => r.principal.orgId === id);
    } else if (kind === 'user') {
      this.found.deleteWhere((r) => r.principal.userId === id);
    } else if (kind === 'identities') {
      const identity = (_: unknown, key: string) => key.startsWith('identity:');
      this.found.deleteWhere(identity);
      this.missing.deleteWhere(identity);
    } else {
      this.found.clear();
      this.missing.clear();
    }
  }

  /** Follow announcements from every instance (followChanges). */
  follow(db: DatabasePort, logger: Logger): Promise<() => Promise<void>> {
    return followChanges(db, CREDENTIAL_CHANGES, (key) => this.invalidate(key), logger, 'credential');
  }
}
