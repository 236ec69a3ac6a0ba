/** Catalog items: feed parsing (JSON or CSV/TSV), field mappings, and per-item validation. */

export type ItemStatus = 'approved' | 'warning' | 'rejected';

export interface CheckedItem {
  item_id: string;
  status: ItemStatus;
  reasons: string[];
  data: Record<string, unknown>;
}

export interface FieldMapping {
  feed_field?: string;
  catalog_field?: string;
  value?: unknown;
  transform?: 'date' | 'divide' | 'boolean' | 'split';
  by?: number;
  separator?: string;
}

/** A feed that cannot be read as items (wrong format, no item array). */
export class FeedFormatError extends Error {
  override name = 'FeedFormatError';
}

const COMMERCE = new Set(['product', 'inventory', 'promotion']);
const ID_FIELDS = [
  'item_id',
  'id',
  'sku',
  'sku_id',
  'offering_id',
  'gtin',
  'job_id',
  'hotel_id',
  'flight_id',
  'vehicle_id',
  'listing_id',
  'store_id',
  'program_id',
  'destination_id',
  'app_id',
];
const AVAILABILITY = new Set(['in_stock', 'in stock', 'out_of_stock', 'out of stock', 'preorder', 'backorder', 'limited_availability']);
const MAX_ITEM_BYTES = 16 * 1024;

const isHttp = (v: unknown) => typeof v === 'string' && /^https?:\/\/[^\s]+$/i.test(v) && v.length <= 2048;
const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : typeof v === 'number' ? String(v) : undefined);

/** RFC 4180 rows (quotes, doubled quotes, CRLF) with the given delimiter. */
function parseDelimited(body: string, delimiter: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === delimiter) {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && body[i + 1] === '\n') i++;
      row.push(field);
      if (row.some((f) => f !== '')) rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  row.push(field);
  if (row.some((f) => f !== '')) rows.push(row);
  return rows;
}

/** Items of a fetched feed: a JSON array, a JSON object holding one (`items`, `products`, `entries`), or CSV/TSV with a header row. */
export function parseFeed(body: string, contentType: string): Record<string, unknown>[] {
  const type = contentType.toLowerCase();
  const trimmed = body.trimStart();
  if (type.includes('json') || trimmed.startsWith('[') || trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw new FeedFormatError('the feed is not valid JSON');
    }
    const list = Array.isArray(parsed) ? parsed : ['items', 'products', 'entries', 'data'].map((k) => (parsed as any)?.[k]).find(Array.isArray);
    if (!list) throw new FeedFormatError('the JSON feed holds no item array (expected an array, or items / products / entries)');
    return list.filter((i): i is Record<string, unknown> => !!i && typeof i === 'object' && !Array.isArray(i));
  }
  if (type.includes('csv') || type.includes('tab-separated') || type.startsWith('text/plain')) {
    const delimiter = type.includes('tab-separated') || (body.split('\n')[0] ?? '').includes('\t') ? '\t' : ',';
    const [header, ...rows] = parseDelimited(body, delimiter);
    if (!header?.length) throw new FeedFormatError('the delimited feed has no header row');
    return rows.map((r) => Object.fromEntries(header.map((h, i) => [h.trim(), r[i] ?? ''])));
  }
  throw new FeedFormatError(`feeds of type ${contentType || 'unknown'} are not read: send JSON, CSV or TSV`);
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) node = (node[key] = node[key] && typeof node[key] === 'object' ? node[key] : {}) as Record<string, unknown>;
  node[keys[keys.length - 1]!] = value;
}

/** Normalize a feed record with `feed_field_mappings` (renames, literals, divide / boolean / split transforms). */
export function applyMappings(item: Record<string, unknown>, mappings: readonly FieldMapping[] | undefined): Record<string, unknown> {
  if (!mappings?.length) return item;
  const out: Record<string, unknown> = { ...item };
  for (const m of mappings) {
    if (!m.catalog_field) continue;
    let value = m.feed_field !== undefined ? item[m.feed_field] : m.value;
    if (value === undefined) continue;
    if (m.transform === 'divide' && m.by) value = Number(value) / m.by;
    else if (m.transform === 'boolean') value = ['true', '1', 'yes', 'y'].includes(String(value).toLowerCase());
    else if (m.transform === 'split')
      value = String(value)
        .split(m.separator ?? ',')
        .map((s) => s.trim())
        .filter(Boolean);
    setPath(out, m.catalog_field, value);
  }
  return out;
}

function priceOk(v: unknown): boolean {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0;
  if (typeof v === 'string') return /^\d+(\.\d+)?(\s?[A-Z]{3})?$/.test(v.trim());
  if (v && typeof v === 'object') return typeof (v as any).amount === 'number' && (v as any).amount >= 0;
  return false;
}

/**
 * Validate one item of a catalog of `type`: an id (`idField` when the catalog names one) and a
 * name everywhere; commerce items also need a price and an http(s) link, and miss an image or a
 * known availability with a warning. Rejected items keep their reasons.
 */
export function checkItem(raw: Record<string, unknown>, type: string, idField: string | undefined, index: number): CheckedItem {
  const reasons: string[] = [];
  // content_id_type says what kind of id the items carry (core/catalog.json: "'sku' means content_ids
  // values are retailer SKUs"): a field of that name when present, else the item's own id is one.
  const idValue = (idField ? text(raw[idField]) : undefined) ?? ID_FIELDS.map((f) => text(raw[f])).find(Boolean);
  const item_id = (idValue ?? `#${index + 1}`).slice(0, 128);
  if (!idValue) reasons.push(`missing an id (${idField ? `${idField}, ` : ''}id, item_id, sku, gtin...)`);
  if (!text(raw.title) && !text(raw.name)) reasons.push('missing title or name');
  for (const key of ['link', 'url', 'image_link', 'image_url'])
    if (raw[key] !== undefined && raw[key] !== '' && !isHttp(raw[key])) reasons.push(`${key} is not an http(s) URL`);
  if (COMMERCE.has(type)) {
    if (!priceOk(raw.price)) reasons.push('missing or malformed price');
    if (!isHttp(raw.link) && !isHttp(raw.url)) reasons.push('missing link (an http(s) landing page)');
  }
  if (JSON.stringify(raw).length > MAX_ITEM_BYTES) reasons.push(`larger than ${MAX_ITEM_BYTES / 1024} KB`);
  if (reasons.length) return { item_id, status: 'rejected', reasons, data: {} };
  const warnings: string[] = [];
  if (COMMERCE.has(type) && !isHttp(raw.image_link) && !isHttp(raw.image_url) && !Array.isArray(raw.images))
    warnings.push('no image: the item cannot serve in image formats');
  if (COMMERCE.has(type) && raw.availability !== undefined && !AVAILABILITY.has(String(raw.availability).toLowerCase()))
    warnings.push(`unknown availability ${String(raw.availability).slice(0, 40)}`);
  return { item_id, status: warnings.length ? 'warning' : 'approved', reasons: warnings, data: raw };
}
