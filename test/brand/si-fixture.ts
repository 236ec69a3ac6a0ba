/**
 * The brand agent with sponsored intelligence over a real server, shared by the SI tests: two hosts'
 * tokens, one configured offering (Nova's Volta EV) and a default one, Nova's brand.json in the registry.
 */
import { expect } from 'bun:test';
import { Database } from '../../core/ports/database.ts';
import { BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import { Clock, type ManualClock } from '../../core/ports/clock.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import brandAgent from '../../plugins/brand-agent/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { bothVersionsErrors } from '../support/schemas.ts';

export const TOKEN = 'si-test-token-0123456789abcdef';
export const OTHER = 'si-other-token-0123456789abcdef';
export const VOLTA = {
  product_id: 'volta_lr',
  name: 'Volta EV Long Range',
  description: 'Electric SUV with 320 miles of range for road trips.',
  price: '$46,900',
};
export const OFFERING = {
  offering_id: 'nova_volta',
  brand: 'nova.example',
  title: 'Nova Motors: the Volta EV',
  summary: 'Ask about the Volta EV.',
  landing_url: 'https://nova.example/volta',
  products: [VOLTA, { product_id: 'volta_std', name: 'Volta EV Standard', description: 'Electric SUV for daily driving.', price: '$41,900' }],
};
const NOVA_BRAND_JSON = {
  house: { domain: 'nova.example', name: 'Nova Motors' },
  brands: [
    { id: 'nova_motors', url: 'https://nova.example', names: [{ en: 'Nova Motors' }], description: 'Electric vehicles.', tagline: 'Electric, all the way' },
  ],
};
export const valid = (file: string, body: unknown) => expect(bothVersionsErrors(`sponsored-intelligence/${file}`, body)).toEqual([]);

export async function siServer(adapter: 'pglite' | 'postgres', schema: string, extra: unknown[] = [], clock?: ManualClock): Promise<TestServer> {
  const s = await startServer(
    adapter,
    schema,
    [
      auth({
        testTokens: [
          { token: TOKEN, name: 'host-a' },
          { token: OTHER, name: 'host-b' },
        ],
      }),
      rateLimit(),
      registryBrands(),
      tasks({ worker: false }),
      idempotency(),
      brandAgent({ brands: ['nova.example', 'plain.example'], si: { offerings: [OFFERING], sessionTtlSeconds: 600 } }),
      restTasks(),
      ...(extra as never[]),
    ],
    { env: { PROTOCOL_NAMESPACE: 'adcp' }, overrides: clock ? [[Clock, clock]] : [] },
  );
  const records = s.deployment.get(BrandJsonRecords);
  await s.deployment.get(Database).transaction((tx) => records.record(tx, 'nova.example', NOVA_BRAND_JSON));
  return s;
}

let n = 0;
export const key = () => `si-test-key-${String(++n).padStart(8, '0')}-${Date.now()}`;
export const identity = { consent_granted: true, consent_scope: ['name', 'locale'], user: { name: 'Dana', locale: 'en-US', email: 'dana@example.com' } };
