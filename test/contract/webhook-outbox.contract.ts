import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ManualClock } from '../../core/ports/clock.ts';
import type { WebhookDelivery, WebhookOutboxPort } from '../../core/ports/webhook-outbox.ts';

export interface WebhookOutboxSubject {
  port: WebhookOutboxPort;
  db: DatabasePort;
  /** The deployment's Clock (retries wait for it). */
  clock: ManualClock;
  /** Let the delivery workers run until nothing is due (plain http to loopback is allowed). */
  deliver(): Promise<void>;
  /** Header carrying the HMAC signature under the deployment's namespace. */
  hmacHeader: string;
  close(): Promise<void>;
}

interface Received {
  path: string;
  headers: Headers;
  body: Uint8Array;
}

const SECRET = 'q8V2mZ7xK1pL4tR9wB3nC6yF0hJ5sD8g';
const BEARER = 'bearer-token-0123456789';
let n = 0;

/** The webhook outbox contract (core/ports/webhook-outbox.ts), observed from a receiver on loopback. */
export function webhookOutboxContract(name: string, make: () => Promise<WebhookOutboxSubject>): void {
  describe(`webhook outbox contract: ${name}`, () => {
    let s: WebhookOutboxSubject;
    let receiver: ReturnType<typeof Bun.serve>;
    const received: Received[] = [];
    /** Paths answered with these statuses first (then 200). */
    const failFirst = new Map<string, number[]>();
    beforeAll(async () => {
      receiver = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        async fetch(request) {
          const path = new URL(request.url).pathname;
          received.push({ path, headers: request.headers, body: new Uint8Array(await request.arrayBuffer()) });
          const status = failFirst.get(path)?.shift() ?? 200;
          return new Response(null, { status });
        },
      });
      s = await make();
    });
    afterAll(async () => {
      await s?.close();
      receiver?.stop(true);
    });
    const path = () => `/hook-${n++}`;
    const at = (p: string) => `http://127.0.0.1:${receiver.port}${p}`;
    const got = (p: string) => received.filter((r) => r.path === p);
    const delivery = (p: string, over: Partial<WebhookDelivery> = {}): WebhookDelivery => {
      const key = `whk_${process.pid}_${n++}_0123456789`;
      return {
        url: at(p),
        auth: { mode: 'bearer', token: BEARER },
        format: 'mcp',
        idempotencyKey: key,
        body: JSON.stringify({ idempotency_key: key, task_id: 't1', status: 'completed', note: 'ünïcødé' }),
        ...over,
      };
    };

    test('enqueued in a committed transaction: delivered once, the body byte for byte, with the registration authentication', async () => {
      const [bearer, hmac] = [path(), path()];
      const a = delivery(bearer);
      const b = delivery(hmac, { auth: { mode: 'hmac', secret: SECRET } });
      const ids = await s.db.transaction(async (tx) => [await s.port.enqueue(tx, a), await s.port.enqueue(tx, b)]);
      expect(ids[0]).toBeString();
      expect(ids[0]).not.toBe(ids[1]);
      await s.deliver();
      await s.deliver();
      expect(got(bearer)).toHaveLength(1);
      expect(new TextDecoder().decode(got(bearer)[0]!.body)).toBe(a.body);
      expect(got(bearer)[0]!.headers.get('authorization')).toBe(`Bearer ${BEARER}`);
      expect(got(hmac)).toHaveLength(1);
      expect(new TextDecoder().decode(got(hmac)[0]!.body)).toBe(b.body);
      expect(got(hmac)[0]!.headers.get(s.hmacHeader)).toMatch(/^sha256=[0-9a-f]{64}$/);
    });

    test('enqueued in a rolled-back transaction: nothing is ever delivered', async () => {
      const p = path();
      const boom = new Error('state change failed');
      await expect(
        s.db.transaction(async (tx) => {
          await s.port.enqueue(tx, delivery(p));
          throw boom;
        }),
      ).rejects.toBe(boom);
      await s.deliver();
      expect(got(p)).toEqual([]);
    });

    test('a failed attempt is retried later with the same bytes (and so the same idempotency key)', async () => {
      const p = path();
      failFirst.set(p, [500, 503]);
      const d = delivery(p);
      await s.db.transaction((tx) => s.port.enqueue(tx, d));
      await s.deliver();
      expect(got(p)).toHaveLength(1);
      for (let attempt = 2; attempt <= 3; attempt++) {
        s.clock.advance(3_600_000);
        await s.deliver();
        expect(got(p)).toHaveLength(attempt);
      }
      s.clock.advance(3_600_000);
      await s.deliver();
      expect(got(p)).toHaveLength(3);
      for (const r of got(p)) expect(new TextDecoder().decode(r.body)).toBe(d.body);
    });

    test('bad registrations are refused (INVALID_REQUEST naming the field) and write nothing', async () => {
      const refusals: Array<[Partial<WebhookDelivery>, string]> = [
        [{ url: 'not a url' }, 'push_notification_config.url'],
        [{ url: 'ftp://127.0.0.1/x' }, 'push_notification_config.url'],
        [{ idempotencyKey: 'short' }, 'idempotency_key'],
        [{ idempotencyKey: 'has spaces in it' }, 'idempotency_key'],
        [{ auth: { mode: 'hmac', secret: 'too-short' } }, 'push_notification_config.authentication.credentials'],
        [{ auth: { mode: 'hmac', secret: 'a'.repeat(40) } }, 'push_notification_config.authentication.credentials'],
        [{ auth: { mode: 'bearer', token: 'short' } }, 'push_notification_config.authentication.credentials'],
        [{ auth: { mode: 'bearer', token: BEARER }, mutating: true }, 'push_notification_config.authentication'],
      ];
      const p = path();
      for (const [over, field] of refusals) {
        const error = await s.db.transaction(async (tx) => s.port.enqueue(tx, delivery(p, over)).catch((e) => e));
        expect(error).toMatchObject({ code: 'INVALID_REQUEST', field });
      }
      await s.deliver();
      expect(got(p)).toEqual([]);
    });
  });
}
