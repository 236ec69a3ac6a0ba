import { defaultIds } from '../../core/ports/ids.ts';
import type { Token } from '../../core/token.ts';
import type { Timers } from '../../core/scheduler.ts';
import type { PluginEntry } from '../../core/config.ts';
import { Database } from '../../core/ports/database.ts';
import { TaskStore } from '../../core/ports/tasks.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import signals from '../../plugins/signals/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import a2aHost from '../../hosts/a2a/index.ts';
import { createApiKey, createOrganization } from '../../plugins/auth/store.ts';
import { startServer, type TestServer } from '../support/server.ts';
import type { AdapterName } from '../support/db.ts';

export const TOKEN = 'matrix-test-token-0123456789';
export const OTHER_TOKEN = 'matrix-other-token-0123456789';
/** Owner of the seed's custom signals, private agent and restricted targets. */
export const PRIVATE_ORG = '0195f0c0-0000-7000-8000-00000000c0de';

export interface SignalsServer {
  server: TestServer;
  apiKey: string;
  /** Run due task steps now (the worker is off in tests, so progress is deterministic). */
  runDue(): Promise<number>;
}

export async function startSignalsServer(
  adapter: AdapterName,
  schema: string,
  options: {
    env?: Record<string, string>;
    overrides?: ReadonlyArray<[Token<any>, unknown]>;
    idempotency?: Record<string, number>;
    extra?: PluginEntry[];
    timers?: Timers;
    signals?: Record<string, unknown>;
  } = {},
): Promise<SignalsServer> {
  const server = await startServer(
    adapter,
    schema,
    [
      auth({ testTokens: [{ token: TOKEN }, { token: OTHER_TOKEN, name: 'other' }] }),
      tasks({ worker: false }),
      idempotency(options.idempotency as any),
      signals({ activationDelaySeconds: 0, agentUrl: 'https://signals.test.example/mcp', ...options.signals }),
      restTasks(),
      mcpHost(),
      a2aHost(),
      ...(options.extra ?? []),
    ],
    { env: options.env, overrides: options.overrides, timers: options.timers },
  );
  const db = server.deployment.get(Database);
  const org = await createOrganization(db, defaultIds, { name: `org-${schema}`, tier: 'member' });
  const { key } = await createApiKey(db, defaultIds, { orgId: org.id, name: 'test' });
  return { server, apiKey: key, runDue: () => server.deployment.get(TaskStore).runDue() };
}
