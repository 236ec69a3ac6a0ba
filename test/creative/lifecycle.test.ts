import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database, type Queryable } from '../../core/ports/database.ts';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { BrandLookup, type BrandLookupPort } from '../../core/ports/brand-lookup.ts';
import { TaskNotifier, type TaskNotifierPort, type TaskStatusChange } from '../../core/ports/task-notifier.ts';
import { forEachDatabase } from '../support/db.ts';
import { mcpClient, restClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { fid, startCreativeServer, TOKEN, type CreativeServer } from './fixture.ts';

class RecordingNotifier implements TaskNotifierPort {
  readonly changes: TaskStatusChange[] = [];
  async statusChanged(_tx: Queryable, change: TaskStatusChange): Promise<void> {
    this.changes.push(change);
  }
  checkRegistration(): void {}
}

/** A registry that fails the first lookup of `flaky.example` (unreachable), then answers. */
function registry(): BrandLookupPort & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async resolve(domain) {
      calls.push(domain);
      if (domain === 'flaky.example' && calls.filter((d) => d === domain).length === 1) throw new Error('registry unreachable');
      if (domain === 'acme.example' || domain === 'flaky.example') return { domain, name: 'Acme Rockets', colors: { primary: '#C8102E' } };
      return null;
    },
  };
}

const valid = (file: string, body: unknown) => expect(bothVersionsErrors(file, body)).toEqual([]);
const DELAY_S = 90;

forEachDatabase(
  'creative build lifecycle',
  async (adapter, schema) => {
    const clock = new ManualClock(new Date('2030-01-01T00:00:00Z'));
    const notifier = new RecordingNotifier();
    const brands = registry();
    const s = await startCreativeServer(adapter, schema, {
      env: { PROTOCOL_NAMESPACE: 'adcp' },
      creative: { buildDelaySeconds: DELAY_S },
      overrides: [
        [Clock, clock],
        [TaskNotifier, notifier],
        [BrandLookup, brands],
      ],
    });
    return { s, clock, notifier, brands };
  },
  async ({ s }) => s.server.close(),
  (get) => {
    const s = (): CreativeServer => get().s;
    const build = (key: string, domain: string, extra: Record<string, unknown> = {}) =>
      restClient(s().server, TOKEN).call('build_creative', {
        idempotency_key: key,
        target_format_ids: [fid('display_300x250_html'), fid('native_mention')],
        message: 'Rocket skates, now in red',
        brand: { domain },
        creative_manifest: { format_id: fid('native_mention'), assets: { cta_url: { asset_type: 'url', url: 'https://acme.example/skates' } } },
        ...extra,
      });

    test('submitted -> working (brand resolved) -> working (generating, after the build delay) -> completed, each change recorded', async () => {
      const { clock, notifier } = get();
      const push = { url: 'https://buyer.example/hooks/creative', operation_id: 'op-build-1' };
      const { body } = await build('lifecycle-build-000000001', 'acme.example', { push_notification_config: push, context: { brief: 'b-1' } });
      expect(body.status).toBe('submitted');
      const id = body.task_id as string;
      const status = async () => (await restClient(s().server, TOKEN).poll(id)).status;

      expect(await s().runDue()).toBe(1);
      expect(await status()).toBe('working');
      // The generation step waits for the build delay: nothing is due until the clock moves.
      expect(await s().runDue()).toBe(0);
      clock.advance((DELAY_S - 1) * 1000);
      expect(await s().runDue()).toBe(0);
      clock.advance(1000);
      expect(await s().runDue()).toBe(1);
      expect(await status()).toBe('completed');

      const changes = notifier.changes.filter((c) => c.taskId === id);
      expect(changes.map((c) => [c.status, c.sequence])).toEqual([
        ['submitted', 1],
        ['working', 2],
        ['working', 3],
        ['working', 4],
        ['working', 5],
        ['completed', 6],
      ]);
      expect(changes.every((c) => c.operationId === 'op-build-1' && c.taskType === 'build_creative')).toBe(true);
      // `working` events carry progress; the last carries the result.
      const progress = changes.slice(2, 5).map((c) => c.result as any);
      expect(progress.map((p) => p.current_step)).toEqual(['brand_resolved', 'generating display_300x250_html', 'generating native_mention']);
      expect(progress.map((p) => p.step_number)).toEqual([1, 2, 3]);
      for (const p of progress) valid('media-buy/build-creative-async-response-working.json', p);
      const final = changes[5]!.result as any;
      valid('media-buy/build-creative-response.json', final);
      expect(final.context).toEqual({ brief: 'b-1' });
      expect(final.creative_manifests.map((m: any) => m.format_id.id)).toEqual(['display_300x250_html', 'native_mention']);
      expect(final.creative_manifests[1].assets).toEqual({
        mention_text: { asset_type: 'text', content: 'Rocket skates, now in red, from Acme Rockets' },
        cta_url: { asset_type: 'url', url: 'https://acme.example/skates' },
        sponsored_by: { asset_type: 'text', content: 'Acme Rockets' },
      });

      const polled = await (await s().server.fetch(`/tasks/${id}?include_history=true`, { token: TOKEN })).json();
      valid('protocol/get-task-status-response.json', polled);
      expect((polled as any).history.map((h: any) => h.data.status)).toEqual(['submitted', 'working', 'working', 'working', 'working', 'completed']);
    });

    test('an unknown brand fails the task with REFERENCE_NOT_FOUND in the creative shape', async () => {
      const { body } = await build('lifecycle-build-000000002', 'nobody.example');
      await s().runDue();
      const client = await mcpClient(s().server, TOKEN);
      const done = await client.poll(body.task_id);
      await client.close();
      expect(done.status).toBe('failed');
      expect(structuredClone(done.result)).toMatchObject({ code: 'REFERENCE_NOT_FOUND', field: 'brand.domain', error: { code: 'REFERENCE_NOT_FOUND' } });
      valid('media-buy/build-creative-response.json', done.result);
    });

    test('an unreachable registry is retried with backoff, not failed', async () => {
      const { clock, brands } = get();
      const { body } = await build('lifecycle-build-000000003', 'flaky.example');
      expect(await s().runDue()).toBe(1);
      const db = s().server.deployment.get(Database);
      const [row] = await db.query<{ status: string; attempts: number; run_at: Date | string }>(
        sql`SELECT status, attempts, run_at FROM tasks WHERE id = ${body.task_id}::uuid`,
      );
      expect(row!.status).toBe('working');
      expect(new Date(row!.run_at).getTime()).toBeGreaterThan(clock.now().getTime());
      clock.advance(2000);
      expect(await s().runDue()).toBe(1);
      expect(brands.calls.filter((d) => d === 'flaky.example')).toHaveLength(2);
      clock.advance(DELAY_S * 1000);
      await s().runDue();
      expect((await restClient(s().server, TOKEN).poll(body.task_id)).status).toBe('completed');
    });

    test('a transformation answers at once: no task, no lifecycle', async () => {
      const before = get().notifier.changes.length;
      const { body } = await restClient(s().server, TOKEN).call('build_creative', {
        idempotency_key: 'lifecycle-build-000000004',
        creative_manifest: {
          format_id: fid('native_mention'),
          assets: {
            mention_text: { asset_type: 'text', content: 'Rocket skates from Acme' },
            cta_url: { asset_type: 'url', url: 'https://acme.example/skates' },
            sponsored_by: { asset_type: 'text', content: 'Acme Rockets' },
          },
        },
        target_format_id: fid('sponsored_recommendation'),
      });
      expect(body.status).toBe('completed');
      expect(body.task_id).toBeUndefined();
      valid('media-buy/build-creative-response.json', body);
      expect(body.creative_manifest.assets.sponsored_by).toEqual({ asset_type: 'text', content: 'Acme Rockets' });
      expect(get().notifier.changes.length).toBe(before);
    });
  },
);
