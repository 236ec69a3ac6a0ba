import { assemble, type Deployment } from '../../core/deployment.ts';
import type { PluginInstance } from '../../core/plugin.ts';
import type { Token } from '../../core/token.ts';
import type { Timers } from '../../core/scheduler.ts';
import { definePreset, type PluginEntry } from '../../core/config.ts';
import { serve, type RunningServer } from '../../hosts/serve.ts';
import { storagePlugin, type AdapterName } from './db.ts';

export interface TestServer {
  deployment: Deployment;
  server: RunningServer;
  /** Base URL on loopback, no trailing slash. */
  base: string;
  fetch(path: string, init?: RequestInit & { json?: unknown; token?: string }): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Assemble the given plugins on the given adapter (isolated in `schema`) and serve them on a free
 * loopback port. The storage plugin is added here; pass every other plugin.
 */
export async function startServer(
  adapter: AdapterName,
  schema: string,
  plugins: readonly PluginEntry[],
  options: { env?: Record<string, string>; overrides?: ReadonlyArray<[Token<any>, unknown]>; timers?: Timers; port?: number } = {},
): Promise<TestServer> {
  const storage: PluginInstance<any> = await storagePlugin(adapter, schema);
  const preset = definePreset({ name: `test-${schema}`, plugins: [storage, ...plugins] });
  const deployment = await assemble(preset, {
    env: {
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      IDLE_COLLECT_MS: process.env.IDLE_COLLECT_MS ?? '0',
      IDLE_SHRINK_MS: process.env.IDLE_SHRINK_MS ?? '0',
      ...options.env,
    },
    overrides: options.overrides,
    timers: options.timers,
  });
  const server = await serve(deployment, { port: options.port ?? 0, hostname: '127.0.0.1' });
  const base = server.url.href.replace(/\/$/, '');
  return {
    deployment,
    server,
    base,
    fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.token) headers.set('authorization', `Bearer ${init.token}`);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set('content-type', 'application/json');
        body = JSON.stringify(init.json);
      }
      return fetch(base + path, { ...init, headers, body });
    },
    close: () => server.close(),
  };
}

/** A loopback port free right now (for servers whose public URL must be known before they start). */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(null) });
  const port = probe.port!;
  probe.stop(true);
  return port;
}
