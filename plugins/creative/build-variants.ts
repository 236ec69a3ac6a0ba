import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { ModelUsage } from '../../core/ports/creative-generator.ts';
import type { CreativeStorePort } from '../../core/ports/creative-store.ts';
import { accountRef, type AccountRef } from '../../lib/adcp/request-fields.ts';

/**
 * The leaves of generative builds (AdCP build_variant): what a buyer reports usage against once it
 * uses a generated creative, under the id the build's answer carried (creative_id = build_variant_id
 * on the canonical promotion path, or build_variant_id next to the creative_id it was promoted to).
 */

/** A leaf's id: the same build and position always get the same id, so a retried step rewrites its row. */
export function buildVariantId(buildId: string, position: number): string {
  return `bv_${createHash('sha256').update(`${buildId}\n${position}`).digest('base64url').slice(0, 32)}`;
}

/** `{account_id}` or `{brand: {domain}, operator, sandbox?}` out of a request's account, else null (a bare brand names no account). */
export function accountOf(ref: unknown): AccountRef | null {
  if (!ref || typeof ref !== 'object') return null;
  const r = ref as Record<string, any>;
  const picked =
    r.account_id !== undefined
      ? { account_id: r.account_id }
      : { brand: { domain: r.brand?.domain }, operator: r.operator, ...(r.sandbox !== undefined ? { sandbox: r.sandbox } : {}) };
  const parsed = v.safeParse(accountRef, picked);
  return parsed.success ? parsed.output : null;
}

/** A reference's key: equal keys name the same account (`sandbox` false and absent alike). */
export const accountKey = (a: AccountRef): string =>
  'account_id' in a ? `id:${a.account_id}` : `brand:${a.brand.domain}|${a.operator}|${a.sandbox === true ? 'sandbox' : 'live'}`;

export interface BuildVariant {
  id: string;
  owner: string;
  account: AccountRef | null;
  build_id: string;
  position: number;
  format_id: string;
  usage?: ModelUsage;
}

/** Record a build's leaves (one statement: all of them or none). */
export async function recordVariants(db: Queryable, leaves: readonly BuildVariant[], at: Date): Promise<void> {
  if (!leaves.length) return;
  const rows = leaves.map((l) => ({
    id: l.id,
    owner: l.owner,
    account: l.account,
    build_id: l.build_id,
    position: l.position,
    format_id: l.format_id,
    model: l.usage?.model ?? null,
    input_tokens: l.usage?.inputTokens ?? null,
    output_tokens: l.usage?.outputTokens ?? null,
  }));
  await db.query(sql`
    INSERT INTO creative_build_variants (id, owner, account, build_id, position, format_id, model, input_tokens, output_tokens, created_at)
    SELECT r.id, r.owner, r.account, r.build_id, r.position, r.format_id, r.model, r.input_tokens, r.output_tokens, ${at}::timestamptz
    FROM jsonb_to_recordset(${rows}::jsonb) AS r(id text, owner text, account jsonb, build_id text, position integer, format_id text,
      model text, input_tokens integer, output_tokens integer)
    ON CONFLICT (id) DO UPDATE SET model = EXCLUDED.model, input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens,
      created_at = EXCLUDED.created_at`);
}

/** `owner`'s leaves of these ids (another organization's or unknown ids are absent). */
export async function findVariants(db: Queryable, owner: string, ids: readonly string[]): Promise<Map<string, { account: AccountRef | null }>> {
  if (!ids.length) return new Map();
  const rows = await db.query<{ id: string; account: AccountRef | null }>(
    sql`SELECT id, account FROM creative_build_variants WHERE owner = ${owner}::text AND id = ANY(${[...ids]}::text[])`,
  );
  return new Map(rows.map((r) => [r.id, { account: r.account }]));
}

/**
 * The account a usage record of a leaf goes to, or null when the record names another account than
 * the build did. A leaf built under no account is reported under any of the caller's. With a creative
 * library in the deployment, references are compared by the account they resolve to ({account_id}
 * and {brand, operator} of one account agree); without one, by their keys.
 */
export async function leafAccount(
  library: CreativeStorePort | undefined,
  owner: string,
  leaf: AccountRef | null,
  record: AccountRef,
  field: string,
): Promise<string | null> {
  // Building needs no account at this agent, so neither does reporting: an unknown one stands as its key.
  const resolve = async (ref: AccountRef) => {
    try {
      return library ? await library.accountId(owner, ref, field) : null;
    } catch (error) {
      if (error instanceof ProtocolError && error.code === 'ACCOUNT_NOT_FOUND') return null;
      throw error;
    }
  };
  const reported = (await resolve(record)) ?? accountKey(record);
  if (!leaf || accountKey(leaf) === accountKey(record)) return reported;
  const built = await resolve(leaf);
  return built !== null && built === reported ? reported : null;
}
