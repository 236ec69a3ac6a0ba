const UNRESERVED = /%(4[1-9A-F]|5[0-9A]|6[1-9A-F]|7[0-9A]|3[0-9]|2D|2E|5F|7E)/gi;

/**
 * The key of an agent URL: one resource, one string. Lowercase scheme and host, default port and
 * fragment dropped (the URL parser), dot segments resolved (the parser), repeated slashes collapsed,
 * percent-escapes of unreserved characters decoded and the others upper-cased (RFC 3986 6.2.2),
 * trailing slashes removed. Null for anything but an absolute http(s) URL without credentials.
 * Used everywhere an agent URL is a key, so `https://h/x//a` and `https://h/%70rivate-a` cannot
 * pose as different agents.
 */
export function normalizeAgentUrl(raw: string): string | null {
  if (typeof raw !== 'string' || raw.length > 2048) return null;
  // A pure function of a few distinct URLs, asked on every format id of every request: remembered
  // (bounded: short URLs only, forgotten wholesale when full).
  const known = normalized.get(raw);
  if (known !== undefined) return known;
  const key = normalizeOnce(raw);
  if (raw.length <= 256) {
    if (normalized.size >= 512) normalized.clear();
    normalized.set(raw, key);
  }
  return key;
}

const normalized = new Map<string, string | null>();

function normalizeOnce(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.username || url.password || !url.hostname) return null;
  const host = url.hostname.replace(/\.$/, '');
  const port = url.port ? `:${url.port}` : '';
  const decoded = url.pathname
    .replace(/%[0-9a-f]{2}/gi, (m) => m.toUpperCase())
    .replace(UNRESERVED, (m) => String.fromCharCode(Number.parseInt(m.slice(1), 16)));
  // Decoding may have formed new dot segments (`%2E%2E`), collapsing slashes too (`/a//../b`): let the
  // parser resolve them once more. A path neither changed is the parser's own output already.
  const collapsed = decoded.replace(/\/{2,}/g, '/');
  const path = (collapsed === url.pathname ? collapsed : new URL(`http://h${collapsed}`).pathname).replace(/\/+$/, '');
  return `${url.protocol}//${host}${port}${path}${url.search}`;
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]', '']);

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname) || hostname === '[::1]';
}

/**
 * Base URL for links a response carries (agent cards, adagents.json): the configured public URL;
 * without one, the request's origin only when its Host is loopback or the configured listen
 * address. A Host header is the client's word, and a cacheable document must not carry an
 * attacker's host. Null when the Host cannot be trusted.
 */
export function trustedBaseUrl(server: { publicUrl?: string; host: string }, request: Request): string | null {
  if (server.publicUrl) return server.publicUrl.replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return null;
  }
  const host = url.hostname.toLowerCase();
  const configured = server.host.toLowerCase();
  if (isLoopbackHost(host) || (!WILDCARD_HOSTS.has(configured) && host === configured)) return `${url.protocol}//${url.host}`;
  return null;
}

/** The answer to a request whose Host is not trusted (see trustedBaseUrl). */
export function untrustedHostResponse(): Response {
  return Response.json(
    { error: 'misdirected_request', message: 'This Host is not served here; the operator must set PUBLIC_URL to serve documents with absolute links' },
    { status: 421 },
  );
}

/**
 * Whether a URL's host is one of the names reserved for examples (RFC 2606: `.example`, and
 * example.com/.net/.org): nobody runs an agent there, so sandbox agents take what test fixtures say
 * of such agents (their format ids) as given.
 */
export function isExampleHost(url: string): boolean {
  try {
    return /(^|\.)(example|example\.com|example\.net|example\.org)\.?$/.test(new URL(url).hostname);
  } catch {
    return false;
  }
}
