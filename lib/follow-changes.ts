import type { DatabasePort } from '../core/ports/database.ts';
import type { Logger } from '../core/log.ts';

/**
 * Follow a change channel from every instance into a per-instance cache: each announced key is
 * forgotten; after a reconnect (announcements may have been lost) everything is (`*`). Resolves to
 * the unlisten function.
 */
export function followChanges(db: DatabasePort, channel: string, forget: (key: string) => void, logger: Logger, what: string): Promise<() => Promise<void>> {
  return db.listen(channel, forget, () => {
    logger.warn(`${what} change listener reconnected; ${what} cache cleared`);
    forget('*');
  });
}
