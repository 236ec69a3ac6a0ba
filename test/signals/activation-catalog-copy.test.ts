import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database, type DatabasePort } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from '../agents/fixture.ts';

// activate_signal checks the call against this instance's copy of the catalog; its write runs only
// while the database still holds that catalog version. These tests change the catalog behind the
// instance's back (a write on another instance whose notification has not arrived): the call must
// answer from the database's catalog, never from the outdated copy.

const SEED_SIGNAL = 'sig_auto_intenders_suv';

/** A catalog write that bumps the version but notifies no instance (its notification is still on the way). */
async function silently(db: DatabasePort, change: ReturnType<typeof sql>): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(change);
    await tx.query(sql`UPDATE signal_catalog_version SET version = version + 1`);
  });
}

async function rows(db: DatabasePort) {
  const [row] = await db.query<{ activations: number; tasks: number; keys: number }>(sql`
    SELECT (SELECT count(*)::int FROM signal_activations) AS activations, (SELECT count(*)::int FROM tasks) AS tasks,
           (SELECT count(*)::int FROM idempotency_keys) AS keys`);
  return row!;
}

const copySignal = (id: string) => sql`
  INSERT INTO signals SELECT (jsonb_populate_record(s, jsonb_build_object('id', ${id}::text))).* FROM signals s WHERE s.id = ${SEED_SIGNAL}::text`;

forEachDatabase<SignalsServer>(
  'activate_signal against an outdated catalog copy',
  (adapter, schema) => startSignalsServer(adapter, schema),
  (s) => s.server.close(),
  (get) => {
    test('a signal removed elsewhere is not found (nothing written), though this copy still lists it', async () => {
      const s = get();
      const db = s.server.deployment.get(Database);
      await silently(db, copySignal('sig_copy_removed'));
      const client = restClient(s.server, TOKEN);
      // The copy learns of the signal (the first call finds its copy outdated and reloads) ...
      const first = await client.call('activate_signal', {
        signal_agent_segment_id: 'sig_copy_removed',
        deployments: [{ type: 'platform', platform: 'xandr' }],
        idempotency_key: 'copy-removed-first-0001',
      });
      expect(first.body.status).toBe('submitted');
      // ... then the signal goes away elsewhere, unannounced.
      await silently(db, sql`DELETE FROM signals WHERE id = 'sig_copy_removed'`);
      const before = await rows(db);
      const answer = await client.call('activate_signal', {
        signal_agent_segment_id: 'sig_copy_removed',
        deployments: [{ type: 'platform', platform: 'the-trade-desk' }],
        idempotency_key: 'copy-removed-second-0001',
      });
      expect(answer.ok).toBe(false);
      expect(answer.body.errors[0]).toMatchObject({ code: 'SIGNAL_AGENT_SEGMENT_NOT_FOUND', field: 'signal_agent_segment_id' });
      expect(await rows(db)).toEqual(before);
    });

    test('a signal added elsewhere activates at once, before its notification arrives', async () => {
      const s = get();
      const db = s.server.deployment.get(Database);
      await silently(db, copySignal('sig_copy_added'));
      const answer = await restClient(s.server, TOKEN).call('activate_signal', {
        signal_agent_segment_id: 'sig_copy_added',
        deployments: [{ type: 'platform', platform: 'xandr' }],
        idempotency_key: 'copy-added-0000000001',
      });
      expect(answer.body).toMatchObject({ status: 'submitted', deployments: [{ type: 'platform', platform: 'xandr', is_live: false }] });
    });

    test('a platform closed to the caller elsewhere refuses the activation', async () => {
      const s = get();
      const db = s.server.deployment.get(Database);
      await silently(
        db,
        sql`UPDATE signal_destinations SET allowed_orgs = ARRAY['0195f0c0-0000-7000-8000-0000000000aa']::uuid[] WHERE key = 'platform:amazon-dsp'`,
      );
      const before = await rows(db);
      const answer = await restClient(s.server, TOKEN).call('activate_signal', {
        signal_agent_segment_id: SEED_SIGNAL,
        deployments: [{ type: 'platform', platform: 'amazon-dsp' }],
        idempotency_key: 'copy-closed-platform-01',
      });
      expect(answer.body.errors?.[0]).toMatchObject({ code: 'DEPLOYMENT_UNAUTHORIZED', field: 'deployments[0].platform' });
      expect(await rows(db)).toEqual(before);
    });

    test('a retry of a completed activation replays it, even once the catalog no longer allows it', async () => {
      const s = get();
      const db = s.server.deployment.get(Database);
      await silently(db, copySignal('sig_copy_retired'));
      const client = restClient(s.server, TOKEN);
      const args = {
        signal_agent_segment_id: 'sig_copy_retired',
        deployments: [{ type: 'platform', platform: 'xandr' }],
        idempotency_key: 'copy-retired-retry-0001',
      };
      const first = await client.call('activate_signal', args);
      expect(first.body.status).toBe('submitted');
      await silently(db, sql`UPDATE signals SET owner_org = '0195f0c0-0000-7000-8000-0000000000bb'::uuid WHERE id = 'sig_copy_retired'`);
      const before = await rows(db);
      const retry = await client.call('activate_signal', args);
      expect(retry.body).toMatchObject({ status: 'submitted', task_id: first.body.task_id, replayed: true });
      expect(await rows(db)).toEqual(before);
    });
  },
);
