import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { ManualTimers } from '../../core/scheduler.ts';
import type { Token } from '../../core/token.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import governance from '../../plugins/governance/index.ts';
import governanceLists from '../../plugins/governance-lists/index.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import a2aHost from '../../hosts/a2a/index.ts';
import { startServer, type TestServer } from '../support/server.ts';
import type { AdapterName } from '../support/db.ts';
import { OTHER_TOKEN, T0, TOKEN } from './fixture.ts';

export { OTHER_TOKEN, TOKEN };
export const POLL_MS = 500;

/** The account reference the storyboards use. */
export const ACME = { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' };
export const NOVA = { brand: { domain: 'novamotors.example' }, operator: 'pinnacle-agency.example' };

export interface ListsServer {
  server: TestServer;
  clock: ManualClock;
  timers: ManualTimers;
}

/**
 * A governance agent with property and collection lists on loopback (MCP, A2A, REST), on a manual
 * clock and manual timers, with signed webhooks (loopback receivers allowed). `overrides` binds
 * ports (a fake PublisherCatalog).
 */
export async function startListsServer(
  adapter: AdapterName,
  schema: string,
  options: { overrides?: ReadonlyArray<[Token<any>, unknown]>; webhooks?: boolean } = {},
): Promise<ListsServer> {
  const clock = new ManualClock(T0);
  const timers = new ManualTimers();
  const server = await startServer(
    adapter,
    schema,
    [
      auth({
        testTokens: [
          { token: TOKEN, name: 'buyer' },
          { token: OTHER_TOKEN, name: 'other buyer' },
        ],
      }),
      tasks({ worker: false }),
      idempotency(),
      governance(),
      governanceLists(),
      ...(options.webhooks === false ? [] : [signerKeyring(), crawlerHttp(), webhooks({ outbox: { pollMs: POLL_MS } })]),
      restTasks(),
      mcpHost(),
      a2aHost(),
    ],
    {
      env: { PROTOCOL_NAMESPACE: 'adcp', DEV_LOOPBACK_WEBHOOKS: 'true' },
      overrides: [[Clock, clock], ...(options.overrides ?? [])],
      timers,
    },
  );
  return { server, clock, timers };
}

let n = 0;
/** A fresh idempotency key. */
export const key = () => `lists-test-${String(++n).padStart(12, '0')}-${crypto.randomUUID().slice(0, 8)}`;
