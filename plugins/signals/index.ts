import * as v from 'valibot';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Tasks, type Json } from '../../core/task.ts';
import { countSignals, importCatalog } from './catalog.ts';
import { activateSignalTask, getSignalsTask } from './tasks.ts';
import { sql } from '../../core/sql.ts';

export const DEFAULT_SEED = join(import.meta.dir, 'seed.json');

const options = v.object({
  /** Catalog loaded when the signals table is empty (first start); `false` to start empty. */
  seed: v.optional(v.union([v.string(), v.literal(false)]), DEFAULT_SEED),
  /** This agent's URL, used in signal_ref of custom/owned signals (default: server.publicUrl). */
  agentUrl: v.optional(v.pipe(v.string(), v.url())),
  /** Force how long activations take, in seconds (test agents); default: each target's estimate. */
  activationDelaySeconds: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(86400))),
});

/**
 * Signals agent: a catalog (marketplace / custom / owned signals, providers, coverage, CPM,
 * per-platform and per-sales-agent deployability) with `get_signals` and asynchronous
 * `activate_signal`.
 */
export default definePlugin({
  name: 'signals',
  requires: [Database, Tasks],
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  register(ctx) {
    const db = ctx.get(Database);
    const taskOptions = {
      agentUrl: ctx.options.agentUrl ?? ctx.config.server.publicUrl ?? `http://localhost:${ctx.config.server.port}`,
      activationDelaySeconds: ctx.options.activationDelaySeconds,
    };
    const registry = ctx.get(Tasks);
    registry.add(getSignalsTask(db, taskOptions), activateSignalTask(db, ctx.get(Ids), taskOptions));
    const block: Json = { discovery_modes: ['brief'], features: { catalog_signals: true } };
    registry.declareCapability({ protocol: 'signals', block: { signals: block } });
    blocks.set(ctx, block);
  },
  async start(ctx) {
    const db = ctx.get(Database);
    if (ctx.options.seed && (await countSignals(db)) === 0) {
      const counts = await importCatalog(db, JSON.parse(readFileSync(ctx.options.seed, 'utf8')));
      ctx.logger.info({ seed: ctx.options.seed, ...counts }, 'signal catalog seeded');
    }
    // Capabilities list the data providers actually in the catalog.
    const domains = await db.query<{ d: string }>(sql`SELECT DISTINCT data_provider_domain AS d FROM signals WHERE data_provider_domain IS NOT NULL ORDER BY 1`);
    if (domains.length) blocks.get(ctx)!.data_provider_domains = domains.map((r) => r.d);
  },
});

const blocks = new WeakMap<object, Json>();
