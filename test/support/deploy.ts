import { assemble, type Deployment } from '../../core/deployment.ts';
import { definePreset, type PluginEntry } from '../../core/config.ts';
import { ManualTimers } from '../../core/scheduler.ts';
import { Clock, type ClockPort } from '../../core/ports/clock.ts';
import type { Token } from '../../core/token.ts';
import { serve, type RunningServer } from '../../hosts/serve.ts';
import { adapterNames, dropSchema, skipPostgresUnlessConfigured, storagePlugin, uniqueSchema, type AdapterName } from './db.ts';

export interface Deployed {
  deployment: Deployment;
  /** The schema holding this deployment's tables (null without a database). */
  schema: string | null;
  /** Background jobs move only when the test advances these timers (then `deployment.scheduler.idle()`). */
  timers: ManualTimers;
  /** Base URL on loopback when served, no trailing slash. */
  base: string | null;
  /** Stop the deployment (and its server); drops the schema unless it was given. */
  close(): Promise<void>;
}

export interface DeployOptions {
  /** Share another deployment's schema (two instances on one database); not dropped on close. */
  schema?: string;
  clock?: ClockPort;
  env?: Record<string, string>;
  overrides?: ReadonlyArray<[Token<any>, unknown]>;
  /** Serve the deployment on a free loopback port (REST endpoints, HTTP routes). */
  serve?: boolean;
}

/**
 * Assemble the given plugins through the real kernel, as a preset would, and start them. With an
 * adapter, the storage plugin comes first, isolated in its own schema; with `null`, no database.
 * Background jobs use manual timers, so nothing runs behind a contract test's back.
 */
export async function deploy(adapter: AdapterName | null, plugins: readonly PluginEntry[], options: DeployOptions = {}): Promise<Deployed> {
  const schema = adapter ? (options.schema ?? uniqueSchema('contract')) : null;
  const storage = adapter ? [await storagePlugin(adapter, schema!)] : [];
  const timers = new ManualTimers();
  const overrides: Array<[Token<any>, unknown]> = [...(options.overrides ?? [])];
  if (options.clock) overrides.push([Clock, options.clock]);
  const deployment = await assemble(definePreset({ name: `contract-${schema ?? 'nodb'}`, plugins: [...storage, ...plugins] }), {
    env: { LOG_LEVEL: 'silent', ...options.env },
    overrides,
    timers,
  });
  let server: RunningServer | null = null;
  if (options.serve) server = await serve(deployment, { port: 0, hostname: '127.0.0.1' });
  else await deployment.start();
  // Jobs that run at start (the search index check, say) finish before the test looks at anything.
  await deployment.scheduler.idle();
  return {
    deployment,
    schema,
    timers,
    base: server ? server.url.href.replace(/\/$/, '') : null,
    async close() {
      if (server) await server.close();
      else await deployment.stop();
      if (adapter && !options.schema) await dropSchema(adapter, schema!);
    },
  };
}

/**
 * Call `register` once per database adapter that can run here; when Postgres cannot, say why
 * (a visible skip with its reason).
 */
export function forEachAdapter(title: string, register: (adapter: AdapterName) => void): void {
  skipPostgresUnlessConfigured(title);
  for (const adapter of adapterNames()) register(adapter);
}
