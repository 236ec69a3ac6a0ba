import { createHash } from 'node:crypto';
import { sql } from '../../core/sql.ts';
import type { HttpRoute } from '../../core/http.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';

export interface HostedFile {
  id: string;
  contentType: string;
  body: string;
}

const EXTENSION: Record<string, string> = { 'image/svg+xml': 'svg' };

/**
 * Collects the files one build publishes. Ids derive from the build's scope (task id, or caller
 * and idempotency key) and the content, so a retried step re-publishes the same URLs; the scope
 * is private to the caller, so ids stay unguessable.
 */
export class HostedFiles {
  readonly files: HostedFile[] = [];
  constructor(
    private readonly baseUrl: string,
    private readonly scope: string,
  ) {}

  host = (file: { contentType: string; body: string }): string => {
    const digest = createHash('sha256').update(`${this.scope}\n${file.contentType}\n${file.body}`).digest('base64url').slice(0, 32);
    const id = `${digest}.${EXTENSION[file.contentType] ?? 'bin'}`;
    if (!this.files.some((f) => f.id === id)) this.files.push({ id, contentType: file.contentType, body: file.body });
    return `${this.baseUrl}/creative-assets/${id}`;
  };
}

export async function storeHostedFiles(db: Queryable, files: readonly HostedFile[], now: Date, expiresAt: Date): Promise<void> {
  if (files.length === 0) return;
  const rows = files.map((f) => ({ id: f.id, content_type: f.contentType, body: f.body }));
  await db.query(sql`
    INSERT INTO creative_assets (id, content_type, body, created_at, expires_at)
    SELECT r.id, r.content_type, r.body, ${now}::timestamptz, ${expiresAt}::timestamptz
    FROM jsonb_to_recordset(${rows}::jsonb) AS r(id text, content_type text, body text)
    ON CONFLICT (id) DO NOTHING`);
}

const ASSET_ID = /^[A-Za-z0-9_-]{32}\.[a-z]{2,4}$/;

/** `GET /creative-assets/{id}`: a generated file, inert (SVG is served with a no-script policy). */
export function hostedAssetRoute(db: Queryable, clock: ClockPort): HttpRoute {
  return {
    method: 'GET',
    path: '/creative-assets/{id}',
    async handle(_request, { params }) {
      const id = params.id ?? '';
      const notFound = () => Response.json({ error: 'not_found', message: 'No such asset' }, { status: 404 });
      if (!ASSET_ID.test(id)) return notFound();
      const [row] = await db.query<{ content_type: string; body: string; expires_at: string | Date }>(sql`
        SELECT content_type, body, expires_at FROM creative_assets WHERE id = ${id}::text`);
      if (!row) return notFound();
      const left = new Date(row.expires_at).getTime() - clock.now().getTime();
      if (left <= 0) return Response.json({ error: 'gone', message: 'The asset expired; build the creative again' }, { status: 410 });
      return new Response(row.body, {
        headers: {
          'content-type': row.content_type,
          'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
          'x-content-type-options': 'nosniff',
          'cache-control': `public, max-age=${Math.floor(left / 1000)}, immutable`,
          'cross-origin-resource-policy': 'cross-origin',
        },
      });
    },
  };
}
