import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import { agentKey, findDestinations, findSignal, platformKey, type ActivationRow, type DestinationRow, type SignalRow } from './catalog.ts';
import { activateSignalInput, type Destination } from './inputs.ts';
import { signalsError, type SignalsErrorItem } from './errors.ts';
import { activationKey, agentAccess, deployment, destKey, minutesFor, pricingOptions, type RenderOptions } from './render.ts';

export interface ActivationOptions extends RenderOptions {
  /** Override of the time activation takes (tests, the public test agent); default: the catalog's estimate. */
  activationDelaySeconds?: number;
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

export function activateSignalTask(db: DatabasePort, ids: IdsPort, options: ActivationOptions) {
  return defineTask({
    name: 'activate_signal',
    description:
      'Activate a signal on platforms (segment_id keys) or sales agents (key_value keys). Asynchronous: answers submitted with a task id and each activation_key, then is_live with deployed_at.',
    protocol: 'signals',
    errorShape: 'signals',
    requestSchema: 'signals/activate-signal-request.json',
    mutating: true,
    // Database only: the claim, the pending activations, the task record and the replay response
    // commit in one transaction.
    transactional: true,
    input: activateSignalInput,
    async handler({ input, principal, clock, namespace, task, tx }) {
      const q = tx ?? db;
      const field = input.destinations ? 'destinations' : 'deployments';
      const targets = (input.destinations ?? input.deployments)!;
      // Both reads at once: one round trip.
      const [signal, known] = await Promise.all([
        findSignal(q, input.signal_agent_segment_id, principal.orgId),
        findDestinations(
          q,
          targets.map((d) => (d.type === 'platform' ? platformKey(d.platform) : agentKey(d.agent_url))),
        ),
      ]);
      if (!signal) {
        throw signalsError([
          {
            code: 'SIGNAL_AGENT_SEGMENT_NOT_FOUND',
            message: `No signal "${input.signal_agent_segment_id.slice(0, 100)}" is available to you`,
            field: 'signal_agent_segment_id',
            suggestion: 'Use a signal_agent_segment_id returned by get_signals',
          },
        ]);
      }
      const offered = pricingOptions(signal).map((p) => p.pricing_option_id as string);
      if (input.pricing_option_id !== undefined && !offered.includes(input.pricing_option_id)) {
        throw new ProtocolError('INVALID_REQUEST', `pricing_option_id: must be one of the signal's pricing options (${offered.join(', ')})`, {
          field: 'pricing_option_id',
          suggestion: 'Use a pricing_options[].pricing_option_id returned by get_signals for this signal',
        });
      }
      const errors = targetErrors(known, signal, targets, field, principal.orgId, options);
      if (errors.length) throw signalsError(errors);

      const keys = targets.map(destKey);
      if (new Set(keys).size !== keys.length) {
        throw new ProtocolError('INVALID_REQUEST', `${field}: lists the same target twice`, { field });
      }

      if (input.action === 'deactivate') {
        await q.query(
          sql`DELETE FROM signal_activations WHERE principal_id = ${principal.id}::text AND signal_id = ${signal.id}::text AND destination_key = ANY(${keys}::text[])`,
        );
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
        // The pending activations commit with the task record, or not at all.
        // Issued together (one round trip with the task record's statements).
        within: async (wtx) => {
          const inserted = await Promise.all(
            rows.map((r) =>
              wtx.query(sql`
                INSERT INTO signal_activations (id, signal_id, principal_id, destination_key, destination, status, activation_key, estimated_minutes, ready_at, created_at)
                VALUES (${r.id}::uuid, ${signal.id}::text, ${principal.id}::text, ${r.destination}::text, ${r.d}::jsonb, 'pending', ${r.key}::jsonb,
                        ${r.minutes}::numeric, ${r.readyAt}::timestamptz, ${now}::timestamptz)
                ON CONFLICT (signal_id, principal_id, destination_key) DO NOTHING RETURNING id`),
            ),
          );
          const taken = rows.flatMap((_, i) => (inserted[i]!.length ? [] : [i]));
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
      const deployments: Json[] = [];
      for (const r of rows) {
        const d = r.destination as unknown as Destination;
        // Idempotent: a step re-run after a crash keeps the key and time already recorded.
        const [live] = await db.query<ActivationRow>(sql`
          UPDATE signal_activations
          SET status = 'live',
              activation_key = COALESCE(activation_key, ${activationKey(namespace, signal.id, d, principalId)}::jsonb),
              deployed_at = COALESCE(deployed_at, ${now}::timestamptz)
          WHERE id = ${r.id}::uuid
          RETURNING id::text, signal_id, destination_key, destination, status, activation_key, estimated_minutes, deployed_at`);
        deployments.push(deployment(d, Number(r.estimated_minutes), live));
      }
      return { deployments };
    },
  });
}
