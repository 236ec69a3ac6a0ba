type Json = Record<string, unknown>;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Every string that reaches the page goes through this (text and attribute values alike). */
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const obj = (x: unknown): Json | undefined => (x && typeof x === 'object' && !Array.isArray(x) ? (x as Json) : undefined);
/** An A2UI bound value: only literal strings are shown (a preview has no data model to bind paths against). */
const literal = (x: unknown): string | undefined => {
  const s = obj(x)?.literalString;
  return typeof s === 'string' ? s : undefined;
};
/** Images load from http(s) only: no javascript:, data: or relative URLs. */
const imageUrl = (s: string | undefined) => {
  if (!s || !/^https?:\/\//i.test(s)) return undefined;
  try {
    return new URL(s).href;
  } catch {
    return undefined;
  }
};

const STYLE = `body{margin:0;padding:16px;font:15px/1.4 system-ui,sans-serif;background:#f4f5f7;color:#1d2330}
.col{display:flex;flex-direction:column;gap:12px;max-width:560px}
.text{margin:0;padding:12px 14px;background:#fff;border-radius:10px;border:1px solid #dde1e8}
.card{display:flex;gap:12px;padding:12px;background:#fff;border-radius:10px;border:1px solid #dde1e8}
.card img{width:96px;height:96px;object-fit:cover;border-radius:8px;flex:none;background:#eef0f3}
.card .body{display:flex;flex-direction:column;gap:4px;min-width:0;flex:1}
.card h3{margin:0;font-size:16px;overflow-wrap:anywhere}.card p{margin:0;color:#4a5263}
.card .row{display:flex;align-items:center;justify-content:space-between;margin-top:auto}
.card .price{font-weight:700;font-size:16px}
.card button{border:0;border-radius:6px;padding:6px 16px;background:#1a56db;color:#fff;font-weight:600;font-size:14px}`;

/** No scripts, no frames, no outbound requests except images; forms and buttons go nowhere. */
const CSP = "default-src 'none'; img-src http: https:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

function productCard(card: Json): string {
  const title = literal(card.title) ?? '';
  const image = imageUrl(literal(card.image));
  const description = literal(card.description);
  const action = obj(card.action);
  const productId = literal(obj(action?.context)?.product_id);
  return [
    '<article class="card" data-component="ProductCard">',
    image ? `<img src="${esc(image)}" alt="${esc(title)}">` : '',
    '<div class="body">',
    `<h3 data-role="title">${esc(title)}</h3>`,
    description ? `<p data-role="description">${esc(description)}</p>` : '',
    '<div class="row">',
    `<span class="price" data-role="price">${esc(literal(card.price) ?? '')}</span>`,
    `<button type="button" data-role="cta"${typeof action?.name === 'string' ? ` data-action="${esc(action.name)}"` : ''}${productId ? ` data-product-id="${esc(productId)}"` : ''}>${esc(literal(card.ctaLabel) ?? 'Buy')}</button>`,
    '</div></div></article>',
  ].join('');
}

/**
 * An SI answer's A2UI surface (renderReply: a Column of Text and ProductCard components) as a
 * standalone HTML page, so a host or operator can look at what the brand answered. Every string is
 * escaped, images must be http(s), and the page's CSP allows no script; unknown components are skipped.
 */
export function surfaceHtml(surface: unknown, title = 'Sponsored intelligence preview'): string {
  const s = obj(surface);
  const byId = new Map<string, Json>();
  for (const c of Array.isArray(s?.components) ? s.components : []) {
    const comp = obj(c);
    if (comp && typeof comp.id === 'string') byId.set(comp.id, comp);
  }
  const seen = new Set<string>();
  const render = (id: unknown, depth: number): string => {
    // A component is drawn once and the tree is shallow: a cyclic or deep surface cannot blow up the page.
    if (typeof id !== 'string' || seen.has(id) || depth > 8) return '';
    seen.add(id);
    const component = obj(byId.get(id)?.component);
    if (!component) return '';
    const column = obj(component.Column);
    if (column) {
      const children = Array.isArray(column.children) ? column.children : [];
      return `<div class="col" data-component="Column">${children.map((child) => render(child, depth + 1)).join('')}</div>`;
    }
    const text = obj(component.Text);
    if (text) return `<p class="text" data-component="Text">${esc(literal(text.text) ?? '')}</p>`;
    const card = obj(component.ProductCard);
    if (card) return productCard(card);
    return '';
  };
  const body = render(s?.rootId ?? 'root', 0);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${CSP}"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

/** Response headers of a preview page: the same CSP as a header, never cached, never sniffed. */
export const SURFACE_HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': CSP,
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};
