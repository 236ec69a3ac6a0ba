import { sql, type SqlFragment } from '../../../core/sql.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import type { FormatRef, PricingModel, ReportingFrequency } from '../../../core/ports/inventory.ts';
import type { Json } from '../../../core/task.ts';

export type BuyStatus = 'pending_review' | 'pending_creatives' | 'pending_start' | 'active' | 'paused' | 'completed' | 'canceled' | 'rejected';
export const TERMINAL: ReadonlySet<BuyStatus> = new Set(['completed', 'canceled', 'rejected']);

/** The decision a buy was created under, stored with it and shown in its answers (`governance`). */
export interface BuyGovernance {
  plan_id: string;
  check_id: string;
  status: 'approved' | 'conditions';
  explanation: string;
  conditions: Json[];
  expires_at?: string;
  governance_context: string;
}

/** A stored push channel: credentials sealed; `registered_by` is the task whose call registered it. */
export interface ChannelConfig {
  url: string;
  operation_id?: string;
  token?: string;
  authentication?: { schemes: string[]; credentials: string };
  registered_by: 'create_media_buy' | 'update_media_buy';
}
export interface ReportingConfig extends ChannelConfig {
  reporting_frequency: ReportingFrequency;
  requested_metrics?: string[];
}

export interface BuyRow {
  media_buy_id: string;
  owner: string;
  account_id: string;
  brand_domain: string;
  status: BuyStatus;
  revision: number;
  currency: string;
  total_budget: number;
  start_time: Date;
  end_time: Date;
  asap: boolean;
  sandbox: boolean;
  po_number: string | null;
  confirmed_at: Date | null;
  started_at: Date | null;
  ended_at: Date | null;
  rejection_reason: string | null;
  canceled_by: string | null;
  cancellation_reason: string | null;
  push_config: ChannelConfig | null;
  reporting_webhook: ReportingConfig | null;
  context: Json | null;
  governance: BuyGovernance | null;
  report_cursor: Date | null;
  report_seq: number;
  delayed_window: Date | null;
  final_sent_at: Date | null;
  impairments_due_at: Date | null;
  due_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** What get_media_buys shows of a buy (listing.ts); `pushes`: it has a push or reporting channel. */
export type ListedBuyRow = Pick<
  BuyRow,
  | 'media_buy_id'
  | 'account_id'
  | 'status'
  | 'revision'
  | 'currency'
  | 'total_budget'
  | 'start_time'
  | 'end_time'
  | 'confirmed_at'
  | 'ended_at'
  | 'rejection_reason'
  | 'canceled_by'
  | 'cancellation_reason'
  | 'governance'
  | 'created_at'
  | 'updated_at'
> & { pushes: boolean };
/** What get_media_buy_delivery reads of a buy (listing.ts). */
export type DeliveredBuyRow = Pick<BuyRow, 'media_buy_id' | 'status' | 'currency' | 'start_time' | 'end_time' | 'started_at' | 'ended_at' | 'created_at'>;
export interface PackageRow {
  package_id: string;
  media_buy_id: string;
  product_id: string;
  pricing_option_id: string;
  pricing_model: PricingModel;
  rate: number;
  currency: string;
  budget: number;
  bid_price: number | null;
  paused: boolean;
  canceled: boolean;
  format_ids: FormatRef[];
  position: number;
  created_at: Date;
  /** The list references of the buyer's targeting overlay (schemas.ts keptOverlay), null when none. */
  targeting_overlay: Record<string, { agent_url: string; list_id: string }> | null;
  /** Creatives assigned to the package. */
  creatives: number;
}

/** What get_media_buys shows of a package (listing.ts). */
export type ListedPackage = Pick<
  PackageRow,
  'package_id' | 'product_id' | 'budget' | 'currency' | 'bid_price' | 'paused' | 'canceled' | 'format_ids' | 'targeting_overlay' | 'creatives'
>;

const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));

function toBuy(r: any): BuyRow {
  return {
    ...r,
    revision: Number(r.revision),
    total_budget: Number(r.total_budget),
    report_seq: Number(r.report_seq),
    start_time: new Date(r.start_time),
    end_time: new Date(r.end_time),
    created_at: new Date(r.created_at),
    updated_at: new Date(r.updated_at),
    confirmed_at: date(r.confirmed_at),
    started_at: date(r.started_at),
    ended_at: date(r.ended_at),
    report_cursor: date(r.report_cursor),
    delayed_window: date(r.delayed_window),
    final_sent_at: date(r.final_sent_at),
    impairments_due_at: date(r.impairments_due_at),
    due_at: date(r.due_at),
  };
}

export function toPackage(r: any): PackageRow {
  return {
    ...r,
    rate: Number(r.rate),
    budget: Number(r.budget),
    bid_price: r.bid_price === null ? null : Number(r.bid_price),
    position: Number(r.position),
    created_at: new Date(r.created_at),
    creatives: Number(r.creatives ?? 0),
  };
}

export async function loadBuy(q: Queryable, mediaBuyId: string, owner: string | null, lock = false): Promise<BuyRow | null> {
  const rows = await q.query(sql`SELECT * FROM sales_media_buys WHERE media_buy_id = ${mediaBuyId}::text
    ${owner === null ? sql.empty : sql`AND owner = ${owner}::text`} ${lock ? sql`FOR NO KEY UPDATE` : sql.empty}`);
  return rows[0] ? toBuy(rows[0]) : null;
}

export async function queryBuys(q: Queryable, where: SqlFragment, tail: SqlFragment = sql.empty): Promise<BuyRow[]> {
  return (await q.query(sql`SELECT * FROM sales_media_buys WHERE ${where} ${tail}`)).map(toBuy);
}

/** Packages of the buys, in creation order, each with its count of assigned creatives. */
export async function loadPackages(q: Queryable, mediaBuyIds: readonly string[]): Promise<Map<string, PackageRow[]>> {
  const out = new Map<string, PackageRow[]>(mediaBuyIds.map((id) => [id, []]));
  if (mediaBuyIds.length === 0) return out;
  const rows = await q.query(sql`
    SELECT p.*, (SELECT count(*)::int FROM sales_creative_assignments a WHERE a.package_id = p.package_id) AS creatives
    FROM sales_packages p WHERE p.media_buy_id = ANY(${[...mediaBuyIds]}::text[]) ORDER BY p.media_buy_id, p.position`);
  for (const r of rows) out.get((r as any).media_buy_id)?.push(toPackage(r));
  return out;
}

/** What a new buy is given; the rest starts empty (no start, end, report or cancellation yet). */
export type NewBuy = Pick<
  BuyRow,
  'media_buy_id' | 'owner' | 'account_id' | 'brand_domain' | 'status' | 'currency' | 'total_budget' | 'start_time' | 'end_time' | 'asap' | 'sandbox'
> &
  Partial<Pick<BuyRow, 'po_number' | 'push_config' | 'reporting_webhook' | 'context' | 'governance'>>;

/** A buy at revision 1, confirmed `now`. */
export function newBuy(b: NewBuy, now: Date): BuyRow {
  return {
    po_number: null,
    push_config: null,
    reporting_webhook: null,
    context: null,
    governance: null,
    ...b,
    revision: 1,
    confirmed_at: now,
    started_at: null,
    ended_at: null,
    rejection_reason: null,
    canceled_by: null,
    cancellation_reason: null,
    report_cursor: null,
    report_seq: 0,
    delayed_window: null,
    final_sent_at: null,
    impairments_due_at: null,
    due_at: null,
    created_at: now,
    updated_at: now,
  };
}

export async function insertBuy(tx: Queryable, b: BuyRow): Promise<void> {
  await tx.query(sql`
    INSERT INTO sales_media_buys (media_buy_id, owner, account_id, brand_domain, status, revision, currency, total_budget, start_time, end_time,
      asap, sandbox, po_number, confirmed_at, push_config, reporting_webhook, context, governance, due_at, created_at, updated_at)
    VALUES (${b.media_buy_id}::text, ${b.owner}::text, ${b.account_id}::text, ${b.brand_domain}::text, ${b.status}::text, ${b.revision}::int,
      ${b.currency}::text, ${b.total_budget}::numeric, ${b.start_time}::timestamptz, ${b.end_time}::timestamptz, ${b.asap}::boolean,
      ${b.sandbox}::boolean, ${b.po_number}::text, ${b.confirmed_at}::timestamptz, ${b.push_config}::jsonb, ${b.reporting_webhook}::jsonb,
      ${b.context}::jsonb, ${b.governance}::jsonb, ${b.due_at}::timestamptz, ${b.created_at}::timestamptz, ${b.updated_at}::timestamptz)`);
}

export async function insertPackage(tx: Queryable, p: Omit<PackageRow, 'creatives'>): Promise<void> {
  await tx.query(sql`
    INSERT INTO sales_packages (package_id, media_buy_id, product_id, pricing_option_id, pricing_model, rate, currency, budget, bid_price,
      paused, canceled, format_ids, position, created_at, targeting_overlay)
    VALUES (${p.package_id}::text, ${p.media_buy_id}::text, ${p.product_id}::text, ${p.pricing_option_id}::text, ${p.pricing_model}::text,
      ${p.rate}::numeric, ${p.currency}::text, ${p.budget}::numeric, ${p.bid_price}::numeric, ${p.paused}::boolean, ${p.canceled}::boolean,
      ${p.format_ids}::jsonb, ${p.position}::int, ${p.created_at}::timestamptz, ${p.targeting_overlay ?? null}::jsonb)`);
}

const CASTS: Partial<Record<keyof BuyRow, string>> = {
  status: 'text',
  revision: 'int',
  total_budget: 'numeric',
  start_time: 'timestamptz',
  end_time: 'timestamptz',
  confirmed_at: 'timestamptz',
  started_at: 'timestamptz',
  ended_at: 'timestamptz',
  rejection_reason: 'text',
  canceled_by: 'text',
  cancellation_reason: 'text',
  push_config: 'jsonb',
  reporting_webhook: 'jsonb',
  report_cursor: 'timestamptz',
  report_seq: 'int',
  delayed_window: 'timestamptz',
  final_sent_at: 'timestamptz',
  impairments_due_at: 'timestamptz',
  due_at: 'timestamptz',
  updated_at: 'timestamptz',
};

/** Write the given columns of a buy (a locked row, in the caller's transaction). */
export async function updateBuy(tx: Queryable, mediaBuyId: string, fields: Partial<BuyRow>): Promise<void> {
  const sets = Object.entries(fields).map(([k, value]) => {
    const cast = CASTS[k as keyof BuyRow];
    if (!cast) throw new Error(`sales_media_buys.${k} is not updatable`);
    return sql`${sql.raw(k)} = ${value ?? null}::${sql.raw(cast)}`;
  });
  if (sets.length) await tx.query(sql`UPDATE sales_media_buys SET ${sql.join(sets)} WHERE media_buy_id = ${mediaBuyId}::text`);
}

/** What update_media_buy writes of a buy: one statement of fixed text (no fragment per column, as updateBuy builds). */
export type BuyChanges = Pick<
  BuyRow,
  | 'status'
  | 'revision'
  | 'total_budget'
  | 'start_time'
  | 'end_time'
  | 'ended_at'
  | 'canceled_by'
  | 'cancellation_reason'
  | 'push_config'
  | 'reporting_webhook'
  | 'impairments_due_at'
  | 'updated_at'
  | 'due_at'
>;

export async function updateBuyChanges(tx: Queryable, mediaBuyId: string, c: BuyChanges): Promise<void> {
  await tx.query(sql`UPDATE sales_media_buys SET status = ${c.status}::text, revision = ${c.revision}::int, total_budget = ${c.total_budget}::numeric,
    start_time = ${c.start_time}::timestamptz, end_time = ${c.end_time}::timestamptz, ended_at = ${c.ended_at}::timestamptz,
    canceled_by = ${c.canceled_by}::text, cancellation_reason = ${c.cancellation_reason}::text, push_config = ${c.push_config}::jsonb,
    reporting_webhook = ${c.reporting_webhook}::jsonb, impairments_due_at = ${c.impairments_due_at}::timestamptz, updated_at = ${c.updated_at}::timestamptz,
    due_at = ${c.due_at}::timestamptz WHERE media_buy_id = ${mediaBuyId}::text`);
}

export async function addHistory(
  tx: Queryable,
  e: { mediaBuyId: string; revision: number; at: Date; actor: string; action: string; summary?: string; packageId?: string },
): Promise<void> {
  await tx.query(sql`INSERT INTO sales_buy_history (media_buy_id, revision, at, actor, action, summary, package_id)
    VALUES (${e.mediaBuyId}::text, ${e.revision}::int, ${e.at}::timestamptz, ${e.actor}::text, ${e.action}::text, ${e.summary ?? null}::text, ${e.packageId ?? null}::text)`);
}

export async function loadHistory(q: Queryable, mediaBuyIds: readonly string[], limit: number): Promise<Map<string, Json[]>> {
  const out = new Map<string, Json[]>(mediaBuyIds.map((id) => [id, []]));
  if (!mediaBuyIds.length || limit <= 0) return out;
  const rows = await q.query<{
    media_buy_id: string;
    revision: number;
    at: Date;
    actor: string;
    action: string;
    summary: string | null;
    package_id: string | null;
  }>(sql`
    SELECT media_buy_id, revision, at, actor, action, summary, package_id FROM (
      SELECT h.*, row_number() OVER (PARTITION BY media_buy_id ORDER BY id DESC) AS rn FROM sales_buy_history h
      WHERE media_buy_id = ANY(${[...mediaBuyIds]}::text[])) x WHERE rn <= ${limit}::int ORDER BY media_buy_id, id DESC`);
  for (const r of rows) {
    const entry: Json = { revision: Number(r.revision), timestamp: new Date(r.at).toISOString(), actor: r.actor, action: r.action };
    if (r.summary) entry.summary = r.summary;
    if (r.package_id) entry.package_id = r.package_id;
    out.get(r.media_buy_id)!.push(entry);
  }
  return out;
}
