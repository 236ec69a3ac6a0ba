import * as v from 'valibot';
import { createHash } from 'node:crypto';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import {
  agentKey,
  findDestinations,
  findSignal,
  normalizeAgentUrl,
  platformKey,
  searchSignals,
  type ActivationRow,
  type SignalRow,
} from './catalog.ts';

// ---- Input schemas ----------------------------------------------------------------------

const destination = v.variant(
  'type',
  [
    v.object({
      type: v.literal('platform'),
      platform: v.pipe(v.string(), v.minLength(1, 'is required'), v.maxLength(100, 'must be at most 100 characters')),
      account: v.optional(v.pipe(v.string(), v.maxLength(200))),
    }),
    v.object({
      type: v.literal('agent'),
      agent_url: v.pipe(v.string(), v.maxLength(2048), v.url('must be an absolute URL')),
      account: v.optional(v.pipe(v.string(), v.maxLength(200))),
    }),
  ],
  'must be an object {type: "platform", platform} or {type: "agent", agent_url}',
);
export type Destination = v.InferOutput<typeof destination>;

const destinations = (max: number) =>
  v.pipe(v.array(destination, 'must be an array of deployment targets'), v.minLength(1, 'must not be empty'), v.maxLength(max, `accepts at most ${max} targets`));
const countries = v.pipe(
  v.array(v.pipe(v.string(), v.regex(/^[A-Z]{2}$/, 'must be ISO 3166-1 alpha-2 codes (e.g. "US")')), 'must be an array of country codes'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(250, 'accepts at most 250 countries'),
);

export const getSignalsInput = v.object({
  signal_spec: v.pipe(v.string('is required (a natural-language description of the audience)'), v.minLength(1, 'must not be empty'), v.maxLength(2000, 'must be at most 2000 characters')),
  deliver_to: v.optional(v.object({ deployments: destinations(50), countries })),
  // 3.1 clients send these at the top level instead of deliver_to.
  destinations: v.optional(destinations(50)),
  countries: v.optional(countries),
  filters: v.optional(
    v.object({
      catalog_types: v.optional(v.pipe(v.array(v.picklist(['marketplace', 'custom', 'owned'], 'must be marketplace, custom or owned')), v.minLength(1), v.maxLength(3))),
      data_providers: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(200))), v.minLength(1), v.maxLength(50, 'accepts at most 50 providers'))),
      max_cpm: v.optional(v.pipe(v.number(), v.minValue(0, 'must be at least 0'))),
      min_coverage_percentage: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100, 'must be between 0 and 100'))),
    }),
  ),
  max_results: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1), v.maxValue(100, 'must be at most 100'))),
  pagination: v.optional(v.object({ max_results: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100))), cursor: v.optional(v.string()) })),
});

export const activateSignalInput = v.pipe(
  v.object({
    signal_agent_segment_id: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(255)),
    // The spec names the array `deployments`; 3.1 clients name it `destinations`.
    deployments: v.optional(destinations(20)),
    destinations: v.optional(destinations(20)),
    pricing_option_id: v.optional(v.pipe(v.string(), v.maxLength(255))),
    action: v.optional(v.picklist(['activate', 'deactivate'], 'must be activate or deactivate'), 'activate'),
  }),
  v.forward(
    v.check((i) => !!(i.deployments ?? i.destinations), 'is required (deployment targets; `deployments` is accepted too)'),
    ['destinations'],
  ),
);

// ---- Errors -------------------------------------------------------------------------------

export interface SignalsErrorItem {
  code: string;
  message: string;
  field?: string;
  suggestion?: string;
}

/** A signals failure with every problem listed (`{errors:[{code, message, field, suggestion}]}`). */
export function signalsError(items: SignalsErrorItem[]): ProtocolError {
  const first = items[0]!;
  const status = first.code === 'SIGNAL_AGENT_SEGMENT_NOT_FOUND' || first.code === 'AGENT_NOT_FOUND' ? 404 : first.code === 'ALREADY_ACTIVATED' ? 409 : first.code.endsWith('UNAUTHORIZED') || first.code.endsWith('DENIED') ? 403 : 400;
  const errors = items.map((i) => ({ ...i, recovery: 'correctable' }));
  return new ProtocolError(first.code, first.message, { status, field: first.field, suggestion: first.suggestion, extra: { errors } });
}

// ---- Rendering -----------------------------------------------------------------------------

interface Options {
  /** This agent's URL (signal_ref of custom/owned signals). */
  agentUrl: string;
  /** Override of the time activation takes (tests, the public test agent); default: the catalog's estimate. */
  activationDelaySeconds?: number;
}

const destKey = (d: Destination) => (d.type === 'platform' ? platformKey(d.platform) : agentKey(d.agent_url)) + (d.account ? `#${d.account}` : '');

function deployment(d: Destination, minutes: number, activation?: ActivationRow): Json {
  const out: Json = d.type === 'platform' ? { type: 'platform', platform: d.platform } : { type: 'agent', agent_url: d.agent_url };
  if (d.account) out.account = d.account;
  const live = activation?.status === 'live';
  out.is_live = live;
  if (live) {
    out.activation_key = activation!.activation_key;
    out.deployed_at = new Date(activation!.deployed_at!).toISOString();
  } else {
    out.estimated_activation_duration_minutes = activation ? Number(activation.estimated_minutes) : minutes;
  }
  return out;
}

function minutesFor(signal: SignalRow, d: Destination): number | null {
  if (d.type === 'platform') return signal.platforms.find((p) => p.platform === d.platform.toLowerCase())?.estimated_activation_duration_minutes ?? null;
  const url = normalizeAgentUrl(d.agent_url);
  return signal.agents.find((a) => a.agent_url === url)?.estimated_activation_duration_minutes ?? null;
}

function renderSignal(signal: SignalRow, targets: Destination[] | undefined, activations: ActivationRow[], agentUrl: string): Json {
  const byKey = new Map(activations.filter((a) => a.signal_id === signal.id).map((a) => [a.destination_key, a]));
  const wanted: Destination[] = targets?.length
    ? targets.filter((d) => minutesFor(signal, d) !== null)
    : signal.platforms.map((p) => ({ type: 'platform' as const, platform: p.platform }));
  const out: Json = {
    signal_agent_segment_id: signal.id,
    signal_ref:
      signal.signal_type === 'marketplace' && signal.data_provider_domain
        ? { scope: 'data_provider', data_provider_domain: signal.data_provider_domain, signal_id: signal.id }
        : { scope: 'signal_source', signal_source_url: agentUrl, signal_id: signal.id },
    name: signal.name,
    description: signal.description,
    value_type: 'binary',
    signal_type: signal.signal_type,
    data_provider: signal.data_provider,
    coverage_percentage: Number(signal.coverage_percentage),
    deployments: wanted.map((d) => deployment(d, minutesFor(signal, d) ?? 0, byKey.get(destKey(d)))),
  };
  if (signal.cpm !== null && signal.currency) {
    const cpm = Number(signal.cpm);
    out.pricing = { cpm, currency: signal.currency };
    out.pricing_options = [{ pricing_option_id: `po_${signal.id}_cpm`, model: 'cpm', cpm, currency: signal.currency }];
  }
  if (signal.countries.length) out.countries = signal.countries;
  return out;
}

function activationKey(namespace: string, signal: SignalRow, d: Destination, principalId: string): Json {
  if (d.type === 'agent') return { type: 'key_value', key: `${namespace}_signal`, value: signal.id };
  // Stable per (signal, principal, platform): a re-activation after deactivation gets the same segment.
  const digest = createHash('sha256').update(`${signal.id}|${principalId}|${d.platform}|${d.account ?? ''}`).digest('hex').slice(0, 12);
  return { type: 'segment_id', segment_id: `${d.platform.replace(/[^a-z0-9]+/gi, '').slice(0, 8)}_${digest}` };
}

// ---- Tasks ---------------------------------------------------------------------------------

export function getSignalsTask(db: DatabasePort, options: Options) {
  return defineTask({
    name: 'get_signals',
    description: 'Discover audience signals for a natural-language spec, filtered by deployment targets, countries, catalog type, provider, CPM and coverage.',
    protocol: 'signals',
    errorShape: 'signals',
    input: getSignalsInput,
    async handler({ input, principal }) {
      const targets = input.deliver_to?.deployments ?? input.destinations;
      const countries = input.deliver_to?.countries ?? input.countries;
      const { rows, activations } = await searchSignals(db, {
        orgId: principal.orgId,
        spec: input.signal_spec,
        catalogTypes: input.filters?.catalog_types,
        dataProviders: input.filters?.data_providers,
        maxCpm: input.filters?.max_cpm,
        minCoverage: input.filters?.min_coverage_percentage,
        countries,
        platforms: targets?.flatMap((d) => (d.type === 'platform' ? [d.platform.toLowerCase()] : [])),
        agentUrls: targets?.flatMap((d) => (d.type === 'agent' ? [normalizeAgentUrl(d.agent_url)] : [])),
        limit: input.pagination?.max_results ?? input.max_results ?? 20,
      }, principal.id);
      return {
        signals: rows.map((r) => renderSignal(r, targets, activations, options.agentUrl)),
        // No `account` in the request: the response describes the public layer.
        cache_scope: 'public',
      };
    },
  });
}

export function activateSignalTask(db: DatabasePort, ids: IdsPort, options: Options) {
  return defineTask({
    name: 'activate_signal',
    description: 'Activate a signal on platforms (segment_id keys) or sales agents (key_value keys). Asynchronous: answers submitted with a task id, then is_live with activation_key and deployed_at.',
    protocol: 'signals',
    errorShape: 'signals',
    mutating: true,
    input: activateSignalInput,
    async handler({ input, principal, clock, namespace, task }) {
      const field = input.destinations ? 'destinations' : 'deployments';
      const targets = (input.destinations ?? input.deployments)!;
      const signal = await findSignal(db, input.signal_agent_segment_id, principal.orgId);
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

      const known = await findDestinations(db, targets.map((d) => (d.type === 'platform' ? platformKey(d.platform) : agentKey(d.agent_url))));
      const errors: Parameters<typeof signalsError>[0] = [];
      targets.forEach((d, i) => {
        const at = `${field}[${i}]`;
        if (d.type === 'agent') {
          const row = known.get(agentKey(d.agent_url));
          const member = row && (row.owner_org === principal.orgId || (row.allowed_orgs ?? []).includes(principal.orgId));
          if (!row || (row.visibility === 'private' && !member)) {
            errors.push({ code: 'AGENT_NOT_FOUND', message: `No sales agent ${d.agent_url} is known to this signals agent`, field: `${at}.agent_url`, suggestion: 'Deploy to a sales agent this signals agent lists' });
          } else if (row.allowed_orgs && !member) {
            errors.push({ code: 'AGENT_ACCESS_DENIED', message: `You are not allowed to deploy to ${d.agent_url}`, field: `${at}.agent_url`, suggestion: 'Ask the sales agent operator for access' });
          } else if (minutesFor(signal, d) === null) {
            errors.push({ code: 'DEPLOYMENT_UNAUTHORIZED', message: `Signal ${signal.id} cannot be deployed to ${d.agent_url}`, field: `${at}.agent_url`, suggestion: 'Pick a target listed in the signal\'s deployments' });
          }
          return;
        }
        const row = known.get(platformKey(d.platform));
        if (minutesFor(signal, d) === null) {
          const platforms = signal.platforms.map((p) => p.platform).join(', ');
          errors.push({ code: 'DEPLOYMENT_UNAUTHORIZED', message: `Signal ${signal.id} is not deployable to platform ${d.platform}`, field: `${at}.platform`, suggestion: `Deployable platforms: ${platforms}` });
        } else if (row?.allowed_orgs && !row.allowed_orgs.includes(principal.orgId)) {
          errors.push({ code: 'DEPLOYMENT_UNAUTHORIZED', message: `Your account is not authorized to deploy to ${d.platform}`, field: `${at}.platform`, suggestion: 'Contact the platform to enable your account' });
        }
      });
      if (errors.length) throw signalsError(errors);

      const keys = targets.map(destKey);
      if (new Set(keys).size !== keys.length) {
        throw new ProtocolError('INVALID_REQUEST', `${field}: lists the same target twice`, { field });
      }

      if (input.action === 'deactivate') {
        await db.query(sql`DELETE FROM signal_activations WHERE principal_id = ${principal.id}::text AND signal_id = ${signal.id}::text AND destination_key = ANY(${keys}::text[])`);
        return { deployments: targets.map((d) => deployment(d, minutesFor(signal, d) ?? 0)) };
      }

      const now = clock.now();
      const rows = targets.map((d) => {
        const minutes = minutesFor(signal, d)!;
        const delay = options.activationDelaySeconds ?? minutes * 60;
        return { id: ids.uuid7(), d, key: destKey(d), minutes, readyAt: new Date(now.getTime() + delay * 1000) };
      });
      const runAt = new Date(Math.max(...rows.map((r) => r.readyAt.getTime())));
      return task.defer({
        status: 'submitted',
        message: `Activating ${signal.name} on ${targets.length} target(s)`,
        partial: { deployments: rows.map((r) => deployment(r.d, r.minutes)) },
        state: { signal_id: signal.id, activation_ids: rows.map((r) => r.id) },
        runAt,
        // The pending activations commit with the task record, or not at all.
        within: async (tx) => {
          const taken: number[] = [];
          for (const [i, r] of rows.entries()) {
            const inserted = await tx.query(sql`
              INSERT INTO signal_activations (id, signal_id, principal_id, destination_key, destination, status, estimated_minutes, ready_at, created_at)
              VALUES (${r.id}::uuid, ${signal.id}::text, ${principal.id}::text, ${r.key}::text, ${r.d}::jsonb, 'pending',
                      ${r.minutes}::numeric, ${r.readyAt}::timestamptz, ${now}::timestamptz)
              ON CONFLICT (signal_id, principal_id, destination_key) DO NOTHING RETURNING id`);
            if (!inserted.length) taken.push(i);
          }
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
      const ids = state.activation_ids as string[];
      const rows = await db.query<ActivationRow & { ready_at: string | Date; principal_id: string }>(sql`
        SELECT id::text, signal_id, destination_key, destination, status, activation_key, estimated_minutes, deployed_at, ready_at, principal_id
        FROM signal_activations WHERE id = ANY(${ids}::uuid[]) ORDER BY array_position(${ids}::uuid[], id)`);
      if (rows.length !== ids.length) {
        throw signalsError([{ code: 'ACTIVATION_FAILED', message: 'The activation was withdrawn before it completed', suggestion: 'Activate the signal again' }]);
      }
      const now = clock.now();
      const latest = Math.max(...rows.map((r) => new Date(r.ready_at).getTime()));
      if (latest > now.getTime()) return reschedule({ state, runAt: new Date(latest), status: 'working', message: 'Waiting for the platforms to confirm' });
      const [signal] = await db.query<SignalRow>(sql`SELECT id, platforms, agents FROM signals WHERE id = ${state.signal_id as string}::text`);
      if (!signal) throw signalsError([{ code: 'ACTIVATION_FAILED', message: 'The signal was removed from the catalog during activation' }]);
      const deployments: Json[] = [];
      for (const r of rows) {
        const d = r.destination as unknown as Destination;
        // Idempotent: a step re-run after a crash keeps the key and time already recorded.
        const [live] = await db.query<ActivationRow>(sql`
          UPDATE signal_activations
          SET status = 'live',
              activation_key = COALESCE(activation_key, ${activationKey(namespace, signal, d, principalId)}::jsonb),
              deployed_at = COALESCE(deployed_at, ${now}::timestamptz)
          WHERE id = ${r.id}::uuid
          RETURNING id::text, signal_id, destination_key, destination, status, activation_key, estimated_minutes, deployed_at`);
        deployments.push(deployment(d, Number(r.estimated_minutes), live));
      }
      return { deployments };
    },
  });
}
