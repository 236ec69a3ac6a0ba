import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { AuthPort, Tier } from '../../core/ports/auth.ts';

export interface IssuedCredential {
  credential: string;
  orgId: string;
  revoke(): Promise<void>;
}

export interface AuthSubject {
  port: AuthPort;
  /** Issue a credential for a new organization of `tier` (bound to a named user when given), as an admin would. */
  issue(tier: Tier, userName?: string): Promise<IssuedCredential>;
  /** A credential configured in the deployment, and the tier it was configured with. */
  configured: { credential: string; tier: Tier };
  close(): Promise<void>;
}

/** The auth port contract (core/ports/auth.ts AuthPort). */
export function authContract(name: string, make: () => Promise<AuthSubject>): void {
  describe(`auth contract: ${name}`, () => {
    let s: AuthSubject;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(async () => {
      await s?.close();
    });

    test("an issued credential resolves to its organization's principal, with the same id every time", async () => {
      for (const tier of ['public', 'member', 'admin'] as const) {
        const issued = await s.issue(tier);
        const principal = await s.port.authenticate(issued.credential);
        expect(principal).toMatchObject({ orgId: issued.orgId, tier });
        expect(principal!.id).toBeString();
        expect((await s.port.authenticate(issued.credential))!.id).toBe(principal!.id);
      }
    });

    test('a credential bound to a user resolves to a principal of its own (the user), in the same organization', async () => {
      const orgLevel = await s.issue('member');
      const userLevel = await s.issue('member', 'Ada');
      const user = (await s.port.authenticate(userLevel.credential))!;
      expect(user).toMatchObject({ orgId: userLevel.orgId, userName: 'Ada' });
      expect(user.id).not.toBe((await s.port.authenticate(orgLevel.credential))!.id);
    });

    test('a revoked credential resolves to null within a second', async () => {
      const issued = await s.issue('member');
      expect(await s.port.authenticate(issued.credential)).not.toBeNull();
      await issued.revoke();
      // Resolutions may be cached; the revocation reaches the cache asynchronously (NOTIFY).
      const deadline = performance.now() + 1000;
      while ((await s.port.authenticate(issued.credential)) !== null && performance.now() < deadline) await Bun.sleep(5);
      expect(await s.port.authenticate(issued.credential)).toBeNull();
    });

    test('unknown and malformed credentials resolve to null and never throw', async () => {
      const issued = await s.issue('member');
      for (const bad of [
        '',
        ' ',
        'x',
        `${issued.credential}x`,
        issued.credential.slice(0, -1),
        issued.credential.toUpperCase(),
        'a'.repeat(100_000),
        '\u0000\u0001',
        '😀'.repeat(20),
        "' OR 1=1 --",
      ]) {
        expect(await s.port.authenticate(bad)).toBeNull();
      }
    });

    test('a configured credential resolves with its configured tier', async () => {
      expect(await s.port.authenticate(s.configured.credential)).toMatchObject({ tier: s.configured.tier });
    });
  });
}
