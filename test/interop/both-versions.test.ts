import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ManualTimers } from '../../core/scheduler.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { mcpClient, restClient, type TaskClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { ERROR_CODES_3_0, ERROR_CODES_3_1 } from '../../lib/adcp/error-codes.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from '../agents/fixture.ts';
import { deliverWebhooks, startSink } from './support.ts';

// With PROTOCOL_NAMESPACE=adcp every answer of every signals-agent task, failures included, and every
// webhook payload validates against AdCP 3.0.6 (what deployed clients check) and 3.1.19.
const TTD = { type: 'platform', platform: 'the-trade-desk' };
const UNKNOWN_AGENT = { type: 'agent', agent_url: 'https://sales.unlisted.example/mcp' };
const POLL_MS = 500;

const GET_SIGNALS = 'signals/get-signals-response.json';
const ACTIVATE = 'signals/activate-signal-response.json';
const CAPABILITIES = 'protocol/get-adcp-capabilities-response.json';
const TASK_STATUS = 'protocol/get-task-status-response.json';
const WEBHOOK = 'core/mcp-webhook-payload.json';

/** Every error of a failure carries a code of both versions' enum (3.1's only where 3.0 has none). */
function expectStandardErrors(body: any) {
  for (const e of [body.adcp_error, ...(body.errors ?? [])]) {
    expect(ERROR_CODES_3_0.has(e.code) || ERROR_CODES_3_1.has(e.code)).toBe(true);
  }
}

interface World {
  s: SignalsServer;
  timers: ManualTimers;
  sink: ReturnType<typeof startSink>;
}

forEachDatabase<World>(
  'AdCP 3.0.6 and 3.1.19 shapes',
  async (adapter, schema) => {
    const timers = new ManualTimers();
    const sink = startSink();
    const s = await startSignalsServer(adapter, schema, {
      env: { PROTOCOL_NAMESPACE: 'adcp', DEV_LOOPBACK_WEBHOOKS: 'true' },
      extra: [signerKeyring(), crawlerHttp(), webhooks({ outbox: { pollMs: POLL_MS } })],
      timers,
    });
    return { s, timers, sink };
  },
  async ({ s, sink }) => {
    sink.stop();
    await s.server.close();
  },
  (get) =>
    describe('over MCP', () => {
      let client: TaskClient;
      beforeAll(async () => {
        client = await mcpClient(get().s.server, TOKEN);
      });
      afterAll(async () => client?.close());
      const call = async (name: string, args: Record<string, unknown>) => (await client.call(name, args)).body;

      test('get_adcp_capabilities, whole and filtered: supported_protocols is always there', async () => {
        for (const args of [{}, { protocols: ['signals'] }, { protocols: ['media_buy'] }]) {
          const body = await call('get_adcp_capabilities', { ...args, context: { n: 1 } });
          expect(bothVersionsErrors(CAPABILITIES, body)).toEqual([]);
          expect(body.supported_protocols).toEqual(['signals']);
          expect(body.context).toEqual({ n: 1 });
        }
        expect((await call('get_adcp_capabilities', { protocols: ['media_buy'] })).signals).toBeUndefined();
      });

      test('get_signals by spec, by signal_ids, by signal_refs, and a following page', async () => {
        const bySpec = await call('get_signals', {
          signal_spec: 'auto shoppers owners intenders',
          destinations: [TTD, UNKNOWN_AGENT],
          countries: ['US'],
          pagination: { max_results: 3 },
        });
        expect(bothVersionsErrors(GET_SIGNALS, bySpec)).toEqual([]);
        expect(bySpec.signals).toHaveLength(3);
        expect(bySpec.pagination).toEqual({ has_more: true, cursor: expect.any(String) });
        for (const signal of bySpec.signals) {
          // signal_id (3.0) and signal_ref (3.1) name the same entry.
          const { signal_id: id, signal_ref: ref } = signal;
          expect(ref.signal_id).toBe(id.id);
          expect(id.source === 'catalog' ? [ref.scope, ref.data_provider_domain] : [ref.scope, ref.signal_source_url]).toEqual(
            id.source === 'catalog' ? ['data_provider', id.data_provider_domain] : ['signal_source', id.agent_url],
          );
          expect(signal.pricing_options[0].pricing_option_id).toBeString();
          expect(signal.deployments.map((d: any) => d.type)).toContain('agent');
        }
        const next = await call('get_signals', {
          signal_spec: 'auto shoppers owners intenders',
          destinations: [TTD, UNKNOWN_AGENT],
          countries: ['US'],
          pagination: { max_results: 3, cursor: bySpec.pagination.cursor },
        });
        expect(bothVersionsErrors(GET_SIGNALS, next)).toEqual([]);

        const ids = bySpec.signals.map((x: any) => x.signal_id);
        const byIds = await call('get_signals', { signal_ids: ids });
        expect(bothVersionsErrors(GET_SIGNALS, byIds)).toEqual([]);
        expect(byIds.signals.map((x: any) => x.signal_agent_segment_id).sort()).toEqual(bySpec.signals.map((x: any) => x.signal_agent_segment_id).sort());
        const byRefs = await call('get_signals', { signal_refs: bySpec.signals.map((x: any) => x.signal_ref) });
        expect(bothVersionsErrors(GET_SIGNALS, byRefs)).toEqual([]);
        expect(byRefs.signals).toHaveLength(3);
        const owned = await call('get_signals', { signal_spec: 'readers subscribers', filters: { catalog_types: ['owned'] } });
        expect(owned.signals.length).toBeGreaterThan(0);
        expect(bothVersionsErrors(GET_SIGNALS, owned)).toEqual([]);
      });

      test('get_signals failures: a schema-valid body in both versions with standard codes', async () => {
        for (const args of [{}, { signal_spec: 'pets', discovery_mode: 'wholesale' }, { signal_spec: 'pets', pagination: { cursor: 'bogus' } }]) {
          const body = await call('get_signals', { ...args, context: { trace: 'f' } });
          expect(body.status).toBe('failed');
          expect(body.context).toEqual({ trace: 'f' });
          expect(bothVersionsErrors(GET_SIGNALS, body)).toEqual([]);
          expectStandardErrors(body);
        }
      });

      test('activate_signal: first answer, final result, failures, task status and every webhook', async () => {
        const { s, timers, sink } = get();
        const first = await call('activate_signal', {
          signal_agent_segment_id: 'sig_auto_intenders_suv',
          destinations: [TTD, UNKNOWN_AGENT],
          idempotency_key: 'both-versions-activate-01',
          context: { run: 'bv' },
          push_notification_config: { url: sink.url('/signed') },
        });
        expect(bothVersionsErrors(ACTIVATE, first)).toEqual([]);
        expect(first.status).toBe('submitted');
        // Keys are known at submission: the first answer carries them, not yet live.
        expect(first.deployments.map((d: any) => [d.is_live, d.activation_key?.type])).toEqual([
          [false, 'segment_id'],
          [false, 'key_value'],
        ]);
        expect(await s.runDue()).toBe(1);
        const status = await call('get_task_status', { task_id: first.task_id });
        expect(bothVersionsErrors(TASK_STATUS, status)).toEqual([]);
        expect(bothVersionsErrors(ACTIVATE, status.result)).toEqual([]);
        expect(status.result.deployments.map((d: any) => [d.is_live, d.activation_key])).toEqual(first.deployments.map((d: any) => [true, d.activation_key]));

        // A failing activation: withdrawn (deactivated) before it completes.
        const doomed = await call('activate_signal', {
          signal_agent_segment_id: 'sig_auto_luxury_owners',
          destinations: [TTD],
          idempotency_key: 'both-versions-activate-02',
          push_notification_config: { url: sink.url('/failed'), operation_id: 'op-fail' },
        });
        await call('activate_signal', {
          signal_agent_segment_id: 'sig_auto_luxury_owners',
          destinations: [TTD],
          action: 'deactivate',
          idempotency_key: 'both-versions-deact-0001',
        });
        await s.runDue();
        const failed = await call('get_task_status', { task_id: doomed.task_id });
        expect(failed.status).toBe('failed');
        expect(bothVersionsErrors(TASK_STATUS, failed)).toEqual([]);
        expect(bothVersionsErrors(ACTIVATE, failed.result)).toEqual([]);
        expectStandardErrors(failed.result);

        await deliverWebhooks(s.server, timers, POLL_MS);
        const payloads = sink.received.map((r) => r.body);
        expect(payloads.map((p) => `${p.operation_id}:${p.status}`).sort()).toEqual(
          [`${first.task_id}:completed`, `${first.task_id}:working`, 'op-fail:failed', 'op-fail:working'].sort(),
        );
        for (const p of payloads) expect({ status: p.status, errors: bothVersionsErrors(WEBHOOK, p) }).toEqual({ status: p.status, errors: [] });
        expect(payloads.find((p) => p.status === 'completed')!.context).toEqual({ run: 'bv' });
        expect(sink.received.every((r) => r.headers.get('signature-input')?.includes('tag="adcp/webhook-signing/v1"'))).toBe(true);

        // Failures of the first answer.
        const cases: [Record<string, unknown>, string, string][] = [
          [{ signal_agent_segment_id: 'sig_nope' }, 'SIGNAL_NOT_FOUND', 'SIGNAL_AGENT_SEGMENT_NOT_FOUND'],
          [{ destinations: [{ type: 'agent', agent_url: 'https://sales.private-network.example/mcp' }] }, 'REFERENCE_NOT_FOUND', 'AGENT_NOT_FOUND'],
          [{ destinations: [{ type: 'agent', agent_url: 'https://sales.premium-ctv.example/mcp' }] }, 'PERMISSION_DENIED', 'AGENT_ACCESS_DENIED'],
          [{ destinations: [{ type: 'platform', platform: 'no-such-dsp' }] }, 'PERMISSION_DENIED', 'DEPLOYMENT_UNAUTHORIZED'],
          [{ destinations: [TTD] }, 'INVALID_STATE', 'ALREADY_ACTIVATED'],
        ];
        for (const [i, [args, code, seed]] of cases.entries()) {
          const body = await call('activate_signal', {
            signal_agent_segment_id: 'sig_auto_intenders_suv',
            idempotency_key: `both-versions-fail-${i}-000`,
            context: { i },
            destinations: [TTD],
            ...args,
          });
          expect({ i, code: body.code, seed: body.errors[0].details.code, context: body.context }).toEqual({ i, code, seed, context: { i } });
          expect(bothVersionsErrors(ACTIVATE, body)).toEqual([]);
          expectStandardErrors(body);
        }
        const conflict = await restClient(s.server, TOKEN).call('activate_signal', {
          signal_agent_segment_id: 'sig_auto_lease_expiring',
          destinations: [TTD],
          idempotency_key: 'both-versions-activate-01',
        });
        expect(conflict.body.code).toBe('IDEMPOTENCY_CONFLICT');
        expect(bothVersionsErrors(ACTIVATE, conflict.body)).toEqual([]);
      });

      test('an unknown tool is an error that echoes context, with a standard code', async () => {
        const body = await call('no_such_tool', { context: { trace: 'unknown' } });
        expect(body.context).toEqual({ trace: 'unknown' });
        expect(body.code).toBe('INVALID_REQUEST');
        expectStandardErrors(body);
      });
    }),
);
