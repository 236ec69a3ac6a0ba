import { TtlCache } from '../../lib/cache.ts';
import { followChanges } from '../../lib/follow-changes.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { Logger } from '../../core/log.ts';

/** Channel of migration 002's trigger: a grant id, or `*` (truncation). */
export const GRANT_CHANGES = 'oauth_grant_changes';

/**
 * Grants this instance found live, so verifying a built-in access token costs no query. Revoked
 * grants are not remembered (they are rare and stay revoked). Every revocation reaches every
 * instance on commit (trigger + NOTIFY); the instance that revoked also forgets at once, so its
 * own next answer is already 401. A lookup that overlaps a change is answered but not kept.
 */
export class LiveGrants {
  private readonly live: TtlCache<string, true>;
  private generation = 0;

  constructor(options: { maxEntries?: number; ttlMs?: number } = {}) {
    this.live = new TtlCache(options.maxEntries ?? 10_000, options.ttlMs ?? 30_000);
  }

  async revoked(grantId: string, load: (grantId: string) => Promise<boolean>): Promise<boolean> {
    if (this.live.has(grantId)) return false;
    const generation = this.generation;
    const revoked = await load(grantId);
    if (!revoked && generation === this.generation) this.live.set(grantId, true);
    return revoked;
  }

  /** Forget one grant, or every grant (`*`). */
  forget(grantId: string): void {
    this.generation++;
    if (grantId === '*') this.live.clear();
    else this.live.delete(grantId);
  }

  /** Follow revocations from every instance (followChanges). */
  follow(db: DatabasePort, logger: Logger): Promise<() => Promise<void>> {
    return followChanges(db, GRANT_CHANGES, (key) => this.forget(key), logger, 'grant');
  }
}
