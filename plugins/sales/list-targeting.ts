import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { Product } from '../../core/ports/inventory.ts';
import type { InventoryListKind } from '../../core/ports/list-reader.ts';
import { connectAgent, describeFailure } from '../../lib/agent-clients/session.ts';
import { McpToolError } from '../../lib/agent-clients/mcp.ts';
import type { SalesDeps } from './deps.ts';
import { publisherDomains } from '../../lib/adcp/publisher-domains.ts';

/** A list reference of targeting or get_products (core/property-list-ref.json, collection-list-ref.json). */
export interface ListRef {
  agent_url: string;
  list_id: string;
  auth_token?: string;
}

const LIMITS = { timeoutMs: 10_000, maxBytes: 8 * 1024 * 1024 };
/** Entries fetched of one list (one get_*_list page). */
const MAX_ENTRIES = 10_000;
/** How long a fetched list is used when its agent names no cache_valid_until. */
const DEFAULT_TTL_MS = 3600_000;
/** Identifier types whose value is a publisher's domain. */
const DOMAIN_TYPES = new Set(['domain', 'subdomain', 'publisher_domain']);

const notFound = (kind: InventoryListKind, ref: ListRef, field: string, why: string) =>
  new ProtocolError('REFERENCE_NOT_FOUND', `${field}: the ${kind} list ${ref.list_id} at ${ref.agent_url} ${why}`, {
    status: 404,
    field,
    suggestion: `Name a ${kind} list the governance agent serves, with the auth_token it issued`,
  });

/** The entries a remote governance agent answers for a list (get_property_list / get_collection_list over MCP). */
async function fetchRemote(
  deps: SalesDeps,
  kind: InventoryListKind,
  ref: ListRef,
  field: string,
): Promise<{ items: Record<string, unknown>[]; validUntil: Date }> {
  if (!deps.crawler) throw notFound(kind, ref, field, 'is not one this seller can fetch (no outbound requests are configured)');
  let result: Record<string, unknown>;
  try {
    const session = await connectAgent(deps.crawler, ref.agent_url, 'mcp', LIMITS);
    result = (await session.call(`get_${kind}_list`, {
      list_id: ref.list_id,
      ...(ref.auth_token ? { auth_token: ref.auth_token } : {}),
      pagination: { max_results: MAX_ENTRIES },
    })) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof McpToolError)
      throw notFound(kind, ref, field, `was refused by its agent (${String(error.body?.code ?? error.message).slice(0, 100)})`);
    throw new ProtocolError(
      'SERVICE_UNAVAILABLE',
      `${field}: the governance agent ${ref.agent_url} could not be reached (${describeFailure(error).slice(0, 200)}); retry later`,
      {
        status: 503,
        recovery: 'transient',
        field,
      },
    );
  }
  const items = result?.[kind === 'property' ? 'identifiers' : 'collections'];
  if (!Array.isArray(items)) throw notFound(kind, ref, field, 'was answered without its entries');
  const until = typeof result.cache_valid_until === 'string' ? new Date(result.cache_valid_until) : null;
  const now = deps.clock.now();
  const validUntil = until && !Number.isNaN(until.getTime()) && until > now ? until : new Date(now.getTime() + DEFAULT_TTL_MS);
  return { items: items.filter((x): x is Record<string, unknown> => !!x && typeof x === 'object').slice(0, MAX_ENTRIES), validUntil };
}

/**
 * A list's entries: a list of this deployment's governance agent is read in process (the owner's
 * or one whose auth_token the reference carries); others come from the seller's cache, fetched from
 * the agent the reference names when absent or stale. Sandbox fixtures are pinned in the cache.
 */
export async function listEntries(deps: SalesDeps, owner: string, kind: InventoryListKind, ref: ListRef, field: string): Promise<Record<string, unknown>[]> {
  const now = deps.clock.now();
  const [cached] = await deps.db.query<{ items: Record<string, unknown>[] }>(sql`
    SELECT items FROM sales_list_cache WHERE agent_url = ${ref.agent_url}::text AND list_id = ${ref.list_id}::text AND kind = ${kind}::text
      AND (valid_until IS NULL OR valid_until > ${now}::timestamptz)`);
  if (cached) return cached.items;
  if (deps.lists) {
    const local = await deps.lists.read(kind, ref.list_id, { orgId: owner, ...(ref.auth_token ? { token: ref.auth_token } : {}) });
    if (local) return local.items;
  }
  const fetched = await fetchRemote(deps, kind, ref, field);
  await deps.db.query(sql`
    INSERT INTO sales_list_cache (agent_url, list_id, kind, items, fetched_at, valid_until)
    VALUES (${ref.agent_url}::text, ${ref.list_id}::text, ${kind}::text, ${fetched.items}::jsonb, ${now}::timestamptz, ${fetched.validUntil}::timestamptz)
    ON CONFLICT (agent_url, list_id, kind) DO UPDATE SET items = EXCLUDED.items, fetched_at = EXCLUDED.fetched_at, valid_until = EXCLUDED.valid_until
      WHERE sales_list_cache.valid_until IS NOT NULL`);
  return fetched.items;
}

/** The publisher domains a property list's identifiers name (lowercase). */
export function listDomains(items: readonly Record<string, unknown>[]): string[] {
  const out = new Set<string>();
  for (const i of items) if (typeof i.type === 'string' && DOMAIN_TYPES.has(i.type) && typeof i.value === 'string') out.add(i.value.toLowerCase());
  return [...out];
}

/** What a package's targeting leaves of its product's inventory. */
export interface ListMatch {
  /** Share (0..1) of the product's publishers the property list keeps; 1 without one. The ad server delivers in proportion. */
  share: number;
  /** Said to the buyer when the lists leave nothing: the package is booked but will not deliver. */
  note?: string;
}

/**
 * The list references of one package's targeting, resolved against its product before anything is
 * written (an unknown or unreachable list is refused). A property list keeps the product's
 * publishers it names: the package delivers that share of the product's inventory, nothing when it
 * names none (the buy is taken with a note saying so, as the storyboards' buyers expect).
 * Collection lists are resolved and kept; products carry no collection data to narrow them by.
 */
export async function matchPackageLists(
  deps: SalesDeps,
  owner: string,
  overlay: { property_list?: ListRef; collection_list?: ListRef; collection_list_exclude?: ListRef } | undefined,
  product: Product,
  field: string,
): Promise<ListMatch> {
  if (!overlay) return { share: 1 };
  for (const key of ['collection_list', 'collection_list_exclude'] as const) {
    const ref = overlay[key];
    if (ref) await listEntries(deps, owner, 'collection', ref, `${field}.${key}`);
  }
  const ref = overlay.property_list;
  if (!ref) return { share: 1 };
  const domains = new Set(listDomains(await listEntries(deps, owner, 'property', ref, `${field}.property_list`)));
  const publishers = publisherDomains(product);
  const share = publishers.length ? publishers.filter((d) => domains.has(d)).length / publishers.length : 0;
  if (share > 0) return { share };
  return {
    share: 0,
    note: `${field}.property_list: the property list ${ref.list_id} names none of the publishers product ${product.product_id} sells (${publishers.join(', ')}): this package will deliver nothing`,
  };
}

/** A sandbox deployment's pinned lists (JSON: `[{agent_url, list_id, kind, items}]`). */
export const sandboxLists = v.array(
  v.object({
    agent_url: v.pipe(v.string(), v.url()),
    list_id: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
    kind: v.picklist(['property', 'collection']),
    items: v.array(v.record(v.string(), v.unknown())),
  }),
);

/** Pin the sandbox lists in the cache (idempotent). */
export async function pinSandboxLists(deps: SalesDeps, lists: v.InferOutput<typeof sandboxLists>): Promise<void> {
  const now = deps.clock.now();
  for (const l of lists) {
    await deps.db.query(sql`
      INSERT INTO sales_list_cache (agent_url, list_id, kind, items, fetched_at, valid_until)
      VALUES (${l.agent_url}::text, ${l.list_id}::text, ${l.kind}::text, ${l.items}::jsonb, ${now}::timestamptz, NULL)
      ON CONFLICT (agent_url, list_id, kind) DO UPDATE SET items = EXCLUDED.items, valid_until = NULL`);
  }
}
