import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { HOSTS, clientFor, type TaskClient, type HostName } from '../support/agent.ts';
import { schemaErrors } from '../support/schemas.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from './fixture.ts';

// Requirement x host: every behaviour below runs over REST, MCP (SDK client) and A2A (SDK client).
const TTD = { type: 'platform', platform: 'the-trade-desk' };
const STREAMHAUS = { type: 'agent', agent_url: 'https://sales.streamhaus.example/mcp' };
// Each host activates its own signal: activations are per principal, and the suites share one.
const SIGNAL_FOR: Record<HostName, string> = { rest: 'sig_auto_intenders_suv', mcp: 'sig_auto_intenders_ev', a2a: 'sig_auto_luxury_owners' };

forEachDatabase(
  'signals matrix',
  (adapter, schema) => startSignalsServer(adapter, schema),
  async (s) => s.server.close(),
  // Note: bun's toMatchObject writes asymmetric matchers into the received object, so tests match on clones.
  (get) => {
    for (const host of HOSTS) {
      describe(host, () => {
        let client: TaskClient;
        let s: SignalsServer;
        beforeAll(async () => {
          s = get();
          client = await clientFor(host, s.server, TOKEN);
        });
        afterAll(async () => client?.close());

        test('get_signals: schema-valid signals ranked by relevance of the spec', async () => {
          const { ok, body } = await client.call('get_signals', {
            signal_spec: 'SUV shoppers in market for a new car',
            deliver_to: { deployments: [TTD], countries: ['US'] },
            context: { trace: host },
          });
          expect(ok).toBe(true);
          expect(schemaErrors('signals/get-signals-response.json', body)).toEqual([]);
          expect(body.status).toBe('completed');
          expect(body.signals[0].signal_agent_segment_id).toBe('sig_auto_intenders_suv');
          expect(body.context).toEqual({ trace: host });
          const first = body.signals[0];
          expect(first.pricing).toEqual({ cpm: 3.25, currency: 'USD' });
          expect(first.deployments).toEqual([expect.objectContaining({ type: 'platform', platform: 'the-trade-desk', is_live: expect.any(Boolean) })]);
          // Only signals matching the spec's words are returned.
          expect(body.signals.map((x: any) => x.signal_agent_segment_id)).not.toContain('sig_media_news_readers');
        });

        test('get_signals: filters narrow the catalog', async () => {
          const owned = await client.call('get_signals', {
            signal_spec: 'readers sports technology finance video food subscribers',
            filters: { catalog_types: ['owned'] },
          });
          expect(owned.body.signals.length).toBeGreaterThan(0);
          expect(owned.body.signals.every((x: any) => x.signal_type === 'owned' && x.pricing === undefined)).toBe(true);

          const cheap = await client.call('get_signals', {
            signal_spec: 'shoppers buyers',
            filters: { max_cpm: 2, min_coverage_percentage: 10 },
            max_results: 100,
          });
          expect(cheap.body.signals.length).toBeGreaterThan(0);
          for (const x of cheap.body.signals) {
            expect(x.coverage_percentage).toBeGreaterThanOrEqual(10);
            if (x.pricing) expect(x.pricing.cpm).toBeLessThanOrEqual(2);
          }

          const provider = await client.call('get_signals', { signal_spec: 'travel vacation business', filters: { data_providers: ['orbit travel data'] } });
          expect(provider.body.signals.length).toBeGreaterThan(0);
          expect(provider.body.signals.map((x: any) => x.data_provider)).toEqual(provider.body.signals.map(() => 'Orbit Travel Data'));

          const retailDsp = await client.call('get_signals', {
            signal_spec: 'grocery pet buyers shoppers',
            deliver_to: { deployments: [{ type: 'platform', platform: 'retail-media-dsp' }], countries: ['US'] },
          });
          expect(retailDsp.body.signals.map((x: any) => x.signal_agent_segment_id).sort()).toEqual(['sig_retail_grocery_premium', 'sig_retail_pet_owners']);

          const japan = await client.call('get_signals', { signal_spec: 'gamers readers', countries: ['JP'] });
          expect(japan.body.signals.length).toBeGreaterThan(0);
          expect(japan.body.signals.every((x: any) => !x.countries || x.countries.includes('JP'))).toBe(true);
          expect(schemaErrors('signals/get-signals-response.json', japan.body)).toEqual([]);
        });

        test('get_signals: custom signals of another organization are not listed', async () => {
          const { body } = await client.call('get_signals', { signal_spec: 'acme custom lapsed buyers lookalike cart loyalty', max_results: 100 });
          expect(body.signals.some((x: any) => x.signal_type === 'custom')).toBe(false);
        });

        test('activate_signal: submitted with a task id, then live with activation keys and deployed_at', async () => {
          const signal = SIGNAL_FOR[host];
          const args = {
            signal_agent_segment_id: signal,
            deployments: [TTD, STREAMHAUS],
            idempotency_key: `activate-${host}-0001-abcdef`,
            context: { run: 1 },
          };
          const first = await client.call('activate_signal', args);
          expect(first.ok).toBe(true);
          expect(schemaErrors('signals/activate-signal-response.json', first.body)).toEqual([]);
          expect(first.body.status).toBe('submitted');
          expect(typeof first.body.task_id).toBe('string');
          expect(first.body.context).toEqual({ run: 1 });
          expect(first.body.deployments.map((d: any) => d.is_live)).toEqual([false, false]);

          expect((await client.poll(first.body.task_id)).status).toBe('submitted');
          expect(await s.runDue()).toBe(1);
          const done = await client.poll(first.body.task_id);
          expect(done.status).toBe('completed');
          expect(schemaErrors('signals/activate-signal-response.json', done.result)).toEqual([]);
          const [platform, agent] = done.result!.deployments;
          expect(structuredClone(platform)).toMatchObject({
            type: 'platform',
            platform: 'the-trade-desk',
            is_live: true,
            activation_key: { type: 'segment_id', segment_id: expect.any(String) },
          });
          expect(structuredClone(agent)).toMatchObject({
            type: 'agent',
            is_live: true,
            activation_key: { type: 'key_value', key: 'proto_signal', value: signal },
          });
          expect(Date.parse(platform.deployed_at)).not.toBeNaN();
          expect(done.result!.context).toEqual({ run: 1 });

          // get_signals now reports the deployment live for this principal, with the same key.
          const listed = await client.call('get_signals', {
            signal_spec: signal.replace(/^sig_|_/g, ' '),
            deliver_to: { deployments: [TTD], countries: ['US'] },
            max_results: 100,
          });
          const entry = listed.body.signals.find((x: any) => x.signal_agent_segment_id === signal);
          expect(structuredClone(entry.deployments[0])).toMatchObject({ is_live: true, activation_key: platform.activation_key });

          // Activating the same target again: ALREADY_ACTIVATED in the signals error shape.
          const again = await client.call('activate_signal', { ...args, idempotency_key: `activate-${host}-0002-abcdef` });
          expect(again.ok).toBe(false);
          expect(again.body.errors).toEqual([
            expect.objectContaining({ code: 'ALREADY_ACTIVATED', message: expect.any(String), field: 'deployments[0]', suggestion: expect.any(String) }),
            expect.objectContaining({ code: 'ALREADY_ACTIVATED', field: 'deployments[1]' }),
          ]);
          expect(schemaErrors('signals/activate-signal-response.json', again.body)).toEqual([]);
        });

        test('activate_signal: deployment errors name the field', async () => {
          const signal = SIGNAL_FOR[host];
          const call = (destinations: unknown[], n: number) =>
            client.call('activate_signal', { signal_agent_segment_id: signal, destinations, idempotency_key: `errors-${host}-${n}-0123456789` });
          const cases: [unknown, string, string][] = [
            [{ type: 'platform', platform: 'no-such-dsp' }, 'DEPLOYMENT_UNAUTHORIZED', 'destinations[0].platform'],
            [{ type: 'agent', agent_url: 'https://sales.private-network.example/mcp' }, 'AGENT_NOT_FOUND', 'destinations[0].agent_url'],
            [{ type: 'agent', agent_url: 'https://sales.premium-ctv.example/mcp' }, 'AGENT_ACCESS_DENIED', 'destinations[0].agent_url'],
          ];
          for (const [i, [target, code, field]] of cases.entries()) {
            const { ok, body } = await call([target], i);
            expect(ok).toBe(false);
            expect(structuredClone(body.errors[0])).toMatchObject({ code, field, message: expect.any(String), suggestion: expect.any(String) });
            expect(body.code).toBe(code);
            expect(schemaErrors('signals/activate-signal-response.json', body)).toEqual([]);
          }
          // A custom signal of another organization does not exist for this caller.
          const custom = await client.call('activate_signal', {
            signal_agent_segment_id: 'sig_custom_acme_lapsed_buyers',
            deployments: [TTD],
            idempotency_key: `errors-${host}-custom-0123456789`,
          });
          expect(structuredClone(custom.body.errors[0])).toMatchObject({ code: 'SIGNAL_AGENT_SEGMENT_NOT_FOUND', field: 'signal_agent_segment_id' });
          // Restricted platform for this organization.
          const grocery = await client.call('activate_signal', {
            signal_agent_segment_id: 'sig_retail_grocery_premium',
            deployments: [{ type: 'platform', platform: 'retail-media-dsp' }],
            idempotency_key: `errors-${host}-retail-0123456789`,
          });
          expect(structuredClone(grocery.body.errors[0])).toMatchObject({ code: 'DEPLOYMENT_UNAUTHORIZED', field: 'deployments[0].platform' });
        });

        test('unknown token -> HTTP 401 AUTH_REQUIRED; an organization API key is accepted', async () => {
          const denied = (async () => {
            const stranger = await clientFor(host, s.server, 'not-a-known-token-at-all');
            try {
              return await stranger.call('get_signals', { signal_spec: 'cars' });
            } finally {
              await stranger.close();
            }
          })();
          if (host === 'rest') {
            const { ok, body } = await denied;
            expect(ok).toBe(false);
            expect(body.code).toBe('AUTH_REQUIRED');
          } else {
            // The SDK clients surface the transport's 401 as an error.
            await expect(denied).rejects.toThrow();
          }
          const keyed = await clientFor(host, s.server, s.apiKey);
          const allowed = await keyed.call('get_signals', { signal_spec: 'cars' });
          await keyed.close();
          expect(allowed.ok).toBe(true);
          expect(allowed.body.signals.length).toBeGreaterThan(0);
        });

        test('capabilities declare idempotency, protocols and the signals block', async () => {
          const { ok, body } = await client.call('get_proto_capabilities', {});
          expect(ok).toBe(true);
          expect(body.proto).toEqual({ major_versions: [3], idempotency: { supported: true, replay_ttl_seconds: 86400 } });
          expect(body.supported_protocols).toEqual(['signals']);
          expect(body.signals.data_provider_domains).toContain('meridian-auto.example');
        });

        test("polling another principal's task answers not found", async () => {
          const signal = { rest: 'sig_media_gamers', mcp: 'sig_media_news_readers', a2a: 'sig_media_podcast_listeners' }[host];
          const { body } = await client.call('activate_signal', {
            signal_agent_segment_id: signal,
            deployments: [{ type: 'platform', platform: 'the-trade-desk' }],
            idempotency_key: `private-${host}-0123456789`,
          });
          expect(body.task_id).toBeString();
          const other = await clientFor(host, s.server, s.apiKey);
          const poll = other.poll(body.task_id);
          if (host === 'a2a') await expect(poll).rejects.toThrow();
          else expect((await poll).status).toBe('failed');
          await other.close();
          await s.runDue();
        });
      });
    }
  },
);
