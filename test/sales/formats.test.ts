import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { stubAgentPlugins } from '../fixtures/stub-agent.ts';
import { startSalesWorld, type SalesWorld } from './fixture.ts';
import { loopbackResolver, TEST_CERT } from '../support/loopback.ts';
import { startTlsFront } from '../support/tls-front.ts';

const creative = (id: string, agentUrl: string, format: string) => ({
  creative_id: id,
  name: id,
  format_id: { agent_url: agentUrl, id: format },
  assets: { banner: { asset_type: 'image', url: `https://cdn.acme.example/${id}.png`, width: 300, height: 250 } },
});

// No creative agent in this deployment: format ids are checked with the agent their agent_url names,
// over the network (list_creative_formats through the SSRF-guarded crawler), and the answer is cached.
forEachDatabase<{ world: SalesWorld; agent: TestServer; front: ReturnType<typeof startTlsFront> }>(
  'sales remote creative formats',
  async (adapter, schema) => {
    const world = await startSalesWorld(adapter, schema, {
      localFormats: false,
      crawler: { resolver: loopbackResolver(['pub.test'], { 'intranet.pub.test': ['10.0.0.8'] }), ca: TEST_CERT },
    });
    const agent = await startServer(adapter, `${schema}_agent`, stubAgentPlugins({ hosts: ['mcp'] }));
    const front = startTlsFront();
    front.route('creative.pub.test', agent.base);
    return { world, agent, front };
  },
  async ({ world, agent, front }) => {
    await world.close();
    await agent.close();
    front.stop();
  },
  (get) => {
    test('known formats pass, unknown ones are INVALID_FORMAT_ID, an unreachable agent is SERVICE_UNAVAILABLE; answers are cached', async () => {
      const { world, agent, front } = get();
      const creativeAgent = front.url('creative.pub.test');
      const c = await world.client('rest');
      const account = (
        await c.call('sync_accounts', {
          idempotency_key: 'formats-accounts-0001',
          accounts: [{ brand: { domain: 'fmt.example' }, operator: 'fmt.example', billing: 'operator' }],
        })
      ).body.accounts[0].account_id;
      const sync = (key: string, ...creatives: ReturnType<typeof creative>[]) =>
        c.call('sync_creatives', { idempotency_key: key, account: { account_id: account }, creatives });

      const ok = await sync('formats-sync-000000001', creative('banner_1', creativeAgent, 'display_300x250_image'));
      expect(ok.body.creatives).toEqual([{ creative_id: 'banner_1', action: 'created', status: 'approved' }]);

      const unknown = await sync('formats-sync-000000002', creative('banner_2', creativeAgent, 'display_999x999_image'));
      expect([unknown.body.code, unknown.body.field]).toEqual(['INVALID_FORMAT_ID', 'creatives[0].format_id']);

      const down = await sync('formats-sync-000000003', creative('banner_3', front.url('down.pub.test'), 'display_300x250_image'));
      expect([down.body.code, down.body.errors[0].recovery]).toEqual(['SERVICE_UNAVAILABLE', 'transient']);

      const refused = await sync('formats-sync-000000004', creative('banner_4', 'https://intranet.pub.test/', 'display_300x250_image'));
      expect(refused.body.code).toBe('SERVICE_UNAVAILABLE');

      const db = world.seller.deployment.get(Database);
      const cached = await db.query<{ format_id: string; known: boolean }>(sql`SELECT format_id, known FROM sales_format_cache ORDER BY format_id`);
      expect(cached).toEqual([
        { format_id: 'display_300x250_image', known: true },
        { format_id: 'display_999x999_image', known: false },
      ]);
      // With the agent gone, the cached answer still serves.
      await agent.close();
      const again = await sync('formats-sync-000000005', creative('banner_5', creativeAgent, 'display_300x250_image'));
      expect(again.ok).toBe(true);
    }, 60_000);
  },
);
