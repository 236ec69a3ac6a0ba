import auth from '../../plugins/auth/index.ts';
import { ManualClock } from '../../core/ports/clock.ts';
import { Database } from '../../core/ports/database.ts';
import { EventLog, type FeedEvent } from '../../core/ports/events.ts';
import { Ids } from '../../core/ports/ids.ts';
import registryFeed, { readFeed, sequenceEvents } from '../../plugins/registry-feed/index.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { eventLogContract } from './event-log.contract.ts';

// plugins/registry-feed on each adapter; events are read the way GET /api/registry/feed reads them.
forEachAdapter('event log contract', (adapter) =>
  eventLogContract(
    `registry-feed [${adapter}]`,
    async () => {
      const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
      const d = await deploy(adapter, [auth(), registryFeed({ sequenceIntervalMs: 0, retentionIntervalMs: 0 })], { clock });
      const db = d.deployment.get(Database);
      const ids = d.deployment.get(Ids);
      return {
        port: d.deployment.get(EventLog),
        db,
        clock,
        async read(cursor) {
          await sequenceEvents(db, ids);
          const out: FeedEvent[] = [];
          for (;;) {
            const page = await readFeed(db, { cursor, limit: 1000 }, clock.now());
            out.push(...page.events);
            cursor = page.cursor ?? undefined;
            if (!page.has_more) return out;
          }
        },
        close: () => d.close(),
      };
    },
    { concurrentReaders: adapter === 'postgres' },
  ),
);
