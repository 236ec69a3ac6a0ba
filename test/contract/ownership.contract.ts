import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ManualClock } from '../../core/ports/clock.ts';
import type { Principal, Tier } from '../../core/ports/auth.ts';
import type { OwnershipAction, OwnershipPort } from '../../core/ports/ownership.ts';
import { confusableSkeleton } from '../../lib/confusables.ts';

/** An authenticated caller of a fresh organization, able to prove control of a domain as a user would. */
export interface OwnershipCaller {
  principal: Principal;
  prove(domain: string): Promise<void>;
}

export interface OwnershipSubject {
  port: OwnershipPort;
  db: DatabasePort;
  clock: ManualClock;
  caller(tier: Tier): Promise<OwnershipCaller>;
  /** A domain the deployment protects from look-alikes. */
  protectedDomain: string;
  reproveAfterDays: number;
  close(): Promise<void>;
}

const DAY = 86_400_000;
const ACTIONS: OwnershipAction[] = ['create', 'revise', 'rollback'];
let n = 0;
const domain = (label: string) => `${label}-${process.pid}-${n++}.example`;

async function refusal(work: Promise<unknown>): Promise<{ code: string; status: number; details?: Record<string, unknown> }> {
  const error = await work.then(
    () => null,
    (e) => e,
  );
  expect(error).not.toBeNull();
  return error;
}

/** The ownership port contract (core/ports/ownership.ts): proof of control and look-alike refusal. */
export function ownershipContract(name: string, make: () => Promise<OwnershipSubject>): void {
  describe(`ownership contract: ${name}`, () => {
    let s: OwnershipSubject;
    beforeAll(async () => {
      s = await make();
      await s.db.query(sql`CREATE TABLE contract_entries (domain text PRIMARY KEY, skeleton text NOT NULL)`);
    });
    afterAll(async () => {
      await s?.close();
    });
    const inTx = <T>(fn: (tx: Parameters<Parameters<DatabasePort['transaction']>[0]>[0]) => Promise<T>) => s.db.transaction(fn);
    const proven = (p: Principal, d: string, action: OwnershipAction) => inTx((tx) => s.port.assertProven(tx, p, d, action));
    const distinct = (p: Principal, d: string, registered: (skeleton: string) => Promise<string[]>) =>
      inTx((tx) => s.port.assertDistinct(tx, p, d, registered));
    const none = async () => [] as string[];

    test('without a proof, creating, revising and rolling back are refused: 403 OWNERSHIP_PROOF_REQUIRED', async () => {
      const { principal } = await s.caller('member');
      const d = domain('unproven');
      for (const action of ACTIONS) expect(await refusal(proven(principal, d, action))).toMatchObject({ code: 'OWNERSHIP_PROOF_REQUIRED', status: 403 });
    });

    test('a proof covers its organization and its domain only', async () => {
      const [a, b] = [await s.caller('member'), await s.caller('member')];
      const d = domain('proven');
      await a.prove(d);
      for (const action of ACTIONS) await proven(a.principal, d, action);
      expect((await refusal(proven(b.principal, d, 'revise'))).code).toBe('OWNERSHIP_PROOF_REQUIRED');
      expect((await refusal(proven(a.principal, domain('other'), 'create'))).code).toBe('OWNERSHIP_PROOF_REQUIRED');
      expect((await refusal(proven(a.principal, `sub.${d}`, 'create'))).code).toBe('OWNERSHIP_PROOF_REQUIRED');
    });

    test('a proof holds for reproveAfterDays; after that the organization must prove again', async () => {
      const a = await s.caller('member');
      const d = domain('aging');
      await a.prove(d);
      s.clock.advance(s.reproveAfterDays * DAY);
      await proven(a.principal, d, 'revise');
      s.clock.advance(1000);
      expect(await refusal(proven(a.principal, d, 'revise'))).toMatchObject({ code: 'OWNERSHIP_PROOF_REQUIRED', status: 403 });
      await a.prove(d);
      await proven(a.principal, d, 'revise');
    });

    test("currentProofs: every organization's proofs of exactly the domains asked, while within reproveAfterDays", async () => {
      const [a, b] = [await s.caller('member'), await s.caller('member')];
      const [shared, own, unproven] = [domain('shared'), domain('own'), domain('unproven')];
      await a.prove(shared);
      await b.prove(shared);
      await a.prove(own);
      const at = s.clock.now();
      const current = async () =>
        (await s.port.currentProofs([shared, own, unproven, `sub.${own}`])).map((p) => [p.domain, p.orgId, p.method, p.provenAt.toISOString()]);
      expect((await current()).sort()).toEqual(
        [
          [shared, a.principal.orgId, 'dns', at.toISOString()],
          [shared, b.principal.orgId, 'dns', at.toISOString()],
          [own, a.principal.orgId, 'dns', at.toISOString()],
        ].sort(),
      );
      expect(await s.port.currentProofs([])).toEqual([]);
      s.clock.advance(s.reproveAfterDays * DAY);
      expect(await current()).toHaveLength(3);
      s.clock.advance(1000);
      expect(await current()).toEqual([]);
    });

    test('admins moderate without proof and may create look-alikes', async () => {
      const { principal } = await s.caller('admin');
      for (const action of ACTIONS) await proven(principal, domain('moderated'), action);
      await distinct(principal, s.protectedDomain.replace('l', '1'), none);
      await distinct(principal, 'examp1e.com', async () => ['example.com']);
    });

    test('a look-alike of a protected domain is refused (409 CONFUSABLE_DOMAIN); the protected domain itself is not', async () => {
      const { principal } = await s.caller('member');
      const lookalike = s.protectedDomain.replace('l', '1');
      expect(confusableSkeleton(lookalike)).toBe(confusableSkeleton(s.protectedDomain));
      expect(await refusal(distinct(principal, lookalike, none))).toMatchObject({
        code: 'CONFUSABLE_DOMAIN',
        status: 409,
        details: { domain: lookalike, lookalike_of: s.protectedDomain, reason: 'protected' },
      });
      await distinct(principal, s.protectedDomain, none);
    });

    test('a look-alike of a registered domain is refused; registered() is asked with the skeleton; a distinct domain passes', async () => {
      const { principal } = await s.caller('member');
      const asked: string[] = [];
      const registered = async (skeleton: string) => {
        asked.push(skeleton);
        return skeleton === confusableSkeleton('example.com') ? ['example.com'] : [];
      };
      expect(await refusal(distinct(principal, 'examp1e.com', registered))).toMatchObject({
        code: 'CONFUSABLE_DOMAIN',
        status: 409,
        details: { domain: 'examp1e.com', lookalike_of: 'example.com', reason: 'registered' },
      });
      expect(asked).toEqual([confusableSkeleton('examp1e.com')]);
      await distinct(principal, domain('distinct'), registered);
    });

    test('two look-alikes created at once: exactly one passes (creations are serialized before registered() is read)', async () => {
      const { principal } = await s.caller('member');
      const create = (d: string) =>
        inTx(async (tx) => {
          await s.port.assertDistinct(tx, principal, d, async (skeleton) =>
            (await tx.query<{ domain: string }>(sql`SELECT domain FROM contract_entries WHERE skeleton = ${skeleton}::text`)).map((r) => r.domain),
          );
          await tx.query(sql`INSERT INTO contract_entries VALUES (${d}::text, ${confusableSkeleton(d)}::text)`);
        });
      const results = await Promise.allSettled([create('rnicrosoft-contract.example'), create('microsoft-contract.example')]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const [failed] = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
      expect(failed!.reason.code).toBe('CONFUSABLE_DOMAIN');
      expect(await s.db.query(sql`SELECT domain FROM contract_entries`)).toHaveLength(1);
    });
  });
}
