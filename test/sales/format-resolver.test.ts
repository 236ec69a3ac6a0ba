import { expect, test } from 'bun:test';
import { createLogger } from '../../core/log.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { InventoryPort, ProductQuery } from '../../core/ports/inventory.ts';
import { createFormatResolver } from '../../plugins/sales-creatives/formats.ts';

const LOCAL = 'https://creative.local.example';
const clock = { now: () => new Date() } as any;
/** No database and a product catalog that records what it was asked: the in-memory answers must not need them. */
function resolver(sellsFormat: (id: string) => boolean) {
  const asked: string[] = [];
  const inventory = {
    async search(q: ProductQuery) {
      const f = q.formatIds![0]!;
      asked.push(f.id);
      return { products: sellsFormat(f.id) ? [{ product_id: 'p' }] : [] };
    },
  } as unknown as InventoryPort;
  const db = {
    query: async () => {
      throw new Error('no database in this test');
    },
  } as unknown as DatabasePort;
  const local = {
    agentUrl: `${LOCAL}/`,
    find: async (ids: readonly string[]) => new Map(ids.filter((id) => id.startsWith('local_')).map((id) => [id, { id, name: id }])),
  };
  const check = createFormatResolver({ db, clock, local, inventory, sandbox: false, crawler: undefined, logger: createLogger('silent') }, 60).check;
  return { check, asked };
}

test('formats the local catalog defines are known without asking the products; the rest ask them, then the agent', async () => {
  const { check, asked } = resolver((id) => id === 'sold_only');
  const known = await check([
    { agent_url: LOCAL, id: 'local_a' },
    { agent_url: `${LOCAL}//`, id: 'local_a' },
    { agent_url: LOCAL, id: 'sold_only' },
    { agent_url: LOCAL, id: 'neither' },
  ]);
  expect(Object.fromEntries(known)).toEqual({ [`${LOCAL}#local_a`]: true, [`${LOCAL}#sold_only`]: true, [`${LOCAL}#neither`]: false });
  expect(asked).toEqual(['sold_only', 'neither']);
});

test("a remote agent's format sold by a product is known without the agent; one not sold needs the agent", async () => {
  const { check, asked } = resolver((id) => id === 'sold_remote');
  expect(Object.fromEntries(await check([{ agent_url: 'https://remote.example', id: 'sold_remote' }]))).toEqual({ 'https://remote.example#sold_remote': true });
  expect(asked).toEqual(['sold_remote']);
  // Not sold: the remote agent's answer is needed; this deployment makes no outbound calls (and the cache read fails first here).
  await expect(check([{ agent_url: 'https://remote.example', id: 'other' }])).rejects.toThrow();
});
