import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import type { KeyResolverPort, PublicJwk } from '../../core/ports/signer.ts';
import { canonicalTarget } from './rfc9421/target-uri.ts';

/** A sender whose webhooks we accept: its operator's brand.json (and agent url), or a JWKS URL directly. */
export interface TrustedSender {
  /** Identity used as the dedup scope. */
  id: string;
  brandJsonUrl?: string;
  /** The agent's url in brand.json `agents[]` (picks the entry when there are several). */
  agentUrl?: string;
  jwksUri?: string;
}

/** A resolved key with the sender it belongs to. */
export type SenderJwk = PublicJwk & { sender?: string };

const BRAND_MAX = 256 * 1024;
const JWKS_MAX = 256 * 1024;

function sameUrl(a: string, b: string): boolean {
  try {
    return canonicalTarget(a).targetUri.replace(/\/$/, '') === canonicalTarget(b).targetUri.replace(/\/$/, '');
  } catch {
    return false;
  }
}

/** Agent entries of a brand.json (house-level and top-level `agents`). */
function agentEntries(doc: any): any[] {
  const out: any[] = [];
  if (Array.isArray(doc?.agents)) out.push(...doc.agents);
  if (Array.isArray(doc?.house?.agents)) out.push(...doc.house.agents);
  return out.filter((a) => a && typeof a === 'object');
}

/**
 * Key resolution through brand.json -> jwks_uri, outbound only through the crawler port (SSRF
 * guard). JWKS documents are cached in the database (shared by instances) and in memory; an
 * unknown keyid triggers at most one refetch per sender per `refetchSeconds`.
 */
export function createJwksResolver(
  deps: { db: Queryable; clock: ClockPort; crawler: CrawlerPort; namespace: string },
  senders: readonly TrustedSender[],
  options: { refetchSeconds?: number; ttlSeconds?: number; requireHttps?: boolean } = {},
): KeyResolverPort & { senderOf(keyid: string): Promise<string | null> } {
  const refetchMs = (options.refetchSeconds ?? 30) * 1000;
  const ttlMs = (options.ttlSeconds ?? 3600) * 1000;
  const memory = new Map<string, { keys: PublicJwk[]; fetchedAt: number }>();
  const lastAttempt = new Map<string, number>();
  const useField = `${deps.namespace}_use`;

  async function jwksUriOf(s: TrustedSender): Promise<string> {
    if (s.jwksUri) return s.jwksUri;
    const res = await deps.crawler.fetch(s.brandJsonUrl!, { accept: ['application/json'], maxBytes: BRAND_MAX, requireHttps: options.requireHttps ?? true });
    const doc = JSON.parse(res.text());
    const entries = agentEntries(doc);
    const entry = s.agentUrl
      ? entries.find((a) => typeof a.url === 'string' && sameUrl(a.url, s.agentUrl!))
      : entries.find((a) => a[useField] === 'webhook-signing') ?? (entries.length === 1 ? entries[0] : undefined);
    if (!entry) throw new Error(`no agents[] entry for ${s.agentUrl ?? 'a webhook-signing agent'} in ${s.brandJsonUrl}`);
    // Absent jwks_uri means the well-known JWKS on the agent's origin.
    return typeof entry.jwks_uri === 'string' ? entry.jwks_uri : new URL('/.well-known/jwks.json', entry.url).href;
  }

  async function fetchJwks(s: TrustedSender): Promise<PublicJwk[]> {
    const uri = await jwksUriOf(s);
    const res = await deps.crawler.fetch(uri, { accept: ['application/json', 'application/jwk-set+json'], maxBytes: JWKS_MAX, requireHttps: options.requireHttps ?? true });
    const doc = JSON.parse(res.text());
    if (!Array.isArray(doc?.keys)) throw new Error(`${uri} is not a JWKS`);
    return doc.keys.filter((k: any) => k && typeof k.kid === 'string');
  }

  async function load(s: TrustedSender, force: boolean): Promise<PublicJwk[]> {
    const now = deps.clock.now().getTime();
    const mem = memory.get(s.id);
    if (mem && !force && now - mem.fetchedAt < ttlMs) return mem.keys;
    if (!force) {
      const [row] = await deps.db.query<{ jwks: { keys: PublicJwk[] }; fetched_at: Date }>(
        sql`SELECT jwks, fetched_at FROM webhook_jwks_cache WHERE source = ${s.id}::text`,
      );
      if (row && now - new Date(row.fetched_at).getTime() < ttlMs) {
        memory.set(s.id, { keys: row.jwks.keys, fetchedAt: new Date(row.fetched_at).getTime() });
        return row.jwks.keys;
      }
    }
    if (now - (lastAttempt.get(s.id) ?? -Infinity) < refetchMs) return mem?.keys ?? [];
    lastAttempt.set(s.id, now);
    try {
      const keys = await fetchJwks(s);
      memory.set(s.id, { keys, fetchedAt: now });
      await deps.db.query(sql`INSERT INTO webhook_jwks_cache (source, jwks, fetched_at) VALUES (${s.id}::text, ${{ keys }}::jsonb, ${new Date(now)}::timestamptz)
        ON CONFLICT (source) DO UPDATE SET jwks = EXCLUDED.jwks, fetched_at = EXCLUDED.fetched_at`);
      return keys;
    } catch {
      return mem?.keys ?? []; // keep serving the last good document
    }
  }

  async function find(keyid: string): Promise<SenderJwk | null> {
    for (const force of [false, true]) {
      for (const s of senders) {
        const key = (await load(s, force)).find((k) => k.kid === keyid);
        if (key) return { ...key, sender: s.id };
      }
    }
    return null;
  }

  return {
    resolve: find,
    async senderOf(keyid) {
      return (await find(keyid))?.sender ?? null;
    },
  };
}
