import { definePlugin } from '../../core/plugin.ts';
import { Endpoints } from '../../core/endpoint.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Auth } from '../../core/ports/auth.ts';
import { EventLog } from '../../core/ports/events.ts';
import { revisionTablesDdl } from '../registry-revisions/store.ts';
import { brandEndpoints } from './endpoints.ts';

/** Brand resolution and community brand saves with revision history. */
export default definePlugin({
  name: 'registry-brands',
  requires: [Database, Auth],
  optional: [EventLog],
  migrations: [
    {
      version: 1,
      name: 'brands',
      sql: `${revisionTablesDdl('brands', 'brand_revisions')}
CREATE INDEX brands_name ON brands (lower(data->>'brand_name'));
CREATE INDEX brands_source ON brands (source);`,
    },
  ],
  register(ctx) {
    ctx.get(Endpoints).add(
      ...brandEndpoints({
        db: ctx.get(Database),
        clock: ctx.get(Clock),
        ids: ctx.get(Ids),
        events: () => ctx.tryGet(EventLog),
      }),
    );
  },
});
