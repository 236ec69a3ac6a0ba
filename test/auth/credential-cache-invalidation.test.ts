/** What each change announcement drops from the credential cache, without a database. */
import { expect, test } from 'bun:test';
import type { Principal } from '../../core/ports/auth.ts';
import { CredentialCache, type Resolved } from '../../plugins/auth/credential-cache.ts';

const principal = (orgId: string, userId?: string): Resolved => ({
  principal: { id: `org:${orgId}`, orgId, orgName: orgId, tier: 'member', kind: 'api_key', ...(userId ? { userId } : {}) } as Principal,
  keyId: 'k',
});

/** Fill the cache, apply `change`, and say which of the keys are loaded again. */
async function reloadedAfter(change: string): Promise<string[]> {
  const cache = new CredentialCache();
  const values: Record<string, Resolved | null> = {
    'key:aa': principal('o1'),
    'key:bb': principal('o2', 'u1'),
    'key:cc': null,
    'identity:external:https://idp\nalice': principal('o3', 'u2'),
    'identity:external:https://idp\nbob': null,
  };
  for (const [k, v] of Object.entries(values)) await cache.get(k, async () => v);
  cache.invalidate(change);
  const reloaded: string[] = [];
  for (const [k, v] of Object.entries(values))
    await cache.get(k, async () => {
      reloaded.push(k);
      return v;
    });
  return reloaded;
}

test('each announcement drops what it names, hits and misses alike; anything else drops everything', async () => {
  expect(await reloadedAfter('key:aa')).toEqual(['key:aa']);
  expect(await reloadedAfter('key:cc')).toEqual(['key:cc']);
  expect(await reloadedAfter('org:o2')).toEqual(['key:bb']);
  expect(await reloadedAfter('user:u2')).toEqual(['identity:external:https://idp\nalice']);
  expect(await reloadedAfter('identities')).toEqual(['identity:external:https://idp\nalice', 'identity:external:https://idp\nbob']);
  expect(await reloadedAfter('*')).toHaveLength(5);
  expect(await reloadedAfter('something-new')).toHaveLength(5);
});

test('a lookup overlapping a change is answered but not kept', async () => {
  const cache = new CredentialCache();
  let release!: () => void;
  const slow = cache.get('key:aa', () => new Promise<Resolved>((resolve) => (release = () => resolve(principal('o1')))));
  cache.invalidate('key:aa');
  release();
  expect(await slow).toMatchObject({ principal: { orgId: 'o1' } });
  let loads = 0;
  await cache.get('key:aa', async () => {
    loads++;
    return principal('o1');
  });
  expect(loads).toBe(1);
});
