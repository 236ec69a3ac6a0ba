import { defaultIds } from '../../core/ports/ids.ts';
import type { Token } from '../../core/token.ts';
import type { PluginEntry } from '../../core/config.ts';
import type { Timers } from '../../core/scheduler.ts';
import { Database } from '../../core/ports/database.ts';
import { TaskStore } from '../../core/ports/tasks.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import creative from '../../plugins/creative/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import a2aHost from '../../hosts/a2a/index.ts';
import { createApiKey, createOrganization } from '../../plugins/auth/store.ts';
import { freePort, startServer, type TestServer } from '../support/server.ts';
import type { AdapterName } from '../support/db.ts';

export const TOKEN = 'creative-test-token-0123456789';
export const AGENT_URL = 'https://creative.test.example';

export interface CreativeServer {
  server: TestServer;
  apiKey: string;
  /** Run due build steps now (the task worker is off in tests). */
  runDue(): Promise<number>;
}

type CreativeOptions = Parameters<typeof creative>[0];

/** A creative agent on loopback whose PUBLIC_URL is its real address (previews and files are fetchable). */
export async function startCreativeServer(
  adapter: AdapterName,
  schema: string,
  options: {
    env?: Record<string, string>;
    overrides?: ReadonlyArray<[Token<any>, unknown]>;
    creative?: CreativeOptions;
    extra?: PluginEntry[];
    timers?: Timers;
    /** Plugins replacing the default hosts (REST tasks, MCP, A2A). */
    hosts?: PluginEntry[];
  } = {},
): Promise<CreativeServer> {
  const port = freePort();
  const server = await startServer(
    adapter,
    schema,
    [
      auth({ testTokens: [{ token: TOKEN }] }),
      tasks({ worker: false }),
      idempotency(),
      creative({ agentUrl: AGENT_URL, pruneIntervalMs: 0, ...options.creative }),
      ...(options.hosts ?? [restTasks(), mcpHost(), a2aHost()]),
      ...(options.extra ?? []),
    ],
    { env: { PUBLIC_URL: `http://127.0.0.1:${port}`, ...options.env }, overrides: options.overrides, timers: options.timers, port },
  );
  const db = server.deployment.get(Database);
  const org = await createOrganization(db, defaultIds, { name: `org-${schema}`, tier: 'member' });
  const { key } = await createApiKey(db, defaultIds, { orgId: org.id, name: 'test' });
  return { server, apiKey: key, runDue: () => server.deployment.get(TaskStore).runDue() };
}

export const fid = (id: string, extra: Record<string, unknown> = {}) => ({ agent_url: AGENT_URL, id, ...extra });

/** A brand given in the request (agent-protocol form). */
export const ACME = { url: 'https://acme.example', name: 'Acme Rockets', colors: { primary: '#C8102E', secondary: '#FFD100' } };
export const OFFERINGS = [{ name: 'Rocket Skates', description: 'Go faster than the road runner.', landing_url: 'https://acme.example/skates' }];

/** A complete native_standard manifest. */
export function nativeManifest(overrides: Record<string, unknown> = {}) {
  return {
    format_id: fid('native_standard'),
    assets: {
      title: { asset_type: 'text', content: 'Rocket Skates' },
      description: { asset_type: 'text', content: 'Go faster than the road runner.' },
      main_image: { asset_type: 'image', url: 'https://cdn.acme.example/skates.jpg', width: 1200, height: 627 },
      cta_text: { asset_type: 'text', content: 'Shop now' },
      sponsored_by: { asset_type: 'text', content: 'Acme Rockets' },
      ...overrides,
    },
  };
}
