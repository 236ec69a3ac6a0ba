import type { ClockPort } from '../../core/ports/clock.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import type { PublicJwk } from '../../core/ports/signer.ts';
import type { KeyResolver } from './verify.ts';
import { canonicalTarget } from './target-uri.ts';

/** A counterparty whose signatures we accept: its operator's brand.json (and agent url), or a JWKS URL directly. */
export interface TrustedSigner {
  /** Identity of the signer (webhook dedup scope, request signer name). */
  id: string;
  brandJsonUrl?: string;
  /** The agent's url in brand.json `agents[]` (picks the entry when there are several). */
  agentUrl?: string;
  jwksUri?: string;
}

/** A resolved key with the signer it belongs to. */
export type SignerJwk = PublicJwk & { sender?: string };

/** Where the owning plugin keeps fetched JWKS documents (a table of its own, shared by instances). */
export interface JwksCache {
  get(source: string): Promise<{ keys: PublicJwk[]; fetchedAt: Date } | null>;
  put(source: string, keys: PublicJwk[], fetchedAt: Date): Promise<void>;
}

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
 * Key resolution through brand.json -> `agents[]` -> `jwks_uri` (the entry for `agentUrl`, else the
 * one declaring `{ns}_use: <purpose>`, else the only one), outbound only through the crawler port
 * (SSRF guard). JWKS documents are cached in the owner's store and in memory; an unknown keyid
 * triggers at most one refetch per signer per `refetchSeconds`.
 */
export function createJwksResolver(
  deps: { cache: JwksCache; clock: ClockPort; crawler: CrawlerPort; namespace: string },
  signers: readonly TrustedSigner[],
  options: { purpose: string; refetchSeconds?: number; ttlSeconds?: number; requireHttps?: boolean },
): KeyResolver & { senderOf(keyid: string): Promise<string | null> } {
  const refetchMs = (options.refetchSeconds ?? 30) * 1000;
  const ttlMs = (options.ttlSeconds ?? 3600) * 1000;
  const requireHttps = options.requireHttps ?? true;
  const memory = new Map<string, { keys: PublicJwk[]; fetchedAt: number }>();
  const lastAttempt = new Map<string, number>();
  // Concurrent first requests share one fetch instead of the later ones finding no keys.
  const inflight = new Map<string, Promise<PublicJwk[]>>();
  const useField = `${deps.namespace}_use`;

  async function jwksUriOf(s: TrustedSigner): Promise<string> {
    if (s.jwksUri) return s.jwksUri;
    const res = await deps.crawler.fetch(s.brandJsonUrl!, { accept: ['application/json'], maxBytes: BRAND_MAX, requireHttps });
    const entries = agentEntries(JSON.parse(res.text()));
    const entry = s.agentUrl
      ? entries.find((a) => typeof a.url === 'string' && sameUrl(a.url, s.agentUrl!))
      : (entries.find((a) => a[useField] === options.purpose) ?? (entries.length === 1 ? entries[0] : undefined));
    if (!entry) throw new Error(`no agents[] entry for ${s.agentUrl ?? `a ${options.purpose} agent`} in ${s.brandJsonUrl}`);
    // Absent jwks_uri means the well-known JWKS on the agent's origin.
    return typeof entry.jwks_uri === 'string' ? entry.jwks_uri : new URL('/.well-known/jwks.json', entry.url).href;
  }

  async function fetchJwks(s: TrustedSigner): Promise<PublicJwk[]> {
    const uri = await jwksUriOf(s);
    const res = await deps.crawler.fetch(uri, { accept: ['application/json', 'application/jwk-set+json'], maxBytes: JWKS_MAX, requireHttps });
    const doc = JSON.parse(res.text());
    if (!Array.isArray(doc?.keys)) throw new Error(`${uri} is not a JWKS`);
    return doc.keys.filter((k: any) => k && typeof k.kid === 'string');
  }

  async function load(s: TrustedSigner, force: boolean): Promise<PublicJwk[]> {
    const now = deps.clock.now().getTime();
    const mem = memory.get(s.id);
    if (mem && !force && now - mem.fetchedAt < ttlMs) return mem.keys;
    if (!force) {
      const cached = await deps.cache.get(s.id);
      if (cached && now - cached.fetchedAt.getTime() < ttlMs) {
        memory.set(s.id, { keys: cached.keys, fetchedAt: cached.fetchedAt.getTime() });
        return cached.keys;
      }
    }
    const pending = inflight.get(s.id);
    if (pending) return pending;
    if (now - (lastAttempt.get(s.id) ?? -Infinity) < refetchMs) return mem?.keys ?? [];
    lastAttempt.set(s.id, now);
    const fetching = (async () => {
      try {
        const keys = await fetchJwks(s);
        memory.set(s.id, { keys, fetchedAt: now });
        await deps.cache.put(s.id, keys, new Date(now));
        return keys;
      } catch {
        return mem?.keys ?? []; // keep serving the last good document
      } finally {
        inflight.delete(s.id);
      }
    })();
    inflight.set(s.id, fetching);
    return fetching;
  }

  async function find(keyid: string): Promise<SignerJwk | null> {
    for (const force of [false, true]) {
      for (const s of signers) {
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
