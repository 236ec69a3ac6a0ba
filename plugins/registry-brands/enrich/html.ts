/**
 * Brand metadata from untrusted HTML, without a DOM and without running anything: a tolerant scan
 * of `<title>`, `<meta>` and `<link>` tags, after dropping comments and the content of script,
 * style, template and noscript elements. Broken markup yields whatever well-formed tags remain.
 */
export interface PageMetadata {
  title?: string;
  /** `<meta name|property=...>` values, first occurrence wins, keys lower-cased. */
  meta: Record<string, string>;
  /** `<link rel=...>` entries (rel lower-cased, one entry per rel token). */
  links: Array<{ rel: string; href: string; sizes?: string; type?: string }>;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,8});/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '';
    }
    return ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/** Collapse whitespace, drop control characters, cap the length. */
export function cleanText(text: string, max: number): string {
  return decodeEntities(text)
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, max);
}

function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
    const name = m[1]!.toLowerCase();
    if (!(name in out)) out[name] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  }
  return out;
}

export function parsePage(html: string): PageMetadata {
  // Only the document head matters; a page's body can be huge.
  const headEnd = html.search(/<body[\s>]/i);
  let text = headEnd > 0 ? html.slice(0, headEnd) : html.slice(0, 512 * 1024);
  text = text.replace(/<!--[\s\S]*?(-->|$)/g, ' ').replace(/<(script|style|template|noscript)\b[\s\S]*?(<\/\1\s*>|$)/gi, ' ');
  const meta: Record<string, string> = {};
  const links: PageMetadata['links'] = [];
  let title: string | undefined;
  const titleMatch = /<title\b[^>]*>([\s\S]{0,2000}?)<\/title\s*>/i.exec(text);
  if (titleMatch) title = cleanText(titleMatch[1]!, 300) || undefined;
  // Quoted attribute values may contain '>'; each tag is bounded, so no input can make this slow.
  for (const m of text.matchAll(/<(meta|link)\b((?:[^>"']|"[^"]{0,4000}"|'[^']{0,4000}'){0,1000})>/gi)) {
    const attrs = attributes(m[2]!);
    if (m[1]!.toLowerCase() === 'meta') {
      const key = (attrs.property ?? attrs.name ?? attrs.itemprop ?? '').toLowerCase().trim();
      if (key && attrs.content !== undefined && !(key in meta)) meta[key] = attrs.content;
    } else if (attrs.rel && attrs.href) {
      for (const rel of attrs.rel.toLowerCase().split(/\s+/).filter(Boolean)) {
        links.push({ rel, href: attrs.href.trim(), ...(attrs.sizes ? { sizes: attrs.sizes } : {}), ...(attrs.type ? { type: attrs.type } : {}) });
      }
    }
    if (links.length > 200) break;
  }
  return { title, meta, links };
}

/** `#rgb`, `#rrggbb` (and `rgb(r, g, b)`) as `#rrggbb`; anything else null. */
export function normalizeColor(value: string | undefined): string | null {
  if (!value) return null;
  const v = value.trim().toLowerCase();
  let m = /^#([0-9a-f]{3})$/.exec(v);
  if (m) return `#${[...m[1]!].map((c) => c + c).join('')}`;
  m = /^#([0-9a-f]{6})(?:[0-9a-f]{2})?$/.exec(v);
  if (m) return `#${m[1]}`;
  const rgb = /^rgba?\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*(?:,\s*[\d.]+\s*)?\)$/.exec(v);
  if (rgb) {
    const parts = rgb.slice(1, 4).map(Number);
    if (parts.every((n) => n <= 255)) return `#${parts.map((n) => n.toString(16).padStart(2, '0')).join('')}`;
  }
  return null;
}

/** Largest edge of a `sizes` attribute (`192x192 512x512`), 0 when unknown (`any`: vector, ranks first). */
export function iconSize(sizes: string | undefined): number {
  if (!sizes) return 0;
  if (/\bany\b/i.test(sizes)) return 10_000;
  return Math.max(0, ...[...sizes.matchAll(/(\d{1,5})x(\d{1,5})/gi)].map((m) => Math.max(Number(m[1]), Number(m[2]))));
}
