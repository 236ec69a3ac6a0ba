import * as v from 'valibot';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database, type Queryable } from '../../core/ports/database.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Tasks, type Json, type TaskHandle } from '../../core/task.ts';
import { countSignals, importCatalog } from './catalog.ts';
import { getSignalsTask } from './get-signals.ts';
import { activateSignalTask } from './activate-signal.ts';
import { sql } from '../../core/sql.ts';
import { Clock } from '../../core/ports/clock.ts';
import { TaskStore } from '../../core/ports/tasks.ts';
import { TestController } from '../../core/ports/test-controller.ts';
import { signalsScenarios } from './test-controls.ts';
import { forcedArmScenario, takeForcedArm } from './forced-arm.ts';
import { SignalsCatalog } from './memory-catalog.ts';
import { ActivationReads } from './activation-reads.ts';

export const DEFAULT_SEED = join(import.meta.dir, 'seed.json');

const options = v.object({
  /** Catalog file(s) loaded, in order, when the signals table is empty (first start); `false` to start empty. */
  seed: v.optional(v.union([v.string(), v.array(v.string()), v.literal(false)]), DEFAULT_SEED),
  /** This agent's URL, used in signal_ref of custom/owned signals (default: server.publicUrl). */
  agentUrl: v.optional(v.pipe(v.string(), v.url())),
  /** Force how long activations take, in seconds (test agents); default: each target's estimate. */
  activationDelaySeconds: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(86400))),
  /** Estimated minutes to activate on a sales agent the catalog does not list for the signal. */
  agentActivationMinutes: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(10080)), 60),
});

/**
 * Signals agent: a catalog (marketplace / custom / owned signals, providers, coverage, CPM,
 * per-platform and per-sales-agent deployability) with `get_signals` and asynchronous
 * `activate_signal`.
 */
export default definePlugin({
  name: 'signals',
  deps: { db: Database, ids: Ids, tasks: Tasks, clock: Clock, store: optional(TaskStore), controller: optional(TestController) },
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, ids, tasks, clock, store, controller }, kernel) {
    const { options, config } = kernel;
    const taskOptions = {
      agentUrl: options.agentUrl ?? config.server.publicUrl ?? `http://localhost:${config.server.port}`,
      activationDelaySeconds: options.activationDelaySeconds,
      agentActivationMinutes: options.agentActivationMinutes,
      ...(controller?.active ? { upstreamDown: (q: Queryable, principalId: string, tool: string) => controller.upstreamDown(q, principalId, tool) } : {}),
    };
    // get_signals ranks with this copy of the catalog's text index; every instance reloads it on change notifications.
    const catalog = new SignalsCatalog(db);
    const reads = new ActivationReads(db);
    const unfollow: Array<() => Promise<void>> = [];
    // Only a sandbox deployment (a test controller that serves) looks for forced response arms on get_signals.
    const forced = controller?.active ? { take: (principalId: string, task: TaskHandle) => takeForcedArm(db, clock, principalId, task) } : undefined;
    tasks.add(getSignalsTask(catalog, reads, taskOptions, forced), activateSignalTask(db, ids, catalog, reads, taskOptions));
    const block: Json = { discovery_modes: ['brief'], features: { catalog_signals: true } };
    tasks.declareCapability({ protocol: 'signals', block: { signals: block }, specialisms: ['signal-marketplace', 'signal-owned'] });
    controller?.register(...signalsScenarios(db, clock, store, reads), forcedArmScenario(db, clock));
    controller?.declareUpstreams('activate_signal');
    return {
      async start() {
        if (options.seed && (await countSignals(db)) === 0) {
          for (const file of typeof options.seed === 'string' ? [options.seed] : options.seed) {
            const counts = await importCatalog(db, JSON.parse(readFileSync(file, 'utf8')));
            kernel.logger.info({ seed: file, ...counts }, 'signal catalog seeded');
          }
        }
        // Capabilities list the data providers actually in the catalog.
        const domains = await db.query<{ d: string }>(
          sql`SELECT DISTINCT data_provider_domain AS d FROM signals WHERE data_provider_domain IS NOT NULL ORDER BY 1`,
        );
        if (domains.length) block.data_provider_domains = domains.map((r) => r.d);
        unfollow.push(await catalog.follow(kernel.logger, () => reads.dropAll()), await reads.follow(kernel.logger));
        await catalog.snapshot.get();
      },
      async stop() {
        await Promise.all(unfollow.map((stop) => stop()));
      },
    };
  },
});
