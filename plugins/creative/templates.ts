import { escapeHtml } from '../../lib/html.ts';

/** What a banner says and how it looks; every colour is `#RRGGBB` (validated upstream). */
export interface BannerCopy {
  headline: string;
  body?: string;
  sponsor: string;
  cta: string;
  background: string;
  band: string;
  accent: string;
  logoUrl?: string;
  landingUrl?: string;
  /** The brand's font family (a plain name, see fontFamily), tried before the web-safe ones. */
  font?: string;
}

/** The CSS font-family list of a banner: the brand's family first. */
const families = (c: BannerCopy) => `${c.font ? `'${c.font}', ` : ''}Helvetica, Arial, sans-serif`;

/** Black or white, whichever reads better on `hex`. */
export function inkOn(hex: string): string {
  const n = Number.parseInt(hex.slice(1), 16);
  const [r, g, b] = [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  return 0.299 * r + 0.587 * g + 0.114 * b > 150 ? '#111111' : '#FFFFFF';
}

/** Greedy word wrap to at most `lines` lines of `width` characters (the last one ellipsized). */
function wrap(text: string, width: number, lines: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const next = line ? `${line} ${word}` : word;
    if (next.length <= width || !line) line = next.slice(0, Math.max(width, 1) * 2);
    else {
      out.push(line);
      line = word;
    }
  }
  if (line) out.push(line);
  if (out.length > lines) {
    const kept = out.slice(0, lines);
    kept[lines - 1] = `${kept[lines - 1]!.slice(0, Math.max(1, width - 1))}…`;
    return kept;
  }
  return out;
}

/**
 * A display banner as SVG, laid out for its shape: wide strips (728x90, 320x50) put the headline
 * and the call to action side by side, other sizes stack headline, body, sponsor and button.
 */
export function svgBanner(c: BannerCopy, width: number, height: number): string {
  const ink = inkOn(c.background);
  const bandInk = inkOn(c.band);
  const font = `font-family="${families(c)}"`;
  const parts: string[] = [`<rect width="${width}" height="${height}" fill="${c.background}"/>`];
  if (width / height >= 3) {
    const size = Math.max(10, Math.min(28, Math.round(height * 0.34)));
    const button = Math.min(Math.round(width * 0.28), 180);
    const lines = wrap(c.headline, Math.floor((width - button - 24) / (size * 0.55)), 1);
    parts.push(
      `<text x="12" y="${Math.round(height / 2 - size * 0.1)}" ${font} font-size="${size}" font-weight="700" fill="${ink}">${escapeHtml(lines[0] ?? '')}</text>`,
    );
    parts.push(
      `<text x="12" y="${Math.round(height / 2 + size * 0.85)}" ${font} font-size="${Math.max(8, Math.round(size * 0.5))}" fill="${ink}">${escapeHtml(c.sponsor)}</text>`,
    );
    const bx = width - button - 8;
    const bh = Math.round(height * 0.6);
    parts.push(`<rect x="${bx}" y="${Math.round((height - bh) / 2)}" width="${button}" height="${bh}" rx="4" fill="${c.accent}"/>`);
    parts.push(
      `<text x="${bx + button / 2}" y="${Math.round(height / 2 + size * 0.3)}" text-anchor="middle" ${font} font-size="${Math.max(9, Math.round(size * 0.7))}" font-weight="700" fill="${inkOn(c.accent)}">${escapeHtml(c.cta)}</text>`,
    );
  } else {
    const size = Math.max(12, Math.min(64, Math.round(Math.min(width, height) * 0.11)));
    const band = Math.round(height * 0.24);
    parts.push(`<rect y="${height - band}" width="${width}" height="${band}" fill="${c.band}"/>`);
    const headline = wrap(c.headline, Math.floor((width - 32) / (size * 0.55)), height > width ? 5 : 3);
    headline.forEach((line, i) => {
      parts.push(
        `<text x="16" y="${Math.round(16 + size * (i + 1) * 1.15)}" ${font} font-size="${size}" font-weight="700" fill="${ink}">${escapeHtml(line)}</text>`,
      );
    });
    if (c.body) {
      const small = Math.round(size * 0.5);
      const top = 16 + size * (headline.length + 1) * 1.15;
      const room = Math.floor((height - band - top) / (small * 1.3));
      wrap(c.body, Math.floor((width - 32) / (small * 0.52)), Math.max(0, Math.min(4, room))).forEach((line, i) => {
        parts.push(`<text x="16" y="${Math.round(top + small * (i + 0.6) * 1.3)}" ${font} font-size="${small}" fill="${ink}">${escapeHtml(line)}</text>`);
      });
    }
    const label = Math.max(10, Math.round(band * 0.3));
    parts.push(
      `<text x="16" y="${Math.round(height - band / 2 + label * 0.35)}" ${font} font-size="${label}" font-weight="700" fill="${bandInk}">${escapeHtml(c.sponsor)}</text>`,
    );
    const bw = Math.min(Math.round(width * 0.4), 260);
    const bh = Math.round(band * 0.6);
    parts.push(`<rect x="${width - bw - 16}" y="${height - band + Math.round((band - bh) / 2)}" width="${bw}" height="${bh}" rx="4" fill="${c.accent}"/>`);
    parts.push(
      `<text x="${width - bw / 2 - 16}" y="${Math.round(height - band / 2 + label * 0.35)}" text-anchor="middle" ${font} font-size="${label}" font-weight="700" fill="${inkOn(c.accent)}">${escapeHtml(c.cta)}</text>`,
    );
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(`${c.sponsor}: ${c.headline}`)}">${parts.join('')}</svg>`;
}

/** An HTML5 banner: static markup with inline styles, no script (escaped text, validated colours and URLs). */
export function htmlBanner(c: BannerCopy, width: number | undefined, height: number | undefined): string {
  const ink = inkOn(c.background);
  const box = width && height ? `width:${width}px;height:${height}px;` : 'width:100%;min-height:250px;';
  const wide = width && height && width / height >= 3;
  const size = width && height ? Math.max(12, Math.min(40, Math.round(Math.min(width, height) * (wide ? 0.3 : 0.1)))) : 28;
  const logo = c.logoUrl
    ? `<img data-role="logo" src="${escapeHtml(c.logoUrl)}" alt="" style="align-self:flex-start;height:${Math.round(size * 1.2)}px;max-width:40%;object-fit:contain">`
    : '';
  const button = `<span style="display:inline-block;background:${c.accent};color:${inkOn(c.accent)};font-weight:700;padding:${Math.round(size * 0.25)}px ${Math.round(size * 0.5)}px;border-radius:4px;font-size:${Math.round(size * 0.6)}px">${escapeHtml(c.cta)}</span>`;
  const body =
    c.body && !wide
      ? `<p data-role="body" style="margin:0;font-size:${Math.round(size * 0.5)}px;line-height:1.3;flex:1;overflow:hidden">${escapeHtml(c.body)}</p>`
      : '';
  const inner = wide
    ? `<div style="display:flex;align-items:center;justify-content:space-between;gap:8px;height:100%;padding:0 10px;box-sizing:border-box">${logo}<div style="flex:1;min-width:0"><div style="font-size:${size}px;font-weight:700;white-space:nowrap;overflow:hidden;text-overflow:ellipsis">${escapeHtml(c.headline)}</div><div style="font-size:${Math.round(size * 0.45)}px">${escapeHtml(c.sponsor)}</div></div>${button}</div>`
    : `<div style="display:flex;flex-direction:column;gap:8px;height:100%;padding:14px;box-sizing:border-box">${logo}<h1 data-role="headline" style="margin:0;font-size:${size}px;line-height:1.15">${escapeHtml(c.headline)}</h1>${body}<div style="display:flex;align-items:center;justify-content:space-between;gap:8px;background:${c.band};color:${inkOn(c.band)};margin:0 -14px -14px;padding:8px 14px"><strong data-role="sponsor">${escapeHtml(c.sponsor)}</strong>${button}</div></div>`;
  const wrapped = c.landingUrl
    ? `<a href="${escapeHtml(c.landingUrl)}" target="_blank" rel="noopener noreferrer" style="color:inherit;text-decoration:none;display:block;height:100%">${inner}</a>`
    : inner;
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(c.sponsor)}</title></head><body style="margin:0"><div data-creative="banner" style="${box}overflow:hidden;background:${c.background};color:${ink};font-family:${families(c)}">${wrapped}</div></body></html>`;
}

function clock(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const s = Math.floor((total % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(total % 1000, 3)}`;
}

export interface MediaTag {
  adId: string;
  title: string;
  advertiser: string;
  mediaUrl: string;
  mimeType: string;
  durationMs: number;
  width?: number;
  height?: number;
  clickUrl?: string;
  impressionUrls: readonly string[];
}

/** An inline VAST 4.2 linear ad playing the supplied file. */
export function vastTag(t: MediaTag): string {
  const size = t.width && t.height ? ` width="${t.width}" height="${t.height}"` : ' width="1920" height="1080"';
  const impressions = t.impressionUrls.map((u, i) => `<Impression id="imp${i}">${escapeHtml(u)}</Impression>`).join('');
  const clicks = t.clickUrl ? `<VideoClicks><ClickThrough id="click">${escapeHtml(t.clickUrl)}</ClickThrough></VideoClicks>` : '';
  return `<?xml version="1.0" encoding="UTF-8"?><VAST version="4.2"><Ad id="${escapeHtml(t.adId)}"><InLine><AdSystem>adagent-framework</AdSystem><AdTitle>${escapeHtml(t.title)}</AdTitle><Advertiser>${escapeHtml(t.advertiser)}</Advertiser>${impressions}<Creatives><Creative id="${escapeHtml(t.adId)}-linear"><Linear><Duration>${clock(t.durationMs)}</Duration><MediaFiles><MediaFile delivery="progressive" type="${escapeHtml(t.mimeType)}"${size}>${escapeHtml(t.mediaUrl)}</MediaFile></MediaFiles>${clicks}</Linear></Creative></Creatives></InLine></Ad></VAST>`;
}

/** An inline DAAST 1.0 audio ad playing the supplied file. */
export function daastTag(t: MediaTag): string {
  const impressions = t.impressionUrls.map((u, i) => `<Impression id="imp${i}">${escapeHtml(u)}</Impression>`).join('');
  const clicks = t.clickUrl ? `<AudioInteractions><ClickThrough>${escapeHtml(t.clickUrl)}</ClickThrough></AudioInteractions>` : '';
  return `<?xml version="1.0" encoding="UTF-8"?><DAAST version="1.0"><Ad id="${escapeHtml(t.adId)}"><InLine><AdSystem>adagent-framework</AdSystem><AdTitle>${escapeHtml(t.title)}</AdTitle><Advertiser>${escapeHtml(t.advertiser)}</Advertiser>${impressions}<Creatives><Creative><Linear><Duration>${clock(t.durationMs)}</Duration><MediaFiles><MediaFile delivery="progressive" type="${escapeHtml(t.mimeType)}">${escapeHtml(t.mediaUrl)}</MediaFile></MediaFiles>${clicks}</Linear></Creative></Creatives></InLine></Ad></DAAST>`;
}
