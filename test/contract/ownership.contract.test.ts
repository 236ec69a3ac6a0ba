import { expect } from 'bun:test';
import { Auth } from '../../core/ports/auth.ts';
import { ManualClock } from '../../core/ports/clock.ts';
import { Database } from '../../core/ports/database.ts';
import { Ownership } from '../../core/ports/ownership.ts';
import auth from '../../plugins/auth/index.ts';
import crawlerHttp, { type Resolver } from '../../plugins/crawler-http/index.ts';
import registryOwnership from '../../plugins/registry-ownership/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { newKey } from '../support/principals.ts';
import { ownershipContract } from './ownership.contract.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

// plugins/registry-ownership on each adapter, served: callers prove control through its challenge
// and verify endpoints, with DNS TXT answers from a table.
forEachAdapter('ownership contract', (adapter) =>
  ownershipContract(`registry-ownership [${adapter}]`, async () => {
    const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
    const txt: Record<string, string[][]> = {};
    const resolver: Resolver = {
      lookup: async (host) => Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })),
      resolveTxt: async (name) => txt[name] ?? Promise.reject(Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' })),
    };
    const protectedDomain = 'paypal.com';
    const reproveAfterDays = 30;
    const d = await deploy(
      adapter,
      [
        auth(),
        crawlerHttp({ resolver }),
        rateLimit(),
        registryOwnership({ protectedDomains: [protectedDomain], reproveAfterDays, pruneIntervalMs: 0 }),
        restHost(),
      ],
      { clock, serve: true },
    );
    const post = (path: string, key: string, json: unknown) =>
      fetch(`${d.base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(json),
      });
    return {
      port: d.deployment.get(Ownership),
      db: d.deployment.get(Database),
      clock,
      protectedDomain,
      reproveAfterDays,
      async caller(tier) {
        const { key } = await newKey(d.deployment, tier);
        const principal = (await d.deployment.get(Auth).authenticate(key))!;
        return {
          principal,
          async prove(domain) {
            const challenge = await post('/api/ownership/challenge', key, { domain });
            expect(challenge.status).toBe(200);
            const { dns } = (await challenge.json()) as { dns: { name: string; value: string } };
            txt[dns.name] = [[dns.value]];
            expect((await post('/api/ownership/verify', key, { domain, method: 'dns' })).status).toBe(200);
          },
        };
      },
      close: () => d.close(),
    };
  }),
);
