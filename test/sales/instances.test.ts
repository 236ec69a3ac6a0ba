import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { startSalesWorld, HOUR, HMAC_SECRET, type SalesWorld } from './fixture.ts';
import { REFERENCE_AGENT } from './support/reference-formats.ts';

// Three instances of the seller on one database, their jobs firing together: the lifecycle job
// claims buys with FOR UPDATE SKIP LOCKED, the outbox claims rows the same way.
forEachDatabase<SalesWorld>(
  'sales on several instances',
  async (adapter, schema) => {
    const w = await startSalesWorld(adapter, schema);
    await w.addInstance();
    await w.addInstance();
    return w;
  },
  (w) => w.close(),
  (get) => {
    test('every buy starts once and every report is sent once, in sequence', async () => {
      const w = get();
      const c = await w.client('rest');
      const account = (
        await c.call('sync_accounts', {
          idempotency_key: 'instances-accounts-01',
          accounts: [{ brand: { domain: 'many.example' }, operator: 'many.example', billing: 'operator' }],
        })
      ).body.accounts[0].account_id;
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const r = await c.call('create_media_buy', {
          idempotency_key: `instances-create-${String(i).padStart(6, '0')}`,
          account: { account_id: account },
          start_time: 'asap',
          end_time: new Date(w.clock.now().getTime() + 5 * HOUR).toISOString(),
          packages: [
            {
              product_id: 'display_ros_standard',
              pricing_option_id: 'display_ros_cpc',
              budget: 5000,
              creatives: [
                {
                  creative_id: `many_${i}`,
                  name: 'b',
                  format_id: { agent_url: REFERENCE_AGENT, id: 'display_300x250_image' },
                  assets: { banner: { asset_type: 'image', url: 'https://cdn.many.example/b.png', width: 300, height: 250 } },
                },
              ],
            },
          ],
          push_notification_config: { url: `${w.buyer.base}/webhooks/signed`, operation_id: `op-many-${i}` },
          reporting_webhook: {
            url: `${w.buyer.base}/webhooks/reports`,
            authentication: { schemes: ['HMAC-SHA256'], credentials: HMAC_SECRET },
            reporting_frequency: 'hourly',
          },
        });
        ids.push(r.body.media_buy_id);
      }
      await w.settle(); // the buys start now
      for (let h = 0; h < 8; h++) await w.advance(HOUR);
      const db = w.seller.deployment.get(Database);
      for (const id of ids) {
        const mine = w.events.filter((e) => e.payload.task_id === id);
        const starts = mine.filter((e) => e.endpoint === 'signed');
        expect(starts).toHaveLength(1);
        const sequences = mine.filter((e) => e.endpoint === 'reports').map((e) => (e.payload.result as any).sequence_number as number);
        const [row] = await db.query<{ report_seq: number; revision: number }>(
          sql`SELECT report_seq, revision FROM sales_media_buys WHERE media_buy_id = ${id}::text`,
        );
        expect(sequences.sort((a, b) => a - b)).toEqual(Array.from({ length: row!.report_seq }, (_, i) => i + 1));
        expect(row!.report_seq).toBe(5 + 1); // five hourly windows, then the final report
        expect(row!.revision).toBe(3); // created, activated, completed
      }
      // Each fire was one outbox row, delivered once.
      const [dup] = await db.query<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM (SELECT idempotency_key FROM webhook_outbox GROUP BY idempotency_key HAVING count(*) > 1) d`,
      );
      expect(dup!.n).toBe(0);
    }, 60_000);
  },
);
