import type { FormatDefinition } from '../../core/ports/creative-generator.ts';
import { escapeHtml as esc } from '../../lib/html.ts';
import { normalizeHexColor } from '../../lib/brand-identity.ts';
import { isHttpUrl } from './manifest.ts';

type Json = Record<string, any>;

/**
 * Policy of every served preview page: no script at all (nothing from a manifest may run), media
 * from http(s) only, inline styles, and a CSP sandbox; creatives' own HTML renders in a
 * `sandbox=""` iframe below it.
 */
export const PREVIEW_CSP = [
  "default-src 'none'",
  "script-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  'img-src https: http:',
  'media-src https: http:',
  "style-src 'unsafe-inline'",
  'sandbox allow-popups allow-popups-to-escape-sandbox',
].join('; ');

const rendered = new WeakMap<FormatDefinition, FormatDefinition>();

/**
 * What rendering needs of a format: stored with each preview (small, and fixed at preview time).
 * One object per definition (the catalog's are shared and read-only), so a batch's previews of
 * one format store it once.
 */
export function renderedFormat(format: FormatDefinition): FormatDefinition {
  let out = rendered.get(format);
  if (!out) rendered.set(format, (out = renderFormat(format)));
  return out;
}

function renderFormat(format: FormatDefinition): FormatDefinition {
  const assets = format.assets.map((s) => {
    const role = (s.requirements as Json | undefined)?.role;
    return {
      item_type: s.item_type,
      asset_id: s.asset_id,
      asset_type: s.asset_type,
      required: s.required,
      ...(role ? { requirements: { role } } : {}),
      ...(s.repetition ? { repetition: s.repetition } : {}),
    };
  });
  return { format_id: format.format_id, name: format.name, type: format.type, assets };
}

export interface PreviewView {
  format: FormatDefinition;
  /** The manifest's assets, macros applied. */
  assets: Json;
  /** The manifest's `brand` (3.1 brand-ref): colours from `brand_kit_override`. */
  brand?: Json;
  variant: string;
  width?: number;
  height?: number;
}

const XML_ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&quot;': '"', '&apos;': "'", '&#39;': "'", '&amp;': '&' };
const unxml = (s: string) => s.replace(/&(lt|gt|quot|apos|#39|amp);/g, (m) => XML_ENTITIES[m]!);

/** Text of the first `<tag>` of an inline VAST/DAAST document (CDATA or escaped); linear in the document. */
function tagText(xml: string, tag: string): string | undefined {
  const open = xml.search(new RegExp(`<${tag}[\\s>]`));
  if (open < 0) return undefined;
  const start = xml.indexOf('>', open) + 1;
  const end = xml.indexOf(`</${tag}>`, start);
  if (start <= 0 || end < 0) return undefined;
  const raw = xml.slice(start, end).trim();
  const cdata = /^<!\[CDATA\[([\s\S]*)\]\]>$/.exec(raw);
  const value = (cdata ? cdata[1]! : unxml(raw)).trim();
  return value || undefined;
}

function slotsOf(view: PreviewView, type: string): [string, Json][] {
  return view.format.assets.filter((s) => s.asset_type === type && view.assets[s.asset_id]).map((s) => [s.asset_id, view.assets[s.asset_id]]);
}

function clickUrl(view: PreviewView): string | undefined {
  const slot = view.format.assets.find(
    (s) => s.asset_type === 'url' && view.assets[s.asset_id] && !/tracker/.test(String((s.requirements as Json | undefined)?.role ?? s.asset_id)),
  );
  const url = slot && view.assets[slot.asset_id].url;
  return typeof url === 'string' && isHttpUrl(url) ? url : undefined;
}

const link = (url: string | undefined, inner: string) =>
  url ? `<a href="${esc(url)}" target="_blank" rel="noopener noreferrer" style="color:inherit;text-decoration:none">${inner}</a>` : inner;

function texts(view: PreviewView, skip: (id: string) => boolean = () => false): string {
  return slotsOf(view, 'text')
    .filter(([id]) => !skip(id))
    .map(([id, a]) => `<p data-asset="${esc(id)}" style="margin:4px 0;white-space:pre-wrap">${esc(a.content)}</p>`)
    .join('');
}

/** A creative's own HTML, inert: a sandboxed iframe (no scripts, opaque origin) with a no-script policy of its own. */
function sandboxed(html: string, width: number | undefined, height: number | undefined): string {
  const doc = `<meta http-equiv="Content-Security-Policy" content="script-src 'none'; object-src 'none'">${html}`;
  const size = `width="${width ?? 300}" height="${height ?? 250}"`;
  return `<iframe data-role="creative-html" title="Creative" sandbox="" referrerpolicy="no-referrer" ${size} style="border:0;display:block" srcdoc="${esc(doc)}"></iframe>`;
}

function media(view: PreviewView, kind: 'video' | 'audio'): string {
  const file = slotsOf(view, kind)[0]?.[1];
  const tag = slotsOf(view, kind === 'video' ? 'vast' : 'daast')[0]?.[1];
  const inline = typeof tag?.content === 'string' ? tag.content : '';
  const fromTag = inline ? tagText(inline, 'MediaFile') : undefined;
  const src = [file?.url, fromTag].find((u): u is string => typeof u === 'string' && isHttpUrl(u));
  const title = inline ? tagText(inline, 'AdTitle') : undefined;
  const advertiser = inline ? tagText(inline, 'Advertiser') : undefined;
  const size = kind === 'video' ? ` width="${view.width ?? file?.width ?? 640}" height="${view.height ?? file?.height ?? 360}"` : '';
  const player = src
    ? `<${kind} data-role="player" controls preload="none" src="${esc(src)}"${size} style="max-width:100%;background:#000"></${kind}>`
    : `<p data-role="tag-url">${kind === 'video' ? 'VAST' : 'DAAST'} tag: ${esc(String(tag?.url ?? 'none'))}</p>`;
  const caption = [
    title ? `<p data-role="title" style="margin:4px 0;font-weight:700">${esc(title)}</p>` : '',
    advertiser ? `<p data-role="advertiser" style="margin:4px 0">${esc(advertiser)}</p>` : '',
  ].join('');
  return `${player}${caption}${texts(view)}`;
}

function native(view: PreviewView, accent: string): string {
  const images = slotsOf(view, 'image');
  const main = images.find(([id]) => !/icon|logo/.test(id))?.[1];
  const icon = images.find(([id]) => /icon|logo/.test(id))?.[1];
  const text = (re: RegExp) => slotsOf(view, 'text').find(([id]) => re.test(id));
  const title = text(/title|headline/);
  const body = text(/desc|body|mention/);
  const cta = text(/cta/);
  const sponsor = text(/sponsor|disclosure|advertiser/);
  const used = new Set([title, body, cta, sponsor].filter(Boolean).map((t) => t![0]));
  const img = (a: Json | undefined, style: string) =>
    a && isHttpUrl(a.url) ? `<img src="${esc(a.url)}" alt="${esc(String(a.alt_text ?? ''))}" style="${style}">` : '';
  return link(
    clickUrl(view),
    `<article data-role="native" style="max-width:${view.width ?? 420}px;border:1px solid #ddd;border-radius:8px;overflow:hidden;background:#fff">
${img(main, 'display:block;width:100%;height:auto')}
<div style="padding:12px">
${icon ? `<div>${img(icon, 'width:32px;height:32px;border-radius:4px;object-fit:contain')}</div>` : ''}
${title ? `<h2 data-asset="${esc(title[0])}" style="margin:4px 0;font-size:18px">${esc(title[1].content)}</h2>` : ''}
${body ? `<p data-asset="${esc(body[0])}" style="margin:4px 0;white-space:pre-wrap">${esc(body[1].content)}</p>` : ''}
${texts(view, (id) => used.has(id))}
${cta ? `<span data-asset="${esc(cta[0])}" style="display:inline-block;margin-top:8px;padding:6px 12px;border-radius:4px;background:${accent};color:#fff;font-weight:700">${esc(cta[1].content)}</span>` : ''}
${sponsor ? `<p data-asset="${esc(sponsor[0])}" style="margin:8px 0 0;font-size:12px;color:#555">${esc(sponsor[1].content)}</p>` : ''}
</div></article>`,
  );
}

/** Repetitions of a repeatable group (a product carousel): one card per repetition the manifest fills, in order. */
function repetitions(view: PreviewView): string {
  const cards = new Map<string, Map<number, Array<{ asset_id: string; asset: Json }>>>();
  for (const s of view.format.assets) {
    const r = s.repetition as { group: string; index: number; asset_id: string } | undefined;
    const asset = r && view.assets[s.asset_id];
    if (!r || !asset) continue;
    const group = cards.get(r.group) ?? cards.set(r.group, new Map()).get(r.group)!;
    (group.get(r.index) ?? group.set(r.index, []).get(r.index)!).push({ asset_id: r.asset_id, asset });
  }
  const card = (parts: Array<{ asset_id: string; asset: Json }>) =>
    `<li style="flex:0 0 auto;width:140px;border:1px solid #ddd;border-radius:6px;background:#fff;padding:6px">${parts
      .map(({ asset_id, asset }) =>
        asset.asset_type === 'image' && isHttpUrl(asset.url)
          ? `<img data-asset="${esc(asset_id)}" src="${esc(asset.url)}" alt="" style="display:block;width:100%;height:auto">`
          : typeof asset.content === 'string'
            ? `<p data-asset="${esc(asset_id)}" style="margin:4px 0;font-size:13px">${esc(asset.content)}</p>`
            : '',
      )
      .join('')}</li>`;
  const rows = [...cards].map(
    ([group, byIndex]) =>
      `<ol data-role="carousel" data-group="${esc(group)}" style="display:flex;gap:8px;overflow-x:auto;list-style:none;margin:0;padding:0">${[...byIndex]
        .sort(([a], [b]) => a - b)
        .map(([, parts]) => card(parts))
        .join('')}</ol>`,
  );
  const single = view.format.assets.filter(
    (s) => !s.repetition && s.asset_type === 'image' && view.assets[s.asset_id] && isHttpUrl(view.assets[s.asset_id].url),
  );
  const logo = single[0]
    ? `<img data-asset="${esc(single[0].asset_id)}" src="${esc(view.assets[single[0].asset_id].url)}" alt="" style="height:32px;margin-bottom:6px">`
    : '';
  return link(clickUrl(view), `<div data-role="repetitions">${logo}${rows.join('')}</div>`);
}

function display(view: PreviewView): string {
  if (view.format.assets.some((s) => s.repetition)) return repetitions(view);
  const html = slotsOf(view, 'html')[0]?.[1];
  if (html) return sandboxed(html.content, view.width ?? html.width, view.height ?? html.height);
  const image = slotsOf(view, 'image')[0]?.[1];
  if (image && isHttpUrl(image.url)) {
    return link(
      clickUrl(view),
      `<img data-role="banner" src="${esc(image.url)}" width="${view.width ?? image.width}" height="${view.height ?? image.height}" alt="${esc(String(image.alt_text ?? ''))}" style="display:block">`,
    );
  }
  const js = slotsOf(view, 'javascript')[0]?.[1];
  if (js)
    return `<div data-role="tag" style="padding:12px;border:1px dashed #999">JavaScript tag, not executed in previews<pre style="white-space:pre-wrap;font-size:11px">${esc(js.content.slice(0, 2000))}</pre></div>`;
  return texts(view);
}

/** The creative rendered as inert HTML (also `preview_html`): escaped text, no script, http(s) media only. */
export function previewBody(view: PreviewView): string {
  const colors = (view.brand?.brand_kit_override?.colors ?? {}) as Json;
  const primary = normalizeHexColor(colors.primary) ?? '#1F2937';
  const accent = normalizeHexColor(colors.accent) ?? normalizeHexColor(colors.secondary) ?? primary;
  const type = view.format.type;
  const creative =
    type === 'video' ? media(view, 'video') : type === 'audio' ? media(view, 'audio') : type === 'native' ? native(view, primary) : display(view);
  return `<section data-preview-format="${esc(view.format.format_id.id)}" style="font-family:Helvetica,Arial,sans-serif;color:#111;border-top:6px solid ${primary};padding:12px;background:#fafafa">
<header data-role="brand-bar" data-brand-color="${primary}" style="font-size:12px;color:#444;margin-bottom:8px"><span data-role="format-name">${esc(view.format.name)}</span> · <span data-role="variant">${esc(view.variant)}</span>${accent !== primary ? ` <span style="display:inline-block;width:10px;height:10px;background:${accent}"></span>` : ''}</header>
<div data-role="creative">${creative}</div>
</section>`;
}

/** The page served at `GET /previews/{id}`. */
export function previewDocument(view: PreviewView): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><title>Preview: ${esc(view.format.name)}</title></head><body style="margin:0">${previewBody(view)}</body></html>`;
}
