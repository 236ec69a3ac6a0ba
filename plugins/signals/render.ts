import { createHash } from 'node:crypto';
import type { Json } from '../../core/task.ts';
import { JsonPiece, type JsonPart } from '../../lib/prebuilt-json.ts';
import { agentKey, agentUrlKey, platformKey, type ActivationRow, type DestinationRow, type SignalRow } from './catalog.ts';
import type { Destination } from './inputs.ts';

export interface RenderOptions {
  /** This agent's URL (identity of signals it defines itself). */
  agentUrl: string;
  /** Estimate for a sales agent the signal does not list (buyers activate on any agent by URL). */
  agentActivationMinutes: number;
}

/** Priced signals carry their CPM; an owned signal (no incremental cost) is a zero CPM in this currency. */
const NO_COST_CURRENCY = 'USD';

export const destKey = (d: Destination) => (d.type === 'platform' ? platformKey(d.platform) : agentKey(d.agent_url)) + (d.account ? `#${d.account}` : '');

/** Whether the caller may deploy to a sales agent: unknown and public agents yes; private ones of others are hidden. */
export function agentAccess(row: DestinationRow | undefined, orgId: string): 'ok' | 'hidden' | 'denied' {
  if (!row) return 'ok';
  const member = row.owner_org === orgId || (row.allowed_orgs ?? []).includes(orgId);
  if (row.visibility === 'private' && !member) return 'hidden';
  if (row.allowed_orgs && !member) return 'denied';
  return 'ok';
}

/** Estimated minutes to activate on a target; null when the signal is not deployable to that platform. */
export function minutesFor(signal: SignalRow, d: Destination, options: RenderOptions): number | null {
  if (d.type === 'platform') return signal.platforms.find((p) => p.platform === d.platform.toLowerCase())?.estimated_activation_duration_minutes ?? null;
  const url = agentUrlKey(d.agent_url);
  return signal.agents.find((a) => a.agent_url === url)?.estimated_activation_duration_minutes ?? options.agentActivationMinutes;
}

/** The key a target uses for this signal, known before the activation completes. */
export function activationKey(namespace: string, signalId: string, d: Destination, principalId: string): Json {
  if (d.type === 'agent') return { type: 'key_value', key: `${namespace}_signal`, value: signalId };
  // Stable per (signal, principal, platform): a re-activation after deactivation gets the same segment.
  const digest = createHash('sha256')
    .update(`${signalId}|${principalId}|${d.platform}|${d.account ?? ''}`)
    .digest('hex')
    .slice(0, 12);
  return { type: 'segment_id', segment_id: `${d.platform.replace(/[^a-z0-9]+/gi, '').slice(0, 8)}_${digest}` };
}

/** A deployment entry: live with key and time, or pending with its estimate (and the key once it is known). */
export function deployment(d: Destination, minutes: number, activation?: ActivationRow): Json {
  const out: Json = d.type === 'platform' ? { type: 'platform', platform: d.platform } : { type: 'agent', agent_url: d.agent_url };
  if (d.account) out.account = d.account;
  const live = activation?.status === 'live';
  out.is_live = live;
  if (activation?.activation_key) out.activation_key = activation.activation_key;
  if (live) out.deployed_at = new Date(activation!.deployed_at!).toISOString();
  else out.estimated_activation_duration_minutes = activation ? Number(activation.estimated_minutes) : minutes;
  return out;
}

/**
 * The signal's identity in both AdCP versions, the same entry twice: `signal_id` (3.0, deprecated
 * in 3.1) and `signal_ref` (3.1). A marketplace signal of a named data provider is that provider's
 * catalog entry; any other is this agent's own.
 */
export function identity(signal: SignalRow, agentUrl: string): { signal_id: Json; signal_ref: Json } {
  if (signal.signal_type === 'marketplace' && signal.data_provider_domain) {
    const domain = signal.data_provider_domain;
    return {
      signal_id: { source: 'catalog', data_provider_domain: domain, id: signal.id },
      signal_ref: { scope: 'data_provider', data_provider_domain: domain, signal_id: signal.id },
    };
  }
  return {
    signal_id: { source: 'agent', agent_url: agentUrl, id: signal.id },
    signal_ref: { scope: 'signal_source', signal_source_url: agentUrl, signal_id: signal.id },
  };
}

/** Pricing options of a signal; their ids are what activate_signal accepts as `pricing_option_id`. */
export function pricingOptions(signal: SignalRow): Json[] {
  if (signal.pricing_options?.length) return signal.pricing_options as unknown as Json[];
  const priced = signal.cpm !== null && !!signal.currency;
  return [
    { pricing_option_id: `po_${signal.id}_cpm`, model: 'cpm', cpm: priced ? Number(signal.cpm) : 0, currency: priced ? signal.currency : NO_COST_CURRENCY },
  ];
}

/** A signal's members that depend on nothing but the signal (and this agent's URL), around `deployments`. */
function partsOf(signal: SignalRow, agentUrl: string): { head: Json; tail: Json } {
  const head: Json = {
    ...identity(signal, agentUrl),
    signal_agent_segment_id: signal.id,
    name: signal.name,
    description: signal.description,
    value_type: signal.value_type,
    signal_type: signal.signal_type,
    data_provider: signal.data_provider,
    coverage_percentage: Number(signal.coverage_percentage),
  };
  if (signal.value_type === 'categorical' && signal.categories) head.categories = [...signal.categories];
  if (signal.value_type === 'numeric' && signal.value_range) head.range = { ...signal.value_range };
  const tail: Json = { pricing_options: pricingOptions(signal) };
  if (signal.cpm !== null && signal.currency) tail.pricing = { cpm: Number(signal.cpm), currency: signal.currency };
  if (signal.countries.length) tail.countries = [...signal.countries];
  return { head, tail };
}

/** A signal's members around `deployments`, and their JSON: `{` + head + `,"deployments":`, then tail + `}`. */
interface Parts {
  head: Json;
  tail: Json;
  open: JsonPiece;
  close: JsonPiece;
  /** The signal rendered whole for a caller without activations of it, per targets (their JSON, targetsKey). */
  whole: Map<string, { value: Json; piece: JsonPiece }>;
}

/** Most target lists a row keeps rendered whole; past it they start afresh. */
const MAX_WHOLE = 16;

/** What names a call's targets for SignalRenderer.render (their JSON; a differently spelled equal list only misses). */
export const targetsKey = (targets: Destination[] | undefined): string => (targets?.length ? JSON.stringify(targets) : '');

/**
 * Renders the signals of get_signals answers with their JSON (lib/prebuilt-json.ts). What depends
 * on the signal alone is built and serialized once per row, and so is the whole signal for each list
 * of targets a caller without activations of it asks for: rows are a catalog copy's, shared and
 * read-only (memory-catalog.ts rowAt), so a reloaded copy's rows are rendered afresh. Rendered
 * signals are shared by the answers naming them: read-only.
 */
export class SignalRenderer {
  private readonly parts = new WeakMap<SignalRow, Parts>();

  constructor(private readonly options: RenderOptions) {}

  private partsOf(signal: SignalRow): Parts {
    let p = this.parts.get(signal);
    if (!p) {
      const { head, tail } = partsOf(signal, this.options.agentUrl);
      p = {
        head,
        tail,
        open: JsonPiece.text(`${JSON.stringify(head).slice(0, -1)},"deployments":`),
        close: JsonPiece.text(`,${JSON.stringify(tail).slice(1)}`),
        whole: new Map(),
      };
      this.parts.set(signal, p);
    }
    return p;
  }

  /** One signal of an answer for `targets` (named by `key`, targetsKey); its JSON appended to `json`. */
  render(signal: SignalRow, targets: Destination[] | undefined, key: string, activations: ActivationRow[], json: JsonPart[]): Json {
    const parts = this.partsOf(signal);
    const mine = activations.length ? activations.filter((a) => a.signal_id === signal.id) : activations;
    if (!mine.length) {
      let whole = parts.whole.get(key);
      if (!whole) {
        const deployments = this.deployments(signal, targets, null);
        const value = { ...parts.head, deployments, ...parts.tail };
        whole = { value, piece: JsonPiece.text(JSON.stringify(value)) };
        if (parts.whole.size >= MAX_WHOLE) parts.whole.clear();
        parts.whole.set(key, whole);
      }
      json.push(whole.piece);
      return whole.value;
    }
    const deployments = this.deployments(signal, targets, new Map(mine.map((a) => [a.destination_key, a])));
    json.push(parts.open, JSON.stringify(deployments), parts.close);
    return { ...parts.head, deployments, ...parts.tail };
  }

  private deployments(signal: SignalRow, targets: Destination[] | undefined, byKey: Map<string, ActivationRow> | null): Json[] {
    const deployments: Json[] = [];
    if (targets?.length) {
      for (const d of targets) {
        const minutes = minutesFor(signal, d, this.options);
        if (minutes !== null) deployments.push(deployment(d, minutes, byKey?.get(destKey(d))));
      }
    } else {
      for (const p of signal.platforms) {
        const d: Destination = { type: 'platform', platform: p.platform };
        deployments.push(deployment(d, minutesFor(signal, d, this.options) ?? 0, byKey?.get(destKey(d))));
      }
    }
    return deployments;
  }
}
