import { sql } from '../../core/sql.ts';
import type { HttpRoute } from '../../core/http.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { FormatDefinition } from '../../core/ports/creative-generator.ts';
import { PREVIEW_CSP, previewDocument, renderedFormat, type PreviewView } from './render.ts';
import { LINK_ID, PreviewLinks } from './preview-links.ts';
import type { FormatCatalog } from './catalog.ts';

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

const served = (view: PreviewView, expiresAt: number, now: number) =>
  new Response(previewDocument(view), {
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': PREVIEW_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': `private, max-age=${Math.max(0, Math.floor((expiresAt - now) / 1000))}`,
    },
  });

/**
 * `GET /previews/{id}`: the manifest rendered under a strict Content-Security-Policy, from the id
 * itself (a sealed link, preview-links.ts; its format read from the catalog) or from its stored row;
 * 410 once expired (before or after the row is pruned), 404 for an unknown, altered or forged id.
 */
export function previewRoute(db: Queryable, clock: ClockPort, catalog: FormatCatalog, links: PreviewLinks): HttpRoute {
  const notFound = () => page(404, 'Preview not found');
  const expired = () => page(410, 'Preview expired');
  return {
    method: 'GET',
    path: '/previews/{id}',
    async handle(_request, { params }) {
      const id = params.id ?? '';
      const now = clock.now().getTime();
      const link = LINK_ID.exec(id);
      if (link) {
        const expiresAt = Number.parseInt(link[1]!, 36) * 1000;
        if (expiresAt <= now) return expired();
        const view = PreviewLinks.open(await links.ready(), link[1]!, link[2]!);
        if (!view) return notFound();
        const format = (await catalog.find([view.format])).get(view.format);
        if (!format) return notFound();
        const { format: _f, ...rest } = view;
        return served({ ...rest, format: renderedFormat(format) }, expiresAt, now);
      }
      const match = PREVIEW_ID.exec(id);
      if (!match) return notFound();
      if (Number.parseInt(match[1]!, 36) * 1000 <= now) return expired();
      const [row] = await db.query<{ format: FormatDefinition; manifest: Json; input: Json; expires_at: string | Date }>(sql`
        SELECT format, manifest, input, expires_at FROM creative_previews WHERE id = ${id}::text`);
      if (!row) return notFound();
      const expiresAt = new Date(row.expires_at).getTime();
      if (expiresAt <= now) return expired();
      const view = {
        format: row.format,
        assets: row.manifest.assets ?? {},
        brand: row.manifest.brand,
        variant: String(row.input.name ?? 'default'),
        width: row.input.width,
        height: row.input.height,
      };
      return served(view, expiresAt, now);
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
