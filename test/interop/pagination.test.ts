import { expect, test } from 'bun:test';
import { Database } from '../../core/ports/database.ts';
import { TaskGateway } from '../../core/ports/task-gateway.ts';
import { importCatalog } from '../../plugins/signals/catalog.ts';
import { forEachDatabase } from '../support/db.ts';
import { mcpClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from '../agents/fixture.ts';

// get_signals pages with a keyset cursor over exactly its ranking order: with 1,000 matching
// signals in large groups of exact ties (same text rank, same coverage), every page size from 1 to
// 50 walks the same sequence and returns each signal exactly once.
const COUNT = 1000;
const VARIANTS = ['Tied audience of shoppers', 'Tied audience of frequent shoppers and buyers', 'Tied audience'];

function catalog() {
  return {
    signals: Array.from({ length: COUNT }, (_, i) => ({
      id: `tie_${String((i * 7919) % COUNT).padStart(4, '0')}`,
      name: VARIANTS[i % VARIANTS.length]!,
      description: 'Synthetic signal for pagination tests.',
      signal_type: 'marketplace' as const,
      data_provider: 'Tie Data',
      data_provider_domain: 'tie-data.example',
      coverage_percentage: [10, 20, 30, 40][i % 4]!,
      pricing: { cpm: 1, currency: 'USD' },
      platforms: [{ platform: 'the-trade-desk', estimated_activation_duration_minutes: 5 }],
    })),
  };
}

forEachDatabase<SignalsServer>(
  'get_signals pagination',
  async (adapter, schema) => {
    const s = await startSignalsServer(adapter, schema, { signals: { seed: false } });
    await importCatalog(s.server.deployment.get(Database), catalog());
    return s;
  },
  (s) => s.server.close(),
  (get) => {
    test('page sizes 1..50 each walk all 1,000 tied signals once, in one order', async () => {
      const gateway = get().server.deployment.get(TaskGateway);
      const walk = async (size: number) => {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let page = 0; page <= COUNT; page++) {
          const args = { signal_spec: 'tied audience shoppers', pagination: { max_results: size, ...(cursor ? { cursor } : {}) } };
          const outcome = await gateway.invoke({ name: 'get_signals', input: args, authorization: `Bearer ${TOKEN}` });
          if (!outcome.ok) throw new Error(JSON.stringify(outcome.body));
          const body = outcome.body as any;
          expect(body.signals.length).toBeLessThanOrEqual(size);
          seen.push(...body.signals.map((x: any) => x.signal_agent_segment_id));
          if (!body.pagination.has_more) return seen;
          cursor = body.pagination.cursor;
        }
        throw new Error(`page size ${size}: more pages than signals`);
      };
      const reference = await walk(50);
      expect(reference).toHaveLength(COUNT);
      expect(new Set(reference).size).toBe(COUNT);
      for (let size = 1; size < 50; size++) {
        const order = await walk(size);
        expect({ size, same: order.length === COUNT && order.every((id, i) => id === reference[i]) }).toEqual({ size, same: true });
      }
    }, 600_000);

    test('over MCP: pages validate in both versions; a cursor is bound to its query', async () => {
      const client = await mcpClient(get().server, TOKEN);
      try {
        const first = await client.call('get_signals', { signal_spec: 'tied audience', pagination: { max_results: 100 } });
        expect(first.body.signals).toHaveLength(100);
        expect(bothVersionsErrors('signals/get-signals-response.json', first.body)).toEqual([]);
        // The deprecated top-level max_results is the page size, capped at 100.
        const capped = await client.call('get_signals', { signal_spec: 'tied audience', max_results: 500 });
        expect(capped.body.signals).toHaveLength(100);
        const other = await client.call('get_signals', { signal_spec: 'shoppers', pagination: { cursor: first.body.pagination.cursor } });
        expect(other.ok).toBe(false);
        expect(other.body.field).toBe('pagination.cursor');
        const last = await client.call('get_signals', {
          signal_ids: [{ source: 'catalog', data_provider_domain: 'tie-data.example', id: 'tie_0001' }],
          pagination: { max_results: 5 },
        });
        expect(last.body.signals.map((x: any) => x.signal_agent_segment_id)).toEqual(['tie_0001']);
        expect(last.body.pagination).toEqual({ has_more: false });
      } finally {
        await client.close();
      }
    });
  },
);
