import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { Json } from '../../core/task.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { Product } from '../../core/ports/inventory.ts';
import type { SalesDeps } from './deps.ts';

const DAY = 86_400_000;
/** How long a draft's indicative pricing holds, and a committed proposal's inventory hold. */
const DRAFT_DAYS = 7;
const HOLD_DAYS = 1;

export interface Allocation {
  product_id: string;
  pricing_option_id: string;
  allocation_percentage: number;
  channel: string;
  rationale: string;
}

export interface ProposalRow {
  owner: string;
  account_key: string;
  proposal_id: string;
  name: string;
  description: string;
  brief: string | null;
  allocations: Allocation[];
  status: 'draft' | 'committed';
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** Whole percentages that add up to exactly 100, in proportion to `weights`. */
export function splitPercent(weights: readonly number[]): number[] {
  if (!weights.length) return [];
  const sum = weights.reduce((s, w) => s + Math.max(0, w), 0);
  // Nothing to go by (all zero): an even split.
  const share = sum > 0 ? weights.map((w) => Math.max(0, w) / sum) : weights.map(() => 1 / weights.length);
  const raw = share.map((x) => x * 100);
  const out = raw.map(Math.floor);
  let left = 100 - out.reduce((s, x) => s + x, 0);
  const byRemainder = raw.map((r, i) => [r - Math.floor(r), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, i] of byRemainder) {
    if (left <= 0) break;
    out[i]! += 1;
    left -= 1;
  }
  return out;
}

/** The period a brief names (`Q2`) or its flight starts in, as an id suffix (`_q2`). */
function periodSuffix(brief: string | undefined, start: Date | undefined): string {
  const quarter = brief?.match(/\bQ([1-4])\b/i)?.[1] ?? (start ? String(Math.floor(start.getUTCMonth() / 3) + 1) : undefined);
  return quarter ? `_q${quarter}` : '';
}

/**
 * The plan a brief gets beside its products: the best-ranked product of each channel (up to three),
 * the budget split evenly. Its id names the strategy and the period (`balanced_reach_q2`), so a
 * buyer's later brief for the same period replaces it (as a draft again).
 */
export function planProposal(
  products: readonly Product[],
  brief: string | undefined,
  start: Date | undefined,
): Omit<ProposalRow, 'owner' | 'account_key' | 'status' | 'expires_at' | 'created_at' | 'updated_at'> | null {
  const picked: Product[] = [];
  const channels = new Set<string>();
  for (const p of products) {
    const channel = p.channels[0] ?? 'display';
    if (channels.has(channel) || !p.pricing_options.length) continue;
    channels.add(channel);
    picked.push(p);
    if (picked.length === 3) break;
  }
  if (!picked.length) return null;
  const shares = splitPercent(picked.map(() => 1));
  return {
    proposal_id: `balanced_reach${periodSuffix(brief, start)}`,
    name: 'Balanced Reach Plan',
    description: `The best match of each channel (${[...channels].join(', ')}) with an even budget split, for reach across channels.`,
    brief: brief ?? null,
    allocations: picked.map((p, i) => ({
      product_id: p.product_id,
      pricing_option_id: p.pricing_options[0]!.pricing_option_id,
      allocation_percentage: shares[i]!,
      channel: p.channels[0] ?? 'display',
      rationale: `Best-ranked ${p.channels[0] ?? 'display'} product for the brief`,
    })),
  };
}

export async function saveProposal(q: Queryable, row: ProposalRow): Promise<void> {
  await q.query(sql`
    INSERT INTO sales_proposals (owner, account_key, proposal_id, name, description, brief, allocations, status, expires_at, created_at, updated_at)
    VALUES (${row.owner}::text, ${row.account_key}::text, ${row.proposal_id}::text, ${row.name}::text, ${row.description}::text, ${row.brief}::text,
            ${row.allocations}::jsonb, ${row.status}::text, ${row.expires_at}::timestamptz, ${row.created_at}::timestamptz, ${row.updated_at}::timestamptz)
    ON CONFLICT (owner, account_key, proposal_id) DO UPDATE SET name = EXCLUDED.name, description = EXCLUDED.description, brief = EXCLUDED.brief,
      allocations = EXCLUDED.allocations, status = EXCLUDED.status, expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at`);
}

/** A new draft of `owner` under `accountKey` (account id, '' when the brief named none). */
export function draftRow(plan: NonNullable<ReturnType<typeof planProposal>>, owner: string, accountKey: string, now: Date): ProposalRow {
  return { ...plan, owner, account_key: accountKey, status: 'draft', expires_at: new Date(now.getTime() + DRAFT_DAYS * DAY), created_at: now, updated_at: now };
}

/** The caller's proposal under this account, else one made without an account. */
export async function findProposal(q: Queryable, owner: string, accountKey: string, proposalId: string): Promise<ProposalRow | undefined> {
  const rows = await q.query<ProposalRow>(sql`SELECT * FROM sales_proposals WHERE owner = ${owner}::text AND proposal_id = ${proposalId}::text
    AND account_key IN (${accountKey}::text, '') ORDER BY account_key = ${accountKey}::text DESC LIMIT 1`);
  return rows[0];
}

/** A proposal as get_products shows it (core/proposal.json). */
export function renderProposal(p: ProposalRow): Json {
  return {
    proposal_id: p.proposal_id,
    name: p.name,
    description: p.description,
    proposal_status: p.status,
    expires_at: new Date(p.expires_at).toISOString(),
    allocations: p.allocations.map((a) => ({
      product_id: a.product_id,
      pricing_option_id: a.pricing_option_id,
      allocation_percentage: a.allocation_percentage,
      rationale: a.rationale,
    })),
    ...(p.brief ? { brief_alignment: `Built for the brief: ${p.brief.slice(0, 1900)}` } : {}),
  };
}

/** Finalize: firm pricing and an inventory hold (`committed`, expires_at = the hold). */
export function finalize(p: ProposalRow, now: Date): ProposalRow {
  return { ...p, status: 'committed', expires_at: new Date(now.getTime() + HOLD_DAYS * DAY), updated_at: now };
}

/** Channel words a free-text ask may use, per channel of the channels enum. */
const CHANNEL_WORDS: [RegExp, string[]][] = [
  [/\b(ctv|connected tv)\b/i, ['ctv']],
  [/\b(video|olv|online video)\b/i, ['olv', 'ctv']],
  [/\bdisplay\b/i, ['display']],
  [/\b(audio|podcasts?)\b/i, ['streaming_audio', 'podcast', 'audio']],
  [/\b(dooh|out-of-home|ooh)\b/i, ['dooh']],
  [/\bsocial\b/i, ['social']],
];

const channelsOf = (phrase: string): string[] => {
  const found = CHANNEL_WORDS.find(([re]) => re.test(phrase));
  // "video" also covers CTV, but a proposal's CTV line is named by "ctv" first.
  return found ? found[1] : [];
};

/**
 * A proposal-scoped `ask` in free text: "drop|remove|exclude the <channel> ..." removes those
 * lines (their share goes to the rest), "<N>% ... to <channel>" gives that channel N% (the rest
 * scaled). Anything else is reported back as not understood.
 */
export function applyAsk(p: ProposalRow, ask: string, now: Date): { proposal: ProposalRow; status: 'applied' | 'partial' | 'unable'; notes: string } {
  let lines = p.allocations.map((a) => ({ ...a }));
  const done: string[] = [];
  const skipped: string[] = [];
  for (const sentence of ask
    .split(/[.;\n]+/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    const drop = sentence.match(/\b(?:drop|remove|exclude|no)\b\s+(?:the\s+)?([a-z -]+?)(?:\s+(?:product|line|lines|allocation))?(?:\s+and\b|$)/i);
    const shift = sentence.match(/(\d{1,3})\s*%[^%]*?\bto\s+([a-z -]+)/i);
    if (drop) {
      const channels = channelsOf(drop[1]!);
      const kept = lines.filter((l) => !channels.includes(l.channel));
      if (channels.length && kept.length && kept.length < lines.length) {
        // "... and redistribute that budget to <channel>": the dropped share goes there, else to every line kept.
        const to = sentence.match(/\bredistribut\w*\b.*?\bto\s+([a-z -]+)/i)?.[1];
        const heir = to ? channelsOf(to).find((c) => kept.some((l) => l.channel === c)) : undefined;
        const freed = 100 - kept.reduce((sum, l) => sum + l.allocation_percentage, 0);
        const weights = heir
          ? kept.map((l) => l.allocation_percentage + (l.channel === heir ? freed / kept.filter((k) => k.channel === heir).length : 0))
          : kept.map((l) => l.allocation_percentage);
        const shares = splitPercent(weights);
        lines = kept.map((l, i) => ({ ...l, allocation_percentage: shares[i]! }));
        done.push(`dropped ${drop[1]!.trim()}${heir ? `, its share to ${heir}` : ''}`);
        continue;
      }
    }
    if (shift) {
      const pct = Number(shift[1]);
      const channels = channelsOf(shift[2]!);
      const target = lines.filter((l) => channels.includes(l.channel));
      const rest = lines.filter((l) => !channels.includes(l.channel));
      if (pct <= 100 && target.length && (rest.length || pct === 100)) {
        const tShares = splitPercent(target.map((l) => l.allocation_percentage || 1)).map((s) => (s * pct) / 100);
        const rShares = splitPercent(rest.map((l) => l.allocation_percentage || 1)).map((s) => (s * (100 - pct)) / 100);
        const whole = splitPercent([...tShares, ...rShares]);
        lines = [...target, ...rest].map((l, i) => ({ ...l, allocation_percentage: whole[i]! }));
        done.push(`${pct}% to ${shift[2]!.trim()}`);
        continue;
      }
    }
    skipped.push(sentence);
  }
  lines = lines.filter((l) => l.allocation_percentage > 0);
  const proposal: ProposalRow = { ...p, allocations: lines, status: 'draft', updated_at: now, expires_at: new Date(now.getTime() + DRAFT_DAYS * DAY) };
  const status = !done.length ? 'unable' : skipped.length ? 'partial' : 'applied';
  const notes = [
    done.length ? `Applied: ${done.join('; ')}` : '',
    skipped.length ? `Not applied (this seller understands "drop <channel>" and "<N>% to <channel>" for the channels in the plan): ${skipped.join('; ')}` : '',
  ]
    .filter(Boolean)
    .join('. ')
    .slice(0, 2000);
  return { proposal: status === 'unable' ? p : proposal, status, notes };
}

/**
 * Packages of a buy executing a committed proposal: each line's share of `amount` (cents rounded,
 * the last line takes the remainder); auction lines bid their floor.
 */
export async function proposalPackages(
  deps: Pick<SalesDeps, 'inventory'>,
  p: ProposalRow,
  amount: number,
  now: Date,
): Promise<{ product_id: string; pricing_option_id: string; budget: number; bid_price?: number }[]> {
  if (p.status !== 'committed') {
    throw new ProtocolError('PROPOSAL_NOT_COMMITTED', `Proposal ${p.proposal_id} is a draft: finalize it first`, {
      field: 'proposal_id',
      suggestion: 'Call get_products with buying_mode refine and {scope: "proposal", proposal_id, action: "finalize"}',
    });
  }
  if (new Date(p.expires_at) <= now) {
    throw new ProtocolError('PROPOSAL_EXPIRED', `The hold on proposal ${p.proposal_id} lapsed at ${new Date(p.expires_at).toISOString()}`, {
      field: 'proposal_id',
      suggestion: 'Finalize the proposal again',
    });
  }
  const products = await deps.inventory.get(
    p.allocations.map((a) => a.product_id),
    p.owner,
  );
  let left = Math.round(amount * 100);
  return p.allocations.map((a, i) => {
    const cents = i === p.allocations.length - 1 ? left : Math.round((amount * 100 * a.allocation_percentage) / 100);
    left -= cents;
    const option = products.get(a.product_id)?.pricing_options.find((o) => o.pricing_option_id === a.pricing_option_id);
    const floor = option && option.fixed_price === undefined ? option.floor_price : undefined;
    return { product_id: a.product_id, pricing_option_id: a.pricing_option_id, budget: cents / 100, ...(floor !== undefined ? { bid_price: floor } : {}) };
  });
}
