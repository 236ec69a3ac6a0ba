import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { Conversion } from '../../core/ports/ad-server.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { BuyerDataDeps } from './deps.ts';
import { accountRef, timestamp, versionFields } from '../../lib/adcp/request-fields.ts';
import { findPlaintextPii, SHA256_HEX } from './pii.ts';
import { fastAccept, isPlainInput } from '../../lib/fast-accept.ts';

const EVENT_TYPES = [
  'page_view',
  'view_content',
  'select_content',
  'select_item',
  'search',
  'share',
  'add_to_cart',
  'remove_from_cart',
  'viewed_cart',
  'add_to_wishlist',
  'initiate_checkout',
  'add_payment_info',
  'purchase',
  'refund',
  'lead',
  'qualify_lead',
  'close_convert_lead',
  'disqualify_lead',
  'complete_registration',
  'subscribe',
  'follow',
  'content_view',
  'watch_milestone',
  'start_trial',
  'app_install',
  'app_launch',
  'contact',
  'schedule',
  'donate',
  'submit_application',
  'custom',
] as const;
const ACTION_SOURCES = ['website', 'app', 'offline', 'phone_call', 'chat', 'email', 'in_store', 'system_generated', 'other'] as const;
const eventType = v.picklist(EVENT_TYPES, 'must be an event type of enums/event-type.json');
const sourceId = v.pipe(v.string('is required'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'));
const DAY = 86_400_000;
const SERVER_SIDE = 'Send events with log_event naming this event_source_id';

/** The snippet of an event source: a 1x1 pixel a page fires per event (`{EVENT_ID}` dedups), or log_event server-side. */
function pixelSetup(baseUrl: string, pixelId: string, eventTypes: readonly string[] | null): Json {
  const type = eventTypes?.[0] ?? 'page_view';
  const src = `${baseUrl}/events/pixel/${pixelId}?event_type=${type}&event_id={EVENT_ID}`;
  return {
    snippet_type: 'html',
    snippet: `<img src="${src}" width="1" height="1" alt="" style="display:none">`,
    instructions: `Place the pixel where the event happens, with event_type set to the event and {EVENT_ID} replaced by a unique id per event (value= and currency= add its value); or ${SERVER_SIDE.charAt(0).toLowerCase()}${SERVER_SIDE.slice(1)}`,
  };
}

export function syncEventSourcesTask(deps: BuyerDataDeps) {
  return defineTask({
    name: 'sync_event_sources',
    description:
      'Register the conversion event sources (pixels, server-side feeds) of an account, which log_event then reports events against. Without event_sources, lists them.',
    protocol: 'media_buy',
    requestSchema: 'media-buy/sync-event-sources-request.json',
    mutating: true,
    input: v.looseObject({
      ...versionFields,
      account: accountRef,
      event_sources: v.optional(
        v.pipe(
          v.array(
            v.looseObject({
              event_source_id: sourceId,
              name: v.optional(v.pipe(v.string(), v.maxLength(255))),
              event_types: v.optional(v.pipe(v.array(eventType), v.minLength(1, 'must not be empty'))),
              action_source: v.optional(v.picklist(ACTION_SOURCES)),
              allowed_domains: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(253))), v.minLength(1), v.maxLength(100))),
            }),
          ),
          v.minLength(1, 'must not be empty'),
          v.maxLength(100, 'accepts at most 100 event sources'),
          v.check((list) => new Set(list.map((s) => s.event_source_id)).size === list.length, 'lists the same event_source_id twice'),
        ),
      ),
      delete_missing: v.optional(v.boolean()),
    }),
    async handler({ input, principal, clock }) {
      const owner = principal.orgId;
      const account = await deps.accounts.resolve(deps.db, owner, input.account);
      const now = clock.now();
      const sources = await deps.db.transaction(async (tx) => {
        type Row = {
          event_source_id: string;
          account_id: string;
          name: string | null;
          event_types: string[] | null;
          allowed_domains: string[] | null;
          pixel_id: string | null;
        };
        const rows = await tx.query<Row>(sql`SELECT * FROM sales_event_sources WHERE owner = ${owner}::text FOR UPDATE`);
        const mine = new Map(rows.filter((r) => r.account_id === account.account_id).map((r) => [r.event_source_id, r]));
        const render = (r: Pick<Row, 'event_source_id' | 'name' | 'event_types' | 'pixel_id'>, action: string): Json => ({
          event_source_id: r.event_source_id,
          seller_id: `es_${r.event_source_id}`,
          ...(r.name ? { name: r.name } : {}),
          ...(r.event_types ? { event_types: r.event_types } : {}),
          managed_by: 'buyer',
          setup: r.pixel_id ? pixelSetup(deps.options.baseUrl, r.pixel_id, r.event_types) : { snippet_type: 'server_only', instructions: SERVER_SIDE },
          action,
        });
        if (!input.event_sources) return [...mine.values()].map((r) => render(r, 'unchanged'));
        const out: Json[] = [];
        for (const [i, s] of input.event_sources.entries()) {
          const taken = rows.find((r) => r.event_source_id === s.event_source_id && r.account_id !== account.account_id);
          if (taken)
            throw new ProtocolError('CONFLICT', `event_sources[${i}].event_source_id: ${s.event_source_id} belongs to another of your accounts`, {
              field: `event_sources[${i}].event_source_id`,
            });
          const before = mine.get(s.event_source_id);
          const next = {
            event_source_id: s.event_source_id,
            name: s.name ?? before?.name ?? null,
            event_types: s.event_types ?? before?.event_types ?? null,
            allowed_domains: s.allowed_domains ?? before?.allowed_domains ?? null,
            pixel_id: before?.pixel_id ?? `px_${deps.ids.uuid7().replace(/-/g, '')}`,
          };
          const changed =
            !before?.pixel_id ||
            JSON.stringify([before.name, before.event_types, before.allowed_domains]) !== JSON.stringify([next.name, next.event_types, next.allowed_domains]);
          if (changed) {
            await tx.query(sql`INSERT INTO sales_event_sources (owner, event_source_id, account_id, name, event_types, allowed_domains, pixel_id, created_at, updated_at)
              VALUES (${owner}::text, ${s.event_source_id}::text, ${account.account_id}::text, ${next.name}::text, ${next.event_types}::text[], ${next.allowed_domains}::text[],
                      ${next.pixel_id}::text, ${now}::timestamptz, ${now}::timestamptz)
              ON CONFLICT (owner, event_source_id) DO UPDATE SET name = EXCLUDED.name, event_types = EXCLUDED.event_types,
                allowed_domains = EXCLUDED.allowed_domains, pixel_id = COALESCE(sales_event_sources.pixel_id, EXCLUDED.pixel_id), updated_at = EXCLUDED.updated_at`);
          }
          out.push(render(next, !before ? 'created' : changed ? 'updated' : 'unchanged'));
        }
        if (input.delete_missing) {
          const keep = new Set(input.event_sources.map((s) => s.event_source_id));
          for (const r of mine.values()) {
            if (keep.has(r.event_source_id)) continue;
            await tx.query(sql`DELETE FROM sales_event_sources WHERE owner = ${owner}::text AND event_source_id = ${r.event_source_id}::text`);
            out.push(render(r, 'deleted'));
          }
        }
        return out;
      });
      const body: Json = { event_sources: sources };
      if (deps.options.sandbox || account.sandbox) body.sandbox = true;
      return body;
    },
  });
}

const fullEvent = v.pipe(
  v.looseObject({
    event_id: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(256, 'must be at most 256 characters')),
    event_type: eventType,
    event_time: timestamp,
    user_match: v.optional(
      v.looseObject({
        hashed_email: v.optional(v.pipe(v.string(), v.regex(SHA256_HEX, 'must be the SHA-256 digest of the normalized email address: plaintext is refused'))),
        hashed_phone: v.optional(v.pipe(v.string(), v.regex(SHA256_HEX, 'must be the SHA-256 digest of the normalized phone number: plaintext is refused'))),
      }),
    ),
    custom_data: v.optional(
      v.looseObject({
        value: v.optional(v.pipe(v.number('must be a number'), v.finite(), v.minValue(0, 'must be at least 0'), v.maxValue(1e9))),
        currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code'))),
      }),
    ),
    action_source: v.optional(v.picklist(ACTION_SOURCES)),
    event_source_url: v.optional(v.pipe(v.string(), v.maxLength(2048), v.url('must be an absolute URL'))),
    custom_event_name: v.optional(v.pipe(v.string(), v.maxLength(128))),
  }),
  // user_match carries digests and ids: a plaintext email or phone number anywhere in it is refused.
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed || !dataset.value.user_match) return;
    const hit = findPlaintextPii(dataset.value.user_match);
    if (hit !== null)
      addIssue({
        message: 'holds a plaintext email address or phone number: send SHA-256 digests',
        path: [{ type: 'object', origin: 'value', input: dataset.value, key: `user_match.${hit}`, value: undefined }],
      });
  }),
);

const EVENT_TYPE_SET = new Set<string>(EVENT_TYPES);
const ACTION_SOURCE_SET = new Set<string>(ACTION_SOURCES);
const CURRENCY = /^[A-Z]{3}$/;

/**
 * The common event fullEvent accepts as it is (fastAccept): id, type, time, custom_data's value and
 * currency, action_source and custom_event_name checked as the schema checks them, other members
 * passed through. user_match and event_source_url (and anything doubtful) go through the schema.
 */
function acceptsEvent(e: unknown): boolean {
  if (!isPlainInput(e)) return false;
  const id = e.event_id;
  if (typeof id !== 'string' || id.length < 1 || id.length > 256) return false;
  if (typeof e.event_type !== 'string' || !EVENT_TYPE_SET.has(e.event_type)) return false;
  if (typeof e.event_time !== 'string' || !v.ISO_TIMESTAMP_REGEX.test(e.event_time)) return false;
  if (e.user_match !== undefined || e.event_source_url !== undefined) return false;
  const data = e.custom_data;
  if (data !== undefined) {
    if (!isPlainInput(data)) return false;
    const value = data.value;
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1e9)) return false;
    if (data.currency !== undefined && (typeof data.currency !== 'string' || !CURRENCY.test(data.currency))) return false;
  }
  if (e.action_source !== undefined && (typeof e.action_source !== 'string' || !ACTION_SOURCE_SET.has(e.action_source))) return false;
  const name = e.custom_event_name;
  return name === undefined || (typeof name === 'string' && name.length <= 128);
}

/** Events are checked one by one, up to 10 000 per call: the common well-formed one skips valibot's walk. */
export const eventSchema = fastAccept(fullEvent, acceptsEvent);
export const fullEventSchemaForTests = fullEvent;

/** Whether an event names its user: a user_match member with a non-empty value. */
const matchable = (e: { user_match?: Record<string, unknown> }) =>
  Object.values(e.user_match ?? {}).some((x) => (typeof x === 'string' ? x.length > 0 : Array.isArray(x) ? x.length > 0 : x !== null && x !== undefined));

const logEventInput = v.looseObject({
  ...versionFields,
  event_source_id: sourceId,
  test_event_code: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
  events: v.pipe(v.array(eventSchema, 'must be an array of events'), v.minLength(1, 'must not be empty'), v.maxLength(10_000, 'accepts at most 10000 events')),
});

export function logEventTask(deps: BuyerDataDeps) {
  return defineTask({
    name: 'log_event',
    description:
      "Report conversion events against an event source (sync_event_sources). Events are deduplicated by event_id per source; new ones are attributed to the account's media buys serving at the event time and appear as conversions in get_media_buy_delivery. match_quality is the share of valid events carrying a user identifier (user_match). test_event_code marks test events (validated, not attributed).",
    protocol: 'media_buy',
    requestSchema: 'media-buy/log-event-request.json',
    mutating: true,
    input: logEventInput,
    // Database only (attribution writes through the ad server's port, in the call's transaction): one
    // commit for the events, their conversions and the idempotency record.
    transactional: true,
    handler({ input, principal, clock, tx }) {
      // Without the call's transaction (another instance held the key), one of its own.
      return tx
        ? logEvents(deps, input, principal.orgId, clock.now(), tx)
        : deps.db.transaction((own) => logEvents(deps, input, principal.orgId, clock.now(), own));
    },
  });
}

async function logEvents(deps: BuyerDataDeps, input: v.InferOutput<typeof logEventInput>, owner: string, now: Date, tx: Queryable): Promise<Json> {
  const test = input.test_event_code !== undefined;
  const tooLate = now.getTime() + 5 * 60_000;
  const tooEarly = now.getTime() - 90 * DAY;
  // Each event's time is parsed once: for its age here and its attribution below.
  const times = input.events.map((e) => new Date(e.event_time).getTime());
  const ages = times.map((at) => (at > tooLate ? 'event_time is in the future' : at < tooEarly ? 'event_time is more than 90 days old' : null));
  // The source is read by the statement storing the events (one round trip): the events of a valid
  // time go, in order, and the statement keeps those of a type the source tracks, the first per event_id.
  const timely: StoredEvent[] = [];
  for (const [i, e] of input.events.entries()) if (ages[i] === null) timely.push(storedEvent(e));
  const stored = await insertSourceEvents(tx, owner, input.event_source_id, timely, test, now);
  if (!stored) {
    throw new ProtocolError('REFERENCE_NOT_FOUND', `No event source ${input.event_source_id} for this caller`, {
      status: 404,
      field: 'event_source_id',
      suggestion: 'Register it with sync_event_sources',
    });
  }
  const { source, fresh } = stored;
  const failures: Json[] = [];
  const accepted: typeof input.events = [];
  // The new events (fresh: every accepted one when the statement stored all it was given), with their times.
  const kept: Array<{ event: StoredEvent; at: number }> = [];
  const seen = new Set<string>();
  for (const [i, e] of input.events.entries()) {
    const late = ages[i];
    if (source.event_types && !source.event_types.includes(e.event_type))
      failures.push({ event_id: e.event_id, code: 'INVALID_REQUEST', message: `event_type ${e.event_type} is not tracked by this event source` });
    else if (late !== null) failures.push({ event_id: e.event_id, code: 'INVALID_REQUEST', message: late });
    else if (!seen.has(e.event_id)) {
      seen.add(e.event_id);
      accepted.push(e);
      if (fresh === 'all' || fresh.has(e.event_id)) kept.push({ event: storedEvent(e), at: times[i]! });
    }
  }
  if (!test && kept.length) await attribute(deps, tx, owner, { event_source_id: input.event_source_id, account_id: source.account_id }, kept);
  const processed = kept.length;
  const duplicates = input.events.length - failures.length - processed;
  const body: Json = { events_received: input.events.length, events_processed: processed };
  // The share of the batch's valid events that carry a user identifier to match on: one without
  // any (no hashed email or phone, no other user_match id) can be counted but never matched; a
  // batch with no valid event matched nothing (0).
  body.match_quality = accepted.length ? Math.round((accepted.filter(matchable).length / accepted.length) * 100) / 100 : 0;
  if (failures.length) body.partial_failures = failures;
  const warnings: string[] = [];
  if (duplicates) warnings.push(`${duplicates} event(s) repeated an event_id already logged for this source`);
  if (test) warnings.push('Test events: validated and stored, not attributed to delivery');
  if (warnings.length) body.warnings = warnings;
  if (deps.options.sandbox) body.sandbox = true;
  return body;
}

/** A conversion event as stored (log_event's events, or a pixel hit). */
export interface StoredEvent {
  event_id: string;
  event_type: string;
  event_time: string;
  value: number | null;
  currency: string | null;
}

const storedEvent = (e: { event_id: string; event_type: string; event_time: string; custom_data?: { value?: number; currency?: string } }): StoredEvent => ({
  event_id: e.event_id,
  event_type: e.event_type,
  event_time: e.event_time,
  value: e.custom_data?.value ?? null,
  currency: e.custom_data?.currency ?? null,
});

const EVENT_COLUMNS = sql`(event_id text, event_type text, event_time timestamptz, value numeric, currency text)`;

/**
 * log_event's one statement: read the caller's event source and store, of `events` (in order), those
 * of a type it tracks, the first per event_id, skipping an event_id the source logged before.
 * Undefined when the caller has no such source (nothing stored); else the source and the new event_ids.
 */
async function insertSourceEvents(
  tx: Queryable,
  owner: string,
  sourceId: string,
  events: readonly StoredEvent[],
  test: boolean,
  now: Date,
): Promise<{ source: { account_id: string; event_types: string[] | null }; fresh: Set<string> | 'all' } | undefined> {
  const [row] = await tx.query<{ account_id: string; event_types: string[] | null; inserted: string[] | null }>(sql`
    WITH src AS (SELECT account_id, event_types FROM sales_event_sources WHERE owner = ${owner}::text AND event_source_id = ${sourceId}::text),
    ins AS (
      INSERT INTO sales_events (owner, event_source_id, event_id, event_type, event_time, value, currency, test, received_at)
      SELECT DISTINCT ON (x.event_id) ${owner}::text, ${sourceId}::text, x.event_id, x.event_type, x.event_time, x.value, x.currency, ${test}::boolean, ${now}::timestamptz
      FROM src, ROWS FROM (jsonb_to_recordset(${events}::jsonb) AS ${EVENT_COLUMNS})
        WITH ORDINALITY AS x(event_id, event_type, event_time, value, currency, n)
      WHERE src.event_types IS NULL OR x.event_type = ANY(src.event_types)
      ORDER BY x.event_id, x.n
      ON CONFLICT (owner, event_source_id, event_id) DO NOTHING RETURNING event_id)
    SELECT account_id, event_types,
      -- Every event stored (the common batch): no list of ids to send back and parse.
      CASE WHEN (SELECT count(*) FROM ins) = ${events.length}::int THEN NULL ELSE ARRAY(SELECT event_id FROM ins) END AS inserted
    FROM src`);
  return row && { source: { account_id: row.account_id, event_types: row.event_types }, fresh: row.inserted ? new Set(row.inserted) : 'all' };
}

/**
 * Store events of one source in one statement (an event_id the source logged before is skipped) and
 * have the ad server attribute the new ones to the account's buys serving at their times (test
 * events are kept, not attributed). Returns how many were new. In `tx` when given, else in a transaction of its own.
 */
export async function storeEvents(
  deps: BuyerDataDeps,
  tx: Queryable | null,
  owner: string,
  source: { event_source_id: string; account_id: string },
  events: readonly StoredEvent[],
  test: boolean,
  now: Date,
): Promise<number> {
  if (!tx) return deps.db.transaction((own) => storeEvents(deps, own, owner, source, events, test, now));
  const inserted = await tx.query<{
    event_id: string;
  }>(sql`INSERT INTO sales_events (owner, event_source_id, event_id, event_type, event_time, value, currency, test, received_at)
      SELECT ${owner}::text, ${source.event_source_id}::text, x.event_id, x.event_type, x.event_time, x.value, x.currency, ${test}::boolean, ${now}::timestamptz
      FROM jsonb_to_recordset(${events}::jsonb) AS x${EVENT_COLUMNS}
      ON CONFLICT (owner, event_source_id, event_id) DO NOTHING RETURNING event_id`);
  const fresh = new Set(inserted.map((r) => r.event_id));
  if (!test && fresh.size)
    await attribute(
      deps,
      tx,
      owner,
      source,
      events.filter((e) => fresh.has(e.event_id)).map((event) => ({ event, at: new Date(event.event_time).getTime() })),
    );
  return fresh.size;
}

/** Have the ad server attribute new events (`kept`, with their times in ms) to lines of the account's buys serving at their times. */
async function attribute(
  deps: BuyerDataDeps,
  tx: Queryable,
  owner: string,
  source: { event_source_id: string; account_id: string },
  kept: ReadonlyArray<{ event: StoredEvent; at: number }>,
): Promise<void> {
  let from = Infinity;
  let to = -Infinity;
  for (const { at } of kept) {
    if (at < from) from = at;
    if (at > to) to = at;
  }
  const buys = await deps.mediaBuys.servingBetween(tx, source.account_id, new Date(from), new Date(to));
  if (!buys.length) return;
  const conversions: Conversion[] = kept.map(({ event: e, at }) => ({
    key: `${owner}:${source.event_source_id}:${e.event_id}`,
    eventType: e.event_type,
    at: new Date(at),
    ...(e.value !== null ? { value: e.value } : {}),
    ...(e.currency ? { currency: e.currency } : {}),
  }));
  await deps.adServer.recordConversions(tx, buys, conversions);
}
