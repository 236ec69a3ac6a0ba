import { expect, test } from 'bun:test';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import type { ReloadableSigner } from '../../plugins/signer-keyring/keyring.ts';
import { revokeKey, rotateKey } from '../../plugins/signer-keyring/store.ts';
import { verifyKeyFrom, verifyRaw } from '../../lib/signer/keys.ts';
import { ResponseSigner, Signer, type SignatureAlg } from '../../core/ports/signer.ts';
import { definePlugin } from '../../core/plugin.ts';
import { Database } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { REFERENCE } from '../support/reference.ts';

const keysFile = JSON.parse(await Bun.file(join(REFERENCE, 'test-vectors/webhook-signing/keys.json')).text());
const env = { PROTOCOL_NAMESPACE: 'adcp' };

async function roundTrip(signer: ReloadableSigner, alg: SignatureAlg) {
  const key = signer.active();
  expect(key.alg).toBe(alg);
  const data = new TextEncoder().encode('signature base');
  const sig = await key.sign(data);
  expect(sig.length).toBe(64); // Ed25519, and P-256 as raw r||s
  const pub = await verifyKeyFrom(key.publicJwk, alg);
  expect(await verifyRaw(pub, alg, sig, data)).toBe(true);
  expect(await verifyRaw(pub, alg, sig, new TextEncoder().encode('other'))).toBe(false);
}

forEachDatabase(
  'signer adapters',
  async (adapter, schema) => ({ adapter, schema }),
  async () => {},
  (get) => {
    for (const alg of ['ed25519', 'ecdsa-p256-sha256'] as const) {
      const plugin = () => signerKeyring({ alg });
      test(`${alg}: generated on first start, persisted, published as JWKS; rotation and revocation`, async () => {
        const { adapter, schema } = get();
        const first: TestServer = await startServer(adapter, schema, [plugin()], { env });
        let second: TestServer | null = null;
        try {
          const signer = first.deployment.get(Signer) as ReloadableSigner;
          await roundTrip(signer, alg);
          const kid = signer.active().keyid;
          // A second instance on the same database uses the persisted key, not a new one.
          second = await startServer(adapter, schema, [plugin()], { env });
          expect(second.deployment.get(Signer).active().keyid).toBe(kid);

          const res = await first.fetch('/.well-known/jwks.json');
          expect(res.status).toBe(200);
          const jwks = (await res.json()) as { keys: any[] };
          const published = jwks.keys.find((k) => k.kid === kid);
          expect(published).toMatchObject({ use: 'sig', key_ops: ['verify'], adcp_use: 'webhook-signing' });
          expect(published.d).toBeUndefined();

          const db = first.deployment.get(Database);
          const next = await rotateKey(db, alg, 'adcp', new Date());
          await signer.reload();
          expect(signer.active().keyid).toBe(next);
          expect(signer.jwks().keys.map((k) => k.kid)).toEqual(expect.arrayContaining([kid, next]));

          await revokeKey(db, kid, 'adcp', new Date());
          await signer.reload();
          expect(signer.jwks().keys.map((k) => k.kid)).not.toContain(kid);
          expect(signer.revocations().keyids).toContain(kid);
          const rev = (await (await first.fetch('/.well-known/jwks-revocations.json')).json()) as any;
          expect(rev.keyids).toContain(kid);
          await roundTrip(signer, alg);
        } finally {
          await first.close();
          await second?.close();
        }
      }, 30_000);
    }

    test('response-signing keys: kept and published only when a feature enables them, apart from the webhook keys', async () => {
      const { adapter, schema } = get();
      const enabler = definePlugin({
        name: 'signs-responses',
        deps: { responseSigner: ResponseSigner },
        init({ responseSigner }) {
          responseSigner.enable();
        },
      });
      const plain = await startServer(adapter, `${schema}_resp`, [signerKeyring()], { env });
      try {
        const jwks = (await (await plain.fetch('/.well-known/jwks.json')).json()) as { keys: any[] };
        expect(jwks.keys.map((k) => k.adcp_use)).toEqual(['webhook-signing']);
        expect(() => plain.deployment.get(ResponseSigner).active()).toThrow(/not enabled/);
      } finally {
        await plain.close();
      }
      const first = await startServer(adapter, `${schema}_resp`, [signerKeyring(), enabler()], { env });
      const second = await startServer(adapter, `${schema}_resp`, [signerKeyring(), enabler()], { env });
      try {
        const responses = first.deployment.get(ResponseSigner);
        const webhooks = first.deployment.get(Signer) as ReloadableSigner;
        const kid = responses.active().keyid;
        expect(kid).not.toBe(webhooks.active().keyid);
        expect(second.deployment.get(ResponseSigner).active().keyid).toBe(kid);
        const jwks = (await (await first.fetch('/.well-known/jwks.json')).json()) as { keys: any[] };
        expect(jwks.keys.find((k) => k.kid === kid)).toMatchObject({ use: 'sig', key_ops: ['verify'], adcp_use: 'response-signing' });
        expect(jwks.keys.find((k) => k.kid === webhooks.active().keyid)?.adcp_use).toBe('webhook-signing');
        const data = new TextEncoder().encode('payload');
        expect(await verifyRaw(await verifyKeyFrom(responses.active().publicJwk, 'ed25519'), 'ed25519', await responses.active().sign(data), data)).toBe(true);
        // Rotating one purpose leaves the other's active key alone; revoking a response key lists it.
        const db = first.deployment.get(Database);
        const webhookKid = webhooks.active().keyid;
        const next = await rotateKey(db, 'ed25519', 'adcp', new Date(), undefined, 'response-signing');
        await revokeKey(db, kid, 'adcp', new Date());
        await webhooks.reload();
        expect(webhooks.active().keyid).toBe(webhookKid);
        await second.close();
        const third = await startServer(adapter, `${schema}_resp`, [signerKeyring(), enabler()], { env });
        try {
          expect(third.deployment.get(ResponseSigner).active().keyid).toBe(next);
          const after = (await (await third.fetch('/.well-known/jwks.json')).json()) as { keys: any[] };
          expect(after.keys.map((k) => k.kid)).not.toContain(kid);
          const rev = (await (await third.fetch('/.well-known/jwks-revocations.json')).json()) as any;
          expect(rev.keyids).toContain(kid);
        } finally {
          await third.close();
        }
      } finally {
        await first.close();
        await second.close().catch(() => {});
      }
    }, 30_000);

    test('keys from configuration: a JWK and a PEM file; one active, revoked ones unpublished', async () => {
      const { adapter, schema } = get();
      const ed = keysFile.keys.find((k: any) => k.kid === 'test-ed25519-webhook-2026');
      const jwk = { kty: ed.kty, crv: ed.crv, x: ed.x, d: ed._private_d_for_test_only };
      const server = await startServer(adapter, `${schema}_cfg`, [signerKeyring({ keys: [{ kid: 'cfg-ed', jwk, status: 'active' }], revoked: ['old-1'] })], {
        env,
      });
      try {
        const signer = server.deployment.get(Signer) as ReloadableSigner;
        expect(signer.active().keyid).toBe('cfg-ed');
        expect(signer.active().publicJwk.x).toBe(ed.x);
        expect(signer.revocations().keyids).toEqual(['old-1']);
        await roundTrip(signer, 'ed25519');
      } finally {
        await server.close();
      }

      const dir = mkdtempSync(join(tmpdir(), 'pem-'));
      const pemA = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      const pemB = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      writeFileSync(join(dir, 'a.pem'), pemA);
      writeFileSync(join(dir, 'b.pem'), pemB);
      const p = await startServer(
        adapter,
        `${schema}_pem`,
        [
          signerKeyring({
            alg: 'ecdsa-p256-sha256',
            keys: [
              { kid: 'p-old', pemFile: join(dir, 'a.pem'), status: 'revoked' },
              { kid: 'p-new', pemFile: join(dir, 'b.pem'), status: 'active' },
            ],
          }),
        ],
        { env },
      );
      try {
        const signer = p.deployment.get(Signer) as ReloadableSigner;
        expect(signer.active().keyid).toBe('p-new');
        expect(signer.jwks().keys.map((k) => k.kid)).toEqual(['p-new']);
        expect(signer.revocations().keyids).toEqual(['p-old']);
        await roundTrip(signer, 'ecdsa-p256-sha256');
      } finally {
        await p.close();
      }
    });

    test('a PEM of the wrong algorithm is refused at start', async () => {
      const { adapter, schema } = get();
      const dir = mkdtempSync(join(tmpdir(), 'pem-'));
      writeFileSync(join(dir, 'ed.pem'), generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
      await expect(
        startServer(adapter, `${schema}_bad`, [signerKeyring({ alg: 'ecdsa-p256-sha256', keys: [{ kid: 'x', pemFile: join(dir, 'ed.pem') }] })], { env }),
      ).rejects.toThrow();
    });
  },
);
