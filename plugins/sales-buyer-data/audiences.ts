import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { BuyerDataDeps } from './deps.ts';
import { accountRef, versionFields } from '../../lib/adcp/request-fields.ts';
import { findPlaintextPii, SHA256_HEX } from './pii.ts';

const UID_TYPES = [
  'rampid',
  'rampid_derived',
  'id5',
  'uid2',
  'euid',
  'pairid',
  'maid',
  'hashed_email',
  'publisher_first_party',
  'world_id_nullifier',
  'other',
] as const;
/** match-id-type.json: the id types a match breakdown names. */
const MATCH_TYPE: Record<string, string> = {
  rampid: 'rampid',
  id5: 'id5',
  uid2: 'uid2',
  euid: 'euid',
  pairid: 'pairid',
  maid: 'maid',
  hashed_email: 'hashed_email',
};
const digest = (what: string) =>
  v.pipe(
    v.string('must be a string'),
    v.regex(SHA256_HEX, `must be the SHA-256 digest of the normalized ${what} (64 lower-case hex characters): plaintext is refused`),
  );

const member = v.pipe(
  v.looseObject({
    external_id: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(255, 'must be at most 255 characters')),
    hashed_email: v.optional(digest('email address')),
    hashed_phone: v.optional(digest('phone number (E.164)')),
    uids: v.optional(
      v.pipe(
        v.array(
          v.looseObject({ type: v.picklist(UID_TYPES, `must be one of ${UID_TYPES.join(', ')}`), value: v.pipe(v.string(), v.minLength(1), v.maxLength(512)) }),
        ),
        v.minLength(1, 'must not be empty'),
        v.maxLength(20),
      ),
    ),
    ext: v.optional(v.record(v.string(), v.unknown())),
  }),
  v.check((m) => !!(m.hashed_email || m.hashed_phone || m.uids), 'needs hashed_email, hashed_phone or uids'),
  // Plaintext emails and phone numbers anywhere else (external ids, uid values, extra members) are refused.
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const hit = findPlaintextPii(dataset.value);
    if (hit !== null) {
      addIssue({
        message: 'holds a plaintext email address or phone number: send identifiers only as SHA-256 digests (hashed_email, hashed_phone)',
        path: [{ type: 'object', origin: 'value', input: dataset.value, key: hit, value: undefined }],
      });
    }
  }),
);
type Member = v.InferOutput<typeof member>;

const members = v.pipe(
  v.array(member, 'must be an array of members'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(10_000, 'accepts at most 10000 members per call'),
);

const audience = v.looseObject({
  audience_id: v.pipe(v.string('is required'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$')),
  name: v.optional(v.pipe(v.string(), v.maxLength(255))),
  audience_type: v.optional(v.picklist(['crm', 'suppression', 'lookalike_seed'], 'must be crm, suppression or lookalike_seed')),
  tags: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(64))), v.maxLength(50))),
  add: v.optional(members),
  remove: v.optional(members),
  delete: v.optional(v.boolean()),
  consent_basis: v.optional(
    v.picklist(['consent', 'legitimate_interest', 'contract', 'legal_obligation'], 'must be consent, legitimate_interest, contract or legal_obligation'),
  ),
});

export const syncAudiencesInput = v.pipe(
  v.looseObject({
    ...versionFields,
    account: accountRef,
    audiences: v.optional(
      v.pipe(
        v.array(audience, 'must be an array of audiences'),
        v.minLength(1, 'must not be empty'),
        v.maxLength(100, 'accepts at most 100 audiences'),
        v.check((list) => new Set(list.map((a) => a.audience_id)).size === list.length, 'lists the same audience_id twice'),
      ),
    ),
    delete_missing: v.optional(v.boolean()),
  }),
  v.forward(
    v.check((i) => !i.delete_missing || !!i.audiences, 'is required with delete_missing (omitting it would delete every audience)'),
    ['audiences'],
  ),
);

/** Whether the simulated identity graph knows a member: a stable share of digests and ids match. */
function matchOf(m: Member, rate: number): string | null {
  const candidates: Array<[string, string]> = [];
  if (m.hashed_email) candidates.push(['hashed_email', m.hashed_email]);
  if (m.hashed_phone) candidates.push(['hashed_phone', m.hashed_phone]);
  for (const u of m.uids ?? []) candidates.push([MATCH_TYPE[u.type] ?? 'other', u.value]);
  for (const [type, value] of candidates) {
    if (Number(BigInt(Bun.hash(`match\u0000${value}`)) % 10_000n) < rate * 10_000) return type;
  }
  return null;
}

interface AudienceRow {
  audience_id: string;
  seller_id: string;
  name: string | null;
  audience_type: string | null;
  consent_basis: string | null;
  tags: string[];
  status: string;
  updated_at: Date;
}

async function render(tx: Queryable, accountId: string, row: AudienceRow, action: string, uploaded: number, minimum: number): Promise<Json> {
  const [totals] = await tx.query<{ total: number; matched: number }>(sql`SELECT count(*)::int AS total, count(matched_by)::int AS matched
    FROM sales_audience_members WHERE account_id = ${accountId}::text AND audience_id = ${row.audience_id}::text`);
  // Per id type: members that carried one, and members matched through it.
  const breakdown = await tx.query<{ id_type: string; submitted: number; matched: number }>(sql`
    SELECT t.id_type, count(*)::int AS submitted, count(*) FILTER (WHERE m.matched_by = t.id_type)::int AS matched
    FROM sales_audience_members m, LATERAL (
      SELECT 'hashed_email' AS id_type WHERE m.identifiers->>'hashed_email' IS NOT NULL
      UNION SELECT 'hashed_phone' WHERE m.identifiers->>'hashed_phone' IS NOT NULL
      UNION SELECT CASE WHEN u->>'type' IN ('rampid', 'id5', 'uid2', 'euid', 'pairid', 'maid', 'hashed_email') THEN u->>'type' ELSE 'other' END
        FROM jsonb_array_elements(COALESCE(m.identifiers->'uids', '[]'::jsonb)) u
    ) t
    WHERE m.account_id = ${accountId}::text AND m.audience_id = ${row.audience_id}::text GROUP BY t.id_type ORDER BY t.id_type`);
  const { total, matched } = totals!;
  const out: Json = {
    audience_id: row.audience_id,
    seller_id: row.seller_id,
    action,
    status: row.status,
    uploaded_count: uploaded,
    total_uploaded_count: total,
    matched_count: matched,
    effective_match_rate: total ? Math.round((matched / total) * 10_000) / 10_000 : 0,
    last_synced_at: new Date(row.updated_at).toISOString(),
    minimum_size: minimum,
  };
  if (row.name) out.name = row.name;
  if (breakdown.length)
    out.match_breakdown = breakdown.map((b) => ({ ...b, match_rate: b.submitted ? Math.round((b.matched / b.submitted) * 10_000) / 10_000 : 0 }));
  if (row.status === 'too_small') {
    out.errors = [
      {
        code: 'AUDIENCE_TOO_SMALL',
        message: `${matched} members matched; targeting needs at least ${minimum}`,
        recovery: 'correctable',
        details: { minimum_size: minimum, current_size: matched },
        suggestion: 'Add more members and sync again',
      },
    ];
  }
  return out;
}

export function syncAudiencesTask(deps: BuyerDataDeps) {
  const { minAudienceSize: minimum, audienceMatchRate: rate } = deps.options;
  return defineTask({
    name: 'sync_audiences',
    description: `Create, update (add / remove members) or delete first-party audiences of an account. Members carry hashed identifiers only (hashed_email, hashed_phone as SHA-256 hex, or universal ids); plaintext emails and phone numbers are refused. An audience with fewer than ${minimum} matched members is too_small (AUDIENCE_TOO_SMALL).`,
    protocol: 'media_buy',
    requestSchema: 'media-buy/sync-audiences-request.json',
    mutating: true,
    input: syncAudiencesInput,
    async handler({ input, principal, clock, ids }) {
      const account = await deps.accounts.resolve(deps.db, principal.orgId, input.account);
      const now = clock.now();
      const results = await deps.db.transaction(async (tx) => {
        const existing = new Map(
          (
            await tx.query<AudienceRow>(
              sql`SELECT * FROM sales_audiences WHERE account_id = ${account.account_id}::text ORDER BY created_at, audience_id FOR UPDATE`,
            )
          ).map((r) => [r.audience_id, r]),
        );
        const out: Json[] = [];
        if (!input.audiences) {
          for (const row of existing.values()) out.push(await render(tx, account.account_id, row, 'unchanged', 0, minimum));
          return out;
        }
        if (input.delete_missing) {
          const keep = new Set(input.audiences.map((a) => a.audience_id));
          for (const row of existing.values()) {
            if (keep.has(row.audience_id)) continue;
            await tx.query(sql`DELETE FROM sales_audiences WHERE account_id = ${account.account_id}::text AND audience_id = ${row.audience_id}::text`);
            out.push({ audience_id: row.audience_id, seller_id: row.seller_id, action: 'deleted' });
          }
        }
        for (const [i, a] of input.audiences.entries()) {
          const before = existing.get(a.audience_id);
          if (a.delete) {
            if (before)
              await tx.query(sql`DELETE FROM sales_audiences WHERE account_id = ${account.account_id}::text AND audience_id = ${a.audience_id}::text`);
            out.push({ audience_id: a.audience_id, ...(before ? { seller_id: before.seller_id } : {}), action: 'deleted' });
            continue;
          }
          if (a.add && a.remove && a.add.some((m) => a.remove!.some((r) => r.external_id === m.external_id))) {
            throw new ProtocolError('INVALID_REQUEST', `audiences[${i}].remove: a member cannot be added and removed in one call`, {
              field: `audiences[${i}].remove`,
            });
          }
          const meta = {
            name: a.name ?? before?.name ?? null,
            audience_type: a.audience_type ?? before?.audience_type ?? null,
            consent_basis: a.consent_basis ?? before?.consent_basis ?? null,
            tags: a.tags ?? before?.tags ?? [],
          };
          const seller = before?.seller_id ?? `aud_${ids.uuid7().replace(/-/g, '')}`;
          if (!before) {
            await tx.query(sql`INSERT INTO sales_audiences (account_id, audience_id, owner, seller_id, name, audience_type, consent_basis, tags, status, created_at, updated_at)
              VALUES (${account.account_id}::text, ${a.audience_id}::text, ${principal.orgId}::text, ${seller}::text, ${meta.name}::text, ${meta.audience_type}::text,
                      ${meta.consent_basis}::text, ${meta.tags}::text[], 'processing', ${now}::timestamptz, ${now}::timestamptz)`);
          }
          if (a.add) {
            // One statement per call; a member listed twice keeps its last identifiers.
            const rows = new Map<string, { external_id: string; identifiers: Json; matched_by: string | null }>();
            for (const m of a.add) {
              const { external_id, hashed_email, hashed_phone, uids } = m;
              const identifiers = { ...(hashed_email ? { hashed_email } : {}), ...(hashed_phone ? { hashed_phone } : {}), ...(uids ? { uids } : {}) };
              rows.set(external_id, { external_id, identifiers, matched_by: matchOf(m, rate) });
            }
            await tx.query(sql`INSERT INTO sales_audience_members (account_id, audience_id, external_id, identifiers, matched_by)
              SELECT ${account.account_id}::text, ${a.audience_id}::text, x.external_id, x.identifiers, x.matched_by
              FROM jsonb_to_recordset(${[...rows.values()]}::jsonb) AS x(external_id text, identifiers jsonb, matched_by text)
              ON CONFLICT (account_id, audience_id, external_id) DO UPDATE SET identifiers = EXCLUDED.identifiers, matched_by = EXCLUDED.matched_by`);
          }
          if (a.remove) {
            await tx.query(sql`DELETE FROM sales_audience_members WHERE account_id = ${account.account_id}::text AND audience_id = ${a.audience_id}::text
              AND external_id = ANY(${a.remove.map((m) => m.external_id)}::text[])`);
          }
          const [{ matched }] = (await tx.query<{ matched: number }>(sql`SELECT count(matched_by)::int AS matched FROM sales_audience_members
            WHERE account_id = ${account.account_id}::text AND audience_id = ${a.audience_id}::text`)) as [{ matched: number }];
          const status = matched >= minimum ? 'ready' : 'too_small';
          const changed =
            !before ||
            !!a.add ||
            !!a.remove ||
            JSON.stringify([before.name, before.audience_type, before.consent_basis, before.tags]) !==
              JSON.stringify([meta.name, meta.audience_type, meta.consent_basis, meta.tags]);
          const rows = await tx.query<AudienceRow>(sql`UPDATE sales_audiences SET name = ${meta.name}::text, audience_type = ${meta.audience_type}::text,
              consent_basis = ${meta.consent_basis}::text, tags = ${meta.tags}::text[], status = ${status}::text,
              updated_at = ${changed ? now : before!.updated_at}::timestamptz
            WHERE account_id = ${account.account_id}::text AND audience_id = ${a.audience_id}::text RETURNING *`);
          out.push(await render(tx, account.account_id, rows[0]!, !before ? 'created' : changed ? 'updated' : 'unchanged', a.add?.length ?? 0, minimum));
        }
        return out;
      });
      const body: Json = { audiences: results };
      if (deps.options.sandbox || account.sandbox) body.sandbox = true;
      return body;
    },
  });
}
