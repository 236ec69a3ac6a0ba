import { expect, test } from 'bun:test';
import { compactVerify, importJWK } from 'jose';
import { Signer } from '../../core/ports/signer.ts';
import { canonicalJson } from '../../lib/canonical-json.ts';
import { forEachDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { deliverWebhooks, startSink } from '../interop/support.ts';
import { ACME, key, NOVA, POLL_MS, startListsServer, TOKEN, type ListsServer } from './lists-fixture.ts';

// A change of a list's resolved content notifies its webhook_url: `property_list_changed` /
// `collection_list_changed`, valid in both versions, delivered signed (RFC 9421) through the outbox,
// its `signature` member a detached JWS of the agent's published key.
interface World {
  s: ListsServer;
  sink: ReturnType<typeof startSink>;
}

const ids = (...domains: string[]) => domains.map((value) => ({ type: 'domain', value }));

async function verifySignature(s: ListsServer, body: Record<string, unknown>) {
  const { signature, ...payload } = body;
  const [header, , sig] = String(signature).split('.');
  const { kid } = JSON.parse(Buffer.from(header!, 'base64url').toString('utf8'));
  const jwk = s.server.deployment
    .get(Signer)
    .jwks()
    .keys.find((k) => k.kid === kid)!;
  const compact = `${header}.${Buffer.from(canonicalJson(payload)).toString('base64url')}.${sig}`;
  await compactVerify(compact, await importJWK(jwk as any, jwk.alg as string));
}

forEachDatabase<World>(
  'governance lists webhooks',
  async (adapter, schema) => ({ s: await startListsServer(adapter, schema), sink: startSink() }),
  async ({ s, sink }) => {
    sink.stop();
    await s.server.close();
  },
  (get) => {
    test('an update that changes the resolved properties sends property_list_changed; one that does not, nothing', async () => {
      const { s, sink } = get();
      const c = restClient(s.server, TOKEN);
      const created = await c.call('create_property_list', {
        account: ACME,
        name: 'Watched',
        base_properties: [{ selection_type: 'identifiers', identifiers: ids('a.example', 'b.example') }],
        webhook_url: sink.url('/property'),
        idempotency_key: key(),
      });
      const listId = created.body.list.list_id;
      expect(created.body.list.webhook_url).toBe(sink.url('/property'));
      // Only the name: the resolved content is the same.
      await c.call('update_property_list', { list_id: listId, name: 'Watched list', idempotency_key: key() });
      await deliverWebhooks(s.server, s.timers, POLL_MS);
      expect(sink.received.filter((r) => r.path === '/property')).toHaveLength(0);

      s.clock.advance(60_000);
      await c.call('update_property_list', {
        list_id: listId,
        base_properties: [{ selection_type: 'identifiers', identifiers: ids('a.example', 'c.example', 'd.example') }],
        idempotency_key: key(),
      });
      await deliverWebhooks(s.server, s.timers, POLL_MS);
      const got = sink.received.filter((r) => r.path === '/property');
      expect(got).toHaveLength(1);
      const body = got[0]!.body;
      expect(bothVersionsErrors('property/property-list-changed-webhook.json', body)).toEqual([]);
      expect(body).toMatchObject({
        event: 'property_list_changed',
        list_id: listId,
        list_name: 'Watched list',
        change_summary: { properties_added: 2, properties_removed: 1, total_properties: 3 },
        resolved_at: '2026-03-02T00:01:00.000Z',
        cache_valid_until: '2026-03-03T00:01:00.000Z',
      });
      expect(got[0]!.headers.get('signature-input')).toBeTruthy();
      await verifySignature(s, body);

      // webhook_url "" removes the registration: later changes are not sent.
      await c.call('update_property_list', { list_id: listId, webhook_url: '', idempotency_key: key() });
      await c.call('update_property_list', {
        list_id: listId,
        base_properties: [{ selection_type: 'identifiers', identifiers: ids('e.example') }],
        idempotency_key: key(),
      });
      await deliverWebhooks(s.server, s.timers, POLL_MS);
      expect(sink.received.filter((r) => r.path === '/property')).toHaveLength(1);
    });

    test('a collection list registered on update notifies collection_list_changed', async () => {
      const { s, sink } = get();
      const c = restClient(s.server, TOKEN);
      const imdb = (...v: string[]) => v.map((value) => ({ type: 'imdb_id', value }));
      const created = await c.call('create_collection_list', {
        account: NOVA,
        name: 'Programs',
        base_collections: [{ selection_type: 'distribution_ids', identifiers: imdb('tt1', 'tt2') }],
        idempotency_key: key(),
      });
      const listId = created.body.list.list_id;
      await c.call('update_collection_list', { list_id: listId, webhook_url: sink.url('/collection'), idempotency_key: key() });
      await c.call('update_collection_list', { list_id: listId, filters: { exclude_distribution_ids: imdb('tt2') }, idempotency_key: key() });
      await deliverWebhooks(s.server, s.timers, POLL_MS);
      const got = sink.received.filter((r) => r.path === '/collection');
      expect(got).toHaveLength(1);
      expect(bothVersionsErrors('collection/collection-list-changed-webhook.json', got[0]!.body)).toEqual([]);
      expect(got[0]!.body).toMatchObject({
        event: 'collection_list_changed',
        list_id: listId,
        change_summary: { collections_added: 0, collections_removed: 1, total_collections: 1 },
      });
      await verifySignature(s, got[0]!.body);
    });
  },
);
