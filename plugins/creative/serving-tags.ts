import { createHash } from 'node:crypto';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { Json } from '../../core/task.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { CreativeStorePort, LibraryCreative } from '../../core/ports/creative-store.ts';

/** Where a serving tag is placed: the buyer's trafficking context (AdCP build_creative media_buy_id, package_id). */
export interface Placement {
  media_buy_id?: string;
  package_id?: string;
}

const VIDEO_TYPES = new Set(['video', 'ctv', 'olv']);
const VIDEO_ID = /vast|video|ctv|olv/i;
/** Target format ids a VAST tag answers. */
export const VAST_TARGET = /vast/i;

/** A video creative: its format id says so, or it carries a video asset. */
export const isVideo = (c: LibraryCreative): boolean => VIDEO_ID.test(c.format_id.id) || Object.values(c.assets).some((a) => a.asset_type === 'video');
// No `]]>`: media URLs go into the VAST tag's CDATA sections.
const httpUrl = (u: unknown): u is string => typeof u === 'string' && /^https?:\/\/\S+$/i.test(u) && !u.includes(']]>') && URL.canParse(u);
const escapeXml = (s: string) => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The creative's landing page: its clickthrough URL asset (else any URL asset not a tracker). */
export function landingUrl(c: LibraryCreative): string | null {
  const urls = Object.entries(c.assets).filter(([, a]) => a.asset_type === 'url' || a.url_type !== undefined);
  const pick =
    urls.find(([, a]) => a.url_type === 'clickthrough') ??
    urls.find(([id, a]) => /click|landing/i.test(id) && a.url_type !== 'tracker_pixel' && a.url_type !== 'tracker_script');
  const url = pick?.[1].url;
  return httpUrl(url) ? url : null;
}

/** A serving tag's id: the same creative, placement and format always get the same tag (any instance). */
function tagId(owner: string, c: LibraryCreative, placement: Placement, formatId: string): string {
  return createHash('sha256')
    .update([owner, c.account_id, c.creative_id, placement.media_buy_id ?? '', placement.package_id ?? '', formatId].join('\n'))
    .digest('base64url')
    .slice(0, 32);
}

/** The media the tag serves: the creative's first video / image asset URL of http(s). */
function mediaUrl(c: LibraryCreative, kind: 'video' | 'image'): string | undefined {
  for (const a of Object.values(c.assets)) if (a.asset_type === kind && httpUrl(a.url)) return a.url;
  return undefined;
}

function vastTag(c: LibraryCreative, trackers: { impression: string; click: string }): Json {
  const video = mediaUrl(c, 'video');
  const media = video
    ? `<MediaFiles><MediaFile delivery="progressive" type="video/mp4" width="1920" height="1080"><![CDATA[${video}]]></MediaFile></MediaFiles>`
    : '<MediaFiles/>';
  const content = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<VAST version="4.2"><Ad id="${escapeXml(c.creative_id)}"><InLine><AdSystem>AdCP creative agent</AdSystem><AdTitle>${escapeXml(c.name)}</AdTitle>`,
    `<Impression><![CDATA[${trackers.impression}]]></Impression>`,
    `<Creatives><Creative><Linear><Duration>00:00:30</Duration>${media}`,
    `<VideoClicks><ClickThrough><![CDATA[${trackers.click}]]></ClickThrough></VideoClicks></Linear></Creative></Creatives></InLine></Ad></VAST>`,
  ].join('');
  return { asset_type: 'vast', delivery_type: 'inline', vast_version: '4.2', content };
}

function htmlTag(c: LibraryCreative, trackers: { impression: string; click: string }): Json {
  const image = mediaUrl(c, 'image');
  const body = image ? `<img src="${escapeXml(image)}" alt="${escapeXml(c.name)}" style="border:0;display:block">` : escapeXml(c.name);
  const content = `<a href="${escapeXml(trackers.click)}" target="_blank" rel="noopener">${body}</a><img src="${escapeXml(trackers.impression)}" width="1" height="1" alt="" style="position:absolute;left:-9999px">`;
  return { asset_type: 'html', content };
}

/**
 * Find the library creative a build names among the caller's accounts: 404 CREATIVE_NOT_FOUND when
 * it is not the caller's, 422 when its review status keeps it from serving. The build's `account` is
 * the billing account (AdCP build_creative): it picks the creative when several accounts hold the id.
 */
export async function libraryCreative(store: CreativeStorePort, owner: string, creativeId: string, account: unknown): Promise<LibraryCreative> {
  let found = await store.find(owner, [creativeId]);
  if (found.length > 1 && account !== undefined) {
    const accountId = await store.accountId(owner, account, 'account');
    if (accountId) found = found.filter((c) => c.account_id === accountId);
  }
  const [c, other] = found;
  if (!c)
    throw new ProtocolError('CREATIVE_NOT_FOUND', `creative_id: no creative ${creativeId.slice(0, 128)} in your library`, {
      status: 404,
      field: 'creative_id',
      suggestion: 'Use a creative_id from list_creatives',
    });
  if (other) throw new ProtocolError('INVALID_REQUEST', `creative_id: ${creativeId} is in several of your accounts; name the account`, { field: 'account' });
  if (c.status !== 'approved')
    throw new ProtocolError('CREATIVE_REJECTED', `creative_id: ${creativeId} is ${c.status}; only approved creatives are served`, {
      status: 422,
      field: 'creative_id',
    });
  return c;
}

/**
 * A serving tag for a library creative in its placement: VAST for video formats, HTML otherwise,
 * with this agent's impression pixel and click redirect (recorded for get_creative_delivery).
 */
export async function servingTag(
  db: Queryable,
  deps: { publicUrl: string; agentUrl: string; now: Date },
  owner: string,
  c: LibraryCreative,
  format: { id: string; type?: string },
  placement: Placement,
): Promise<Json> {
  const id = tagId(owner, c, placement, format.id);
  await db.query(sql`
    INSERT INTO creative_serving_tags (id, owner, account_id, creative_id, media_buy_id, package_id, format_id, landing_url, created_at)
    VALUES (${id}::text, ${owner}::text, ${c.account_id}::text, ${c.creative_id}::text, ${placement.media_buy_id ?? null}::text,
            ${placement.package_id ?? null}::text, ${{ agent_url: deps.agentUrl, id: format.id }}::jsonb, ${landingUrl(c)}::text, ${deps.now}::timestamptz)
    ON CONFLICT (id) DO NOTHING`);
  const base = `${deps.publicUrl}/creative-track/${id}`;
  const trackers = { impression: `${base}/impression`, click: `${base}/click` };
  const video = VIDEO_TYPES.has(format.type ?? '') || VIDEO_ID.test(format.id);
  return {
    format_id: { agent_url: deps.agentUrl, id: format.id },
    assets: {
      serving_tag: video ? vastTag(c, trackers) : htmlTag(c, trackers),
      impression_tracker: { asset_type: 'url', url_type: 'tracker_pixel', url: trackers.impression },
      click_tracker: { asset_type: 'url', url_type: 'clickthrough', url: trackers.click },
    },
  };
}
