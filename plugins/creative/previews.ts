import { sql } from '../../core/sql.ts';
import type { HttpRoute } from '../../core/http.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { FormatDefinition } from '../../core/ports/creative-generator.ts';
import { PREVIEW_CSP, previewDocument } from './render.ts';

type Json = Record<string, any>;

/** 144 random bits (unguessable) and the expiry, so an expired id answers 410 even after pruning. */
export function newPreviewId(expiresAt: Date): string {
  // getRandomValues: the same CSPRNG as randomBytes, a tenth of its cost under Bun.
  return `${Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url')}.${Math.floor(expiresAt.getTime() / 1000).toString(36)}`;
}

const PREVIEW_ID = /^[A-Za-z0-9_-]{24}\.([0-9a-z]{1,10})$/;

export interface PreviewRow {
  id: string;
  principalId: string;
  /** renderedFormat's: the rows of one format share the object, sent once. */
  format: FormatDefinition;
  manifest: Json;
  input: Json;
  createdAt: Date;
  expiresAt: Date;
}

/** One statement for any number of previews; each distinct format object travels once. */
export async function insertPreviews(db: Queryable, rows: readonly PreviewRow[]): Promise<void> {
  if (rows.length === 0) return;
  const formats = new Map<FormatDefinition, number>();
  // A request's rows share their two dates.
  const times = new Map<Date, string>();
  const iso = (d: Date) => times.get(d) ?? times.set(d, d.toISOString()).get(d)!;
  const data = rows.map((r) => {
    let f = formats.get(r.format);
    if (f === undefined) formats.set(r.format, (f = formats.size + 1));
    return {
      id: r.id,
      principal_id: r.principalId,
      f,
      manifest: r.manifest,
      input: r.input,
      created_at: iso(r.createdAt),
      expires_at: iso(r.expiresAt),
    };
  });
  await db.query(sql`
    INSERT INTO creative_previews (id, principal_id, format_id, format, manifest, input, created_at, expires_at)
    SELECT r.id, r.principal_id, f.format->'format_id'->>'id', f.format, r.manifest, r.input, r.created_at, r.expires_at
    FROM jsonb_to_recordset(${data}::jsonb) AS r(id text, principal_id text, f int, manifest jsonb, input jsonb, created_at timestamptz, expires_at timestamptz)
    JOIN jsonb_array_elements(${[...formats.keys()]}::jsonb) WITH ORDINALITY AS f(format, n) ON f.n = r.f
    -- A joint write retried alone (CoalescedWrite) may find its rows stored by the first attempt: the same rows.
    ON CONFLICT (id) DO NOTHING`);
}

const page = (status: number, title: string, headers: Record<string, string> = {}) =>
  new Response(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><p>${title}</p></body></html>`, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': PREVIEW_CSP,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
      ...headers,
    },
  });

/**
 * `GET /previews/{id}`: the stored manifest rendered under a strict Content-Security-Policy;
 * 410 once expired (before or after the row is pruned), 404 for an unknown id.
 */
export function previewRoute(db: Queryable, clock: ClockPort): HttpRoute {
  return {
    method: 'GET',
    path: '/previews/{id}',
    async handle(_request, { params }) {
      const match = PREVIEW_ID.exec(params.id ?? '');
      if (!match) return page(404, 'Preview not found');
      const now = clock.now();
      const expired = () => page(410, 'Preview expired');
      if (Number.parseInt(match[1]!, 36) * 1000 <= now.getTime()) return expired();
      const [row] = await db.query<{ format: FormatDefinition; manifest: Json; input: Json; expires_at: string | Date }>(sql`
        SELECT format, manifest, input, expires_at FROM creative_previews WHERE id = ${params.id}::text`);
      if (!row) return page(404, 'Preview not found');
      const expiresAt = new Date(row.expires_at);
      if (expiresAt.getTime() <= now.getTime()) return expired();
      const html = previewDocument({
        format: row.format,
        assets: row.manifest.assets ?? {},
        brand: row.manifest.brand,
        variant: String(row.input.name ?? 'default'),
        width: row.input.width,
        height: row.input.height,
      });
      return new Response(html, {
        headers: {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': PREVIEW_CSP,
          'x-content-type-options': 'nosniff',
          'referrer-policy': 'no-referrer',
          'cache-control': `private, max-age=${Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000))}`,
        },
      });
    },
  };
}

/** Delete expired previews and hosted files, a batch at a time; returns how many rows went. */
export async function pruneExpired(db: Queryable, now: Date, batch = 1000): Promise<number> {
  const previews = await db.query(sql`
    DELETE FROM creative_previews WHERE id IN (SELECT id FROM creative_previews WHERE expires_at <= ${now}::timestamptz LIMIT ${batch}::int) RETURNING id`);
  const assets = await db.query(sql`
    DELETE FROM creative_assets WHERE id IN (SELECT id FROM creative_assets WHERE expires_at <= ${now}::timestamptz LIMIT ${batch}::int) RETURNING id`);
  return previews.length + assets.length;
}
