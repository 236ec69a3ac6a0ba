import * as v from 'valibot';
import { createHash } from 'node:crypto';
import { sql } from '../../../core/sql.ts';
import { ProtocolError } from '../../../core/errors.ts';
import { defineTask, type Json } from '../../../core/task.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import { CrawlerError } from '../../../core/ports/crawler.ts';
import { canonicalJson } from '../../../lib/canonical-json.ts';
import type { BuyerDataDeps } from '../deps.ts';
import { accountRef, versionFields } from '../../../lib/adcp/request-fields.ts';
import type { SalesAccount } from '../../../core/ports/sales-accounts.ts';
import { applyMappings, checkItem, FeedFormatError, parseFeed, type CheckedItem, type FieldMapping } from './items.ts';

const CATALOG_TYPES = [
  'offering',
  'product',
  'inventory',
  'store',
  'promotion',
  'hotel',
  'flight',
  'job',
  'vehicle',
  'real_estate',
  'education',
  'destination',
  'app',
] as const;
const FEED_FORMATS = [
  'google_merchant_center',
  'facebook_catalog',
  'shopify',
  'linkedin_jobs',
  'tiktok_shop',
  'pinterest_catalog',
  'openai_product_feed',
  'custom',
] as const;
const CONTENT_ID_TYPES = {
  sku: 'sku',
  gtin: 'gtin',
  offering_id: 'offering_id',
  job_id: 'job_id',
  hotel_id: 'hotel_id',
  flight_id: 'flight_id',
  vehicle_id: 'vehicle_id',
  listing_id: 'listing_id',
  store_id: 'store_id',
  program_id: 'program_id',
  destination_id: 'destination_id',
  app_id: 'app_id',
} as const;
const ISSUES_SHOWN = 100;

const catalog = v.pipe(
  v.looseObject({
    catalog_id: v.pipe(v.string('is required to sync a catalog'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$')),
    name: v.optional(v.pipe(v.string(), v.maxLength(255))),
    type: v.picklist(CATALOG_TYPES, `must be one of ${CATALOG_TYPES.join(', ')}`),
    url: v.optional(v.pipe(v.string(), v.maxLength(2048), v.url('must be an absolute URL'), v.regex(/^https?:\/\//i, 'must be an http(s) URL'))),
    feed_format: v.optional(v.picklist(FEED_FORMATS, `must be one of ${FEED_FORMATS.join(', ')}`)),
    update_frequency: v.optional(v.picklist(['realtime', 'hourly', 'daily', 'weekly'], 'must be realtime, hourly, daily or weekly')),
    items: v.optional(
      v.pipe(
        v.array(v.record(v.string(), v.unknown(), 'must be an object'), 'must be an array of items'),
        v.minLength(1, 'must not be empty'),
        v.maxLength(50_000, 'accepts at most 50000 inline items'),
      ),
    ),
    content_id_type: v.optional(v.picklist(Object.keys(CONTENT_ID_TYPES) as [keyof typeof CONTENT_ID_TYPES], 'must be a content id type')),
    feed_field_mappings: v.optional(
      v.pipe(
        v.array(
          v.looseObject({
            feed_field: v.optional(v.pipe(v.string(), v.maxLength(256))),
            catalog_field: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/, 'must be a dotted field path'))),
            value: v.optional(v.unknown()),
            transform: v.optional(v.picklist(['date', 'divide', 'boolean', 'split'])),
            by: v.optional(
              v.pipe(
                v.number(),
                v.check((n) => n !== 0, 'must not be 0'),
              ),
            ),
            separator: v.optional(v.pipe(v.string(), v.maxLength(8))),
          }),
        ),
        v.minLength(1),
        v.maxLength(200),
      ),
    ),
  }),
  v.check((c) => (c.url === undefined) !== (c.items === undefined), 'give either url (a feed to fetch) or items (inline), not both'),
);
type CatalogInput = v.InferOutput<typeof catalog>;

export const syncCatalogsInput = v.pipe(
  v.looseObject({
    ...versionFields,
    account: accountRef,
    catalogs: v.optional(
      v.pipe(
        v.array(catalog, 'must be an array of catalogs'),
        v.minLength(1, 'must not be empty'),
        v.maxLength(50, 'accepts at most 50 catalogs'),
        v.check((list) => new Set(list.map((c) => c.catalog_id)).size === list.length, 'lists the same catalog_id twice'),
      ),
    ),
    catalog_ids: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(128))), v.minLength(1), v.maxLength(50))),
    delete_missing: v.optional(v.boolean()),
    dry_run: v.optional(v.boolean()),
    validation_mode: v.optional(v.picklist(['strict', 'lenient'], 'must be strict or lenient'), 'strict'),
  }),
  v.forward(
    v.check((i) => !i.delete_missing || !!i.catalogs, 'is required with delete_missing (omitting it would delete every catalog)'),
    ['catalogs'],
  ),
);

interface Options {
  dryRun: boolean;
  strict: boolean;
}

interface CatalogRow {
  catalog_id: string;
  platform_id: string;
  content_hash: string;
  item_count: number;
  items_approved: number;
  items_pending: number;
  items_rejected: number;
  last_synced_at: Date;
}

const error = (code: string, detail: string, message: string, recovery: 'transient' | 'correctable') => ({
  code,
  message,
  recovery,
  details: { code: detail },
});

/** Fetch a feed through the SSRF-guarded crawler: a catalog error (not a thrown one) when it cannot be read. */
async function fetchFeed(deps: BuyerDataDeps, url: string): Promise<Record<string, unknown>[] | { error: Json }> {
  if (!deps.crawler)
    return { error: error('UNSUPPORTED_FEATURE', 'FEED_FETCH_FAILED', 'This seller makes no outbound requests: send items inline', 'correctable') };
  try {
    const response = await deps.crawler.fetch(url, {
      timeoutMs: 30_000,
      maxBytes: deps.options.maxFeedBytes,
      maxRedirects: 3,
      redirectPolicy: 'any-public',
      requireHttps: !deps.options.allowHttpFeeds,
      headers: { accept: 'application/json, text/csv, text/tab-separated-values;q=0.9, */*;q=0.1' },
    });
    if (response.status !== 200) return { error: error('SERVICE_UNAVAILABLE', 'FEED_FETCH_FAILED', `The feed answered HTTP ${response.status}`, 'transient') };
    return parseFeed(response.text(), response.headers.get('content-type') ?? '');
  } catch (e) {
    if (e instanceof FeedFormatError)
      return { error: error('VALIDATION_ERROR', 'INVALID_FEED_FORMAT', `The feed cannot be read: ${e.message}`, 'correctable') };
    if (e instanceof CrawlerError) {
      const refused = e.code === 'ssrf_blocked' || e.code === 'invalid_url';
      return {
        error: error(
          refused ? 'INVALID_REQUEST' : 'SERVICE_UNAVAILABLE',
          'FEED_FETCH_FAILED',
          `The feed could not be fetched (${e.code}): ${e.message.slice(0, 200)}`,
          refused ? 'correctable' : 'transient',
        ),
      };
    }
    throw e;
  }
}

async function writeItems(tx: Queryable, accountId: string, catalogId: string, items: readonly CheckedItem[]): Promise<void> {
  await tx.query(sql`DELETE FROM sales_catalog_items WHERE account_id = ${accountId}::text AND catalog_id = ${catalogId}::text`);
  for (let i = 0; i < items.length; i += 1000) {
    const batch = items.slice(i, i + 1000).map((it) => ({ item_id: it.item_id, status: it.status, reasons: it.reasons, data: it.data }));
    await tx.query(sql`INSERT INTO sales_catalog_items (account_id, catalog_id, item_id, status, reasons, data)
      SELECT ${accountId}::text, ${catalogId}::text, x.item_id, x.status, x.reasons, x.data
      FROM jsonb_to_recordset(${batch}::jsonb) AS x(item_id text, status text, reasons jsonb, data jsonb)
      ON CONFLICT (account_id, catalog_id, item_id) DO UPDATE SET status = EXCLUDED.status, reasons = EXCLUDED.reasons, data = EXCLUDED.data`);
  }
}

const issuesOf = (items: readonly CheckedItem[]) =>
  items
    .filter((i) => i.status !== 'approved')
    .slice(0, ISSUES_SHOWN)
    .map((i) => ({ item_id: i.item_id, status: i.status, reasons: i.reasons }));

/** Fetch (when a feed), validate and store one catalog; the answer is its sync-catalogs-response entry. */
async function syncCatalog(deps: BuyerDataDeps, account: SalesAccount, c: CatalogInput, o: Options): Promise<Json> {
  const now = deps.clock.now();
  const base: Json = { catalog_id: c.catalog_id };
  const raw = c.url ? await fetchFeed(deps, c.url) : c.items!;
  if (!Array.isArray(raw)) return { ...base, action: 'failed', errors: [raw.error] };
  if (raw.length > deps.options.maxCatalogItems) {
    return {
      ...base,
      action: 'failed',
      errors: [
        error(
          'VALIDATION_ERROR',
          'CATALOG_LIMIT_EXCEEDED',
          `The feed has ${raw.length} items; this seller takes at most ${deps.options.maxCatalogItems}`,
          'correctable',
        ),
      ],
    };
  }
  const idField = c.content_id_type ? CONTENT_ID_TYPES[c.content_id_type] : undefined;
  const items = raw.map((r, i) => checkItem(applyMappings(r, c.feed_field_mappings as FieldMapping[] | undefined), c.type, idField, i));
  const dupes = items.length - new Set(items.map((i) => i.item_id)).size;
  const rejected = items.filter((i) => i.status === 'rejected').length;
  const counts = { item_count: items.length, items_approved: items.length - rejected, items_pending: 0, items_rejected: rejected };
  const issues = issuesOf(items);
  if (dupes)
    return {
      ...base,
      action: 'failed',
      item_issues: issues,
      errors: [error('VALIDATION_ERROR', 'ITEM_VALIDATION_FAILED', `${dupes} item id(s) appear more than once`, 'correctable')],
    };
  if (o.strict && rejected) {
    return {
      ...base,
      action: 'failed',
      item_issues: issues,
      errors: [
        error('VALIDATION_ERROR', 'ITEM_VALIDATION_FAILED', `${rejected} of ${items.length} items failed validation (validation_mode strict)`, 'correctable'),
      ],
    };
  }
  const { items: _inline, ...definition } = c;
  const hash = createHash('sha256')
    .update(canonicalJson({ definition, items: items.map((i) => [i.item_id, i.status, i.data]) }))
    .digest('base64url');
  const entry = (action: string, platformId: string, at: Date): Json => {
    const out: Json = { ...base, action, platform_id: platformId, ...counts, last_synced_at: at.toISOString() };
    if (issues.length) out.item_issues = issues;
    const warned = items.filter((i) => i.status === 'warning').length;
    if (warned) out.warnings = [`${warned} item(s) serve with warnings`];
    return out;
  };
  return deps.db.transaction(async (tx) => {
    const [before] = await tx.query<CatalogRow>(
      sql`SELECT * FROM sales_catalogs WHERE account_id = ${account.account_id}::text AND catalog_id = ${c.catalog_id}::text FOR UPDATE`,
    );
    const platformId = before?.platform_id ?? `cat_${deps.ids.uuid7().replace(/-/g, '')}`;
    if (before && before.content_hash === hash) return entry('unchanged', platformId, new Date(before.last_synced_at));
    const action = before ? 'updated' : 'created';
    if (o.dryRun) return entry(action, platformId, now);
    await tx.query(sql`INSERT INTO sales_catalogs (account_id, catalog_id, owner, platform_id, type, name, url, feed_format, update_frequency, content_hash,
        item_count, items_approved, items_pending, items_rejected, last_synced_at, created_at)
      VALUES (${account.account_id}::text, ${c.catalog_id}::text, ${account.owner}::text, ${platformId}::text, ${c.type}::text, ${c.name ?? null}::text, ${c.url ?? null}::text,
        ${c.feed_format ?? null}::text, ${c.update_frequency ?? null}::text, ${hash}::text, ${counts.item_count}::int, ${counts.items_approved}::int, 0, ${counts.items_rejected}::int,
        ${now}::timestamptz, ${now}::timestamptz)
      ON CONFLICT (account_id, catalog_id) DO UPDATE SET type = EXCLUDED.type, name = EXCLUDED.name, url = EXCLUDED.url, feed_format = EXCLUDED.feed_format,
        update_frequency = EXCLUDED.update_frequency, content_hash = EXCLUDED.content_hash, item_count = EXCLUDED.item_count, items_approved = EXCLUDED.items_approved,
        items_pending = 0, items_rejected = EXCLUDED.items_rejected, last_synced_at = EXCLUDED.last_synced_at`);
    await writeItems(tx, account.account_id, c.catalog_id, items);
    return entry(action, platformId, now);
  });
}

/** Stored catalogs as a discovery answer (no catalogs sent). */
async function listCatalogs(deps: BuyerDataDeps, accountId: string, ids: readonly string[] | undefined): Promise<Json[]> {
  const rows = await deps.db.query<CatalogRow>(sql`SELECT * FROM sales_catalogs WHERE account_id = ${accountId}::text
    ${ids ? sql`AND catalog_id = ANY(${[...ids]}::text[])` : sql.empty} ORDER BY created_at, catalog_id`);
  return rows.map((r) => ({
    catalog_id: r.catalog_id,
    action: 'unchanged',
    platform_id: r.platform_id,
    item_count: Number(r.item_count),
    items_approved: Number(r.items_approved),
    items_pending: Number(r.items_pending),
    items_rejected: Number(r.items_rejected),
    last_synced_at: new Date(r.last_synced_at).toISOString(),
  }));
}

async function deleteMissing(deps: BuyerDataDeps, accountId: string, keep: readonly string[], dryRun: boolean): Promise<Json[]> {
  const rows = await deps.db.query<{ catalog_id: string; platform_id: string }>(sql`SELECT catalog_id, platform_id FROM sales_catalogs
    WHERE account_id = ${accountId}::text AND NOT (catalog_id = ANY(${[...keep]}::text[])) ORDER BY created_at, catalog_id`);
  if (rows.length && !dryRun) {
    await deps.db.query(sql`DELETE FROM sales_catalogs WHERE account_id = ${accountId}::text AND catalog_id = ANY(${rows.map((r) => r.catalog_id)}::text[])`);
  }
  return rows.map((r) => ({ catalog_id: r.catalog_id, platform_id: r.platform_id, action: 'deleted' }));
}

export function syncCatalogsTask(deps: BuyerDataDeps) {
  const threshold = deps.options.catalogSyncItems;
  const body = (account: SalesAccount, catalogs: Json[], dryRun: boolean): Json => ({
    catalogs,
    ...(dryRun ? { dry_run: true } : {}),
    ...(deps.options.sandbox || account.sandbox ? { sandbox: true } : {}),
  });
  return defineTask({
    name: 'sync_catalogs',
    description: `Sync product (and other) catalogs of an account: inline items, or a feed URL fetched by the seller (JSON, CSV or TSV; feed_field_mappings normalize it). Items are validated one by one (item_issues); validation_mode strict fails a catalog with any rejected item, lenient keeps the valid ones. Feeds and more than ${threshold} inline items run asynchronously with progress per catalog. Without catalogs, lists the account's catalogs.`,
    protocol: 'media_buy',
    requestSchema: 'media-buy/sync-catalogs-request.json',
    mutating: true,
    input: syncCatalogsInput,
    async handler({ input, principal, task }) {
      const account = await deps.accounts.resolve(deps.db, principal.orgId, input.account);
      const dryRun = input.dry_run ?? false;
      if (!input.catalogs) return body(account, await listCatalogs(deps, account.account_id, input.catalog_ids), dryRun);
      input.catalogs.forEach((c, i) => {
        if (c.url && !deps.crawler)
          throw new ProtocolError('UNSUPPORTED_FEATURE', `catalogs[${i}].url: this seller fetches no feeds; send items inline`, {
            field: `catalogs[${i}].url`,
          });
        if (c.url && !deps.options.allowHttpFeeds && !c.url.toLowerCase().startsWith('https://')) {
          throw new ProtocolError('INVALID_REQUEST', `catalogs[${i}].url: must be an https URL`, { field: `catalogs[${i}].url` });
        }
      });
      const options: Options = { dryRun, strict: input.validation_mode === 'strict' };
      const inline = input.catalogs.reduce((s, c) => s + (c.items?.length ?? 0), 0);
      if (input.catalogs.some((c) => c.url) || inline > threshold) {
        return task.defer({
          status: 'submitted',
          message: `Syncing ${input.catalogs.length} catalog(s); progress per catalog`,
          state: { account_id: account.account_id, catalogs: input.catalogs, options, delete_missing: input.delete_missing ?? false, done: [] },
          progress: { percentage: 0, current_step: 'queued', step_number: 1, total_steps: input.catalogs.length },
        });
      }
      const results: Json[] = [];
      for (const c of input.catalogs) results.push(await syncCatalog(deps, account, c, options));
      if (input.delete_missing)
        results.push(
          ...(await deleteMissing(
            deps,
            account.account_id,
            input.catalogs.map((c) => c.catalog_id),
            dryRun,
          )),
        );
      return body(account, results, dryRun);
    },
    // One catalog per step, so a large sync reports progress and a crash repeats one catalog at most.
    async resume({ state, clock, reschedule }) {
      const catalogs = state.catalogs as CatalogInput[];
      const done = state.done as Json[];
      const options = state.options as Options;
      const [account] = await deps.accounts.byIds(deps.db, [state.account_id as string]);
      if (!account) throw new ProtocolError('ACCOUNT_NOT_FOUND', 'The account was closed during the sync', { status: 404, field: 'account' });
      const c = catalogs[done.length]!;
      const result = await syncCatalog(deps, account, c, options);
      const next = [...done, result];
      if (next.length < catalogs.length) {
        return reschedule({
          state: { ...state, done: next },
          runAt: clock.now(),
          status: 'working',
          message: `Catalog ${c.catalog_id}: ${result.action}`,
          progress: {
            percentage: Math.round((next.length / catalogs.length) * 100),
            current_step: `synced ${c.catalog_id} (${result.item_count ?? 0} items)`,
            step_number: next.length + 1,
            total_steps: catalogs.length,
          },
        });
      }
      if (state.delete_missing)
        next.push(
          ...(await deleteMissing(
            deps,
            account.account_id,
            catalogs.map((x) => x.catalog_id),
            options.dryRun,
          )),
        );
      return body(account, next, options.dryRun);
    },
  });
}
