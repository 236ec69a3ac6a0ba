import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { upstreamUnavailable } from '../../lib/adcp/sandbox-directives.ts';
import { defineTask, StaleReadError, type Json } from '../../core/task.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import { agentKey, platformKey, type ActivationRow, type DestinationRow, type SignalRow } from './catalog.ts';
import type { SignalsCatalog } from './memory-catalog.ts';
import type { ActivationReads } from './activation-reads.ts';
import { activateSignalInput, type Destination } from './inputs.ts';
import { signalsError, type SignalsErrorItem } from './errors.ts';
import { activationKey, agentAccess, deployment, destKey, minutesFor, pricingOptions, type RenderOptions } from './render.ts';

export interface ActivationOptions extends RenderOptions {
  /** Override of the time activation takes (tests, the public test agent); default: the catalog's estimate. */
  activationDelaySeconds?: number;
  /** A sandbox's forced outages of the activation platforms (force_upstream_unavailable); absent: none. */
  upstreamDown?: (q: Queryable, principalId: string, tool: string) => Promise<boolean>;
}

/** Problems with the targets of an activation, each naming its field. */
function targetErrors(known: Map<string, DestinationRow>, signal: SignalRow, targets: Destination[], field: string, orgId: string, options: RenderOptions) {
  const errors: SignalsErrorItem[] = [];
  targets.forEach((d, i) => {
    const at = `${field}[${i}]`;
    if (d.type === 'agent') {
      // Buyers activate on any sales agent by URL; only agents private to others or closed to the caller are refused.
      const access = agentAccess(known.get(agentKey(d.agent_url)), orgId);
      if (access === 'hidden') {
        errors.push({
          code: 'AGENT_NOT_FOUND',
          message: `No sales agent ${d.agent_url} is available to you`,
          field: `${at}.agent_url`,
          suggestion: 'Deploy to a sales agent you have access to',
        });
      } else if (access === 'denied') {
        errors.push({
          code: 'AGENT_ACCESS_DENIED',
          message: `You are not allowed to deploy to ${d.agent_url}`,
          field: `${at}.agent_url`,
          suggestion: 'Ask the sales agent operator for access',
        });
      }
      return;
    }
    const row = known.get(platformKey(d.platform));
    if (minutesFor(signal, d, options) === null) {
      errors.push({
        code: 'DEPLOYMENT_UNAUTHORIZED',
        message: `Signal ${signal.id} is not deployable to platform ${d.platform}`,
        field: `${at}.platform`,
        suggestion: `Deployable platforms: ${signal.platforms.map((p) => p.platform).join(', ')}`,
      });
    } else if (row?.allowed_orgs && !row.allowed_orgs.includes(orgId)) {
      errors.push({
        code: 'DEPLOYMENT_UNAUTHORIZED',
        message: `Your account is not authorized to deploy to ${d.platform}`,
        field: `${at}.platform`,
        suggestion: 'Contact the platform to enable your account',
      });
    }
  });
  return errors;
}

/** Condition of activation writes: the catalog is still at `version`, the copy the call was checked against. */
const atCopy = (version: string) => sql`EXISTS (SELECT 1 FROM signal_catalog_version WHERE version = ${version}::bigint)`;

/**
 * A StaleReadError (the call runs again on a fresh copy) unless the database still holds catalog
 * `version`: asked when a write conditioned on it changed fewer rows than expected, and before a
 * refusal drawn from the copy stands.
 */
async function confirmCopy(q: Queryable, catalog: SignalsCatalog, version: string): Promise<void> {
  const [row] = await q.query<{ version: string }>(sql`SELECT version::text FROM signal_catalog_version`);
  if (row?.version !== version) throw new StaleReadError('the signal catalog changed since this instance loaded it', () => catalog.snapshot.refresh());
}

async function refuse(q: Queryable, catalog: SignalsCatalog, version: string, error: Error): Promise<never> {
  await confirmCopy(q, catalog, version);
  throw error;
}

export function activateSignalTask(db: DatabasePort, ids: IdsPort, catalog: SignalsCatalog, reads: ActivationReads, options: ActivationOptions) {
  return defineTask({
    name: 'activate_signal',
    description:
      'Activate a signal on platforms (segment_id keys) or sales agents (key_value keys). Asynchronous: answers submitted with a task id and each activation_key, then is_live with deployed_at.',
    protocol: 'signals',
    errorShape: 'signals',
    requestSchema: 'signals/activate-signal-request.json',
    mutating: true,
    // Database only: the pending activations, the task record and the idempotency record commit in
    // one transaction; the catalog is read from this instance's copy, checked by version in the write.
    transactional: true,
    input: activateSignalInput,
    async handler({ input, principal, clock, namespace, task, tx }) {
      const q = tx ?? db;
      if (options.upstreamDown && (await options.upstreamDown(q, principal.id, 'activate_signal')))
        throw upstreamUnavailable('activate_signal', 'the activation platforms');
      const field = input.destinations ? 'destinations' : 'deployments';
      const targets = (input.destinations ?? input.deployments)!;
      const copy = catalog.current();
      const signal = catalog.signal(copy, input.signal_agent_segment_id, principal.orgId);
      if (!signal) {
        return refuse(
          q,
          catalog,
          copy.version,
          signalsError([
            {
              code: 'SIGNAL_AGENT_SEGMENT_NOT_FOUND',
              message: `No signal "${input.signal_agent_segment_id.slice(0, 100)}" is available to you`,
              field: 'signal_agent_segment_id',
              suggestion: 'Use a signal_agent_segment_id returned by get_signals',
            },
          ]),
        );
      }
      const offered = pricingOptions(signal).map((p) => p.pricing_option_id as string);
      if (input.pricing_option_id !== undefined && !offered.includes(input.pricing_option_id)) {
        return refuse(
          q,
          catalog,
          copy.version,
          new ProtocolError('INVALID_REQUEST', `pricing_option_id: must be one of the signal's pricing options (${offered.join(', ')})`, {
            field: 'pricing_option_id',
            suggestion: 'Use a pricing_options[].pricing_option_id returned by get_signals for this signal',
          }),
        );
      }
      const errors = targetErrors(copy.destinations, signal, targets, field, principal.orgId, options);
      if (errors.length) return refuse(q, catalog, copy.version, signalsError(errors));

      const keys = targets.map(destKey);
      if (new Set(keys).size !== keys.length) {
        throw new ProtocolError('INVALID_REQUEST', `${field}: lists the same target twice`, { field });
      }

      if (input.action === 'deactivate') {
        const [removed] = await Promise.all([
          q.query(sql`
          DELETE FROM signal_activations
          WHERE principal_id = ${principal.id}::text AND signal_id = ${signal.id}::text AND destination_key = ANY(${keys}::text[])
            AND ${atCopy(copy.version)}
          RETURNING destination_key`),
          reads.changed(q, principal.id),
        ]);
        if (removed.length < keys.length) await confirmCopy(q, catalog, copy.version);
        return { deployments: targets.map((d) => deployment(d, minutesFor(signal, d, options) ?? 0)) };
      }

      const now = clock.now();
      const rows = targets.map((d) => {
        const minutes = minutesFor(signal, d, options)!;
        const delay = options.activationDelaySeconds ?? minutes * 60;
        // Keys are deterministic, so the first answer already carries them (is_live false until ready).
        const key = activationKey(namespace, signal.id, d, principal.id);
        return { id: ids.uuid7(), d, key, destination: destKey(d), minutes, readyAt: new Date(now.getTime() + delay * 1000) };
      });
      const pending = (r: (typeof rows)[number]) =>
        deployment(r.d, r.minutes, { status: 'pending', activation_key: r.key, estimated_minutes: r.minutes } as ActivationRow);
      const runAt = new Date(Math.max(...rows.map((r) => r.readyAt.getTime())));
      return task.defer({
        status: 'submitted',
        message: `Activating ${signal.name} on ${targets.length} target(s)`,
        partial: { deployments: rows.map(pending) },
        state: { signal_id: signal.id, activation_ids: rows.map((r) => r.id) },
        runAt,
        // The pending activations commit with the task record, or not at all: one statement for
        // every target, issued with the task record's (one round trip).
        within: async (wtx) => {
          const values = rows.map(
            (r) => sql`(${r.id}::uuid, ${r.destination}::text, ${r.d}::jsonb, ${r.key}::jsonb, ${r.minutes}::numeric, ${r.readyAt}::timestamptz)`,
          );
          const [inserted] = await Promise.all([
            wtx.query<{ destination_key: string }>(sql`
            INSERT INTO signal_activations (id, signal_id, principal_id, destination_key, destination, status, activation_key, estimated_minutes, ready_at, created_at)
            SELECT r.id, ${signal.id}::text, ${principal.id}::text, r.destination_key, r.destination, 'pending', r.activation_key,
                   r.estimated_minutes, r.ready_at, ${now}::timestamptz
            FROM (VALUES ${sql.join(values)}) AS r(id, destination_key, destination, activation_key, estimated_minutes, ready_at)
            WHERE ${atCopy(copy.version)}
            ON CONFLICT (signal_id, principal_id, destination_key) DO NOTHING
            RETURNING destination_key`),
            reads.changed(wtx, principal.id),
          ]);
          if (inserted.length < rows.length) await confirmCopy(wtx, catalog, copy.version);
          const added = new Set(inserted.map((r) => r.destination_key));
          const taken = rows.flatMap((r, i) => (added.has(r.destination) ? [] : [i]));
          // A target already activated (or being activated) is ALREADY_ACTIVATED; nothing is kept.
          if (taken.length) {
            throw signalsError(
              taken.map((i) => ({
                code: 'ALREADY_ACTIVATED',
                message: `Signal ${signal.id} is already active (or activating) on this target`,
                field: `${field}[${i}]`,
                suggestion: 'Read its activation_key from get_signals with deliver_to naming this target',
              })),
            );
          }
        },
      });
    },
    async resume({ state, principalId, clock, namespace, reschedule }) {
      const activationIds = state.activation_ids as string[];
      const rows = await db.query<ActivationRow & { ready_at: string | Date; principal_id: string }>(sql`
        SELECT id::text, signal_id, destination_key, destination, status, activation_key, estimated_minutes, deployed_at, ready_at, principal_id
        FROM signal_activations WHERE id = ANY(${activationIds}::uuid[]) ORDER BY array_position(${activationIds}::uuid[], id)`);
      if (rows.length !== activationIds.length) {
        throw signalsError([
          { code: 'ACTIVATION_FAILED', message: 'The activation was withdrawn before it completed', suggestion: 'Activate the signal again' },
        ]);
      }
      const now = clock.now();
      const latest = Math.max(...rows.map((r) => new Date(r.ready_at).getTime()));
      if (latest > now.getTime()) return reschedule({ state, runAt: new Date(latest), status: 'working', message: 'Waiting for the platforms to confirm' });
      const [signal] = await db.query<SignalRow>(sql`SELECT id FROM signals WHERE id = ${state.signal_id as string}::text`);
      if (!signal) throw signalsError([{ code: 'ACTIVATION_FAILED', message: 'The signal was removed from the catalog during activation' }]);
      // Every target goes live together, announced with the change.
      const deployments: Json[] = await db.transaction(async (tx) => {
        const out: Json[] = [];
        for (const r of rows) {
          const d = r.destination as unknown as Destination;
          // Idempotent: a step re-run after a crash keeps the key and time already recorded.
          const [live] = await tx.query<ActivationRow>(sql`
            UPDATE signal_activations
            SET status = 'live',
                activation_key = COALESCE(activation_key, ${activationKey(namespace, signal.id, d, principalId)}::jsonb),
                deployed_at = COALESCE(deployed_at, ${now}::timestamptz)
            WHERE id = ${r.id}::uuid
            RETURNING id::text, signal_id, destination_key, destination, status, activation_key, estimated_minutes, deployed_at`);
          out.push(deployment(d, Number(r.estimated_minutes), live));
        }
        await reads.changed(tx, principalId);
        return out;
      });
      return { deployments };
    },
  });
}
