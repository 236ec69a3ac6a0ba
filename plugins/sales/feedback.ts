import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { SalesDeps } from './deps.ts';
import { timestamp, versionFields } from '../../lib/adcp/request-fields.ts';
import { loadBuy, loadPackages } from './buys/store.ts';

const METRIC_TYPES = [
  'overall_performance',
  'conversion_rate',
  'brand_lift',
  'click_through_rate',
  'completion_rate',
  'viewability',
  'brand_safety',
  'cost_efficiency',
] as const;
const SOURCES = ['buyer_attribution', 'third_party_measurement', 'platform_analytics', 'verification_partner'] as const;
const ref = v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(128, 'must be at most 128 characters'));

interface FeedbackRow {
  feedback_id: string;
  media_buy_id: string;
  package_id: string | null;
  creative_id: string | null;
  period_start: Date;
  period_end: Date;
  performance_index: string;
  metric_type: string;
  feedback_source: string;
  status: string;
  submitted_at: Date;
}

/** core/performance-feedback.json, as get_media_buys lists it (`performance_feedback`). */
export function renderFeedback(r: FeedbackRow): Json {
  const out: Json = {
    feedback_id: r.feedback_id,
    media_buy_id: r.media_buy_id,
    measurement_period: { start: new Date(r.period_start).toISOString(), end: new Date(r.period_end).toISOString() },
    performance_index: Number(r.performance_index),
    metric_type: r.metric_type,
    feedback_source: r.feedback_source,
    status: r.status,
    submitted_at: new Date(r.submitted_at).toISOString(),
  };
  if (r.package_id) out.package_id = r.package_id;
  if (r.creative_id) out.creative_id = r.creative_id;
  return out;
}

export function providePerformanceFeedbackTask(deps: SalesDeps) {
  return defineTask({
    name: 'provide_performance_feedback',
    description:
      'Tell the seller how a media buy (or one of its packages or creatives) performed over a period, as an index (1.0 = expected). Stored with the buy and listed in get_media_buys performance_feedback.',
    protocol: 'media_buy',
    requestSchema: 'media-buy/provide-performance-feedback-request.json',
    mutating: true,
    // Database only: the feedback row commits with the idempotency record.
    transactional: true,
    input: v.looseObject({
      ...versionFields,
      media_buy_id: ref,
      measurement_period: v.pipe(
        v.looseObject({ start: timestamp, end: timestamp }, 'must be an object {start, end}'),
        v.forward(
          v.check((p) => new Date(p.end) >= new Date(p.start), 'must not be before start'),
          ['end'],
        ),
      ),
      performance_index: v.pipe(
        v.number('must be a number'),
        v.finite('must be finite'),
        v.minValue(0, 'must be at least 0'),
        v.maxValue(1000, 'must be at most 1000'),
      ),
      package_id: v.optional(ref),
      creative_id: v.optional(ref),
      metric_type: v.optional(v.picklist(METRIC_TYPES, `must be one of ${METRIC_TYPES.join(', ')}`), 'overall_performance'),
      feedback_source: v.optional(v.picklist(SOURCES, `must be one of ${SOURCES.join(', ')}`), 'buyer_attribution'),
    }),
    async handler({ input, principal, clock, ids, tx }) {
      const q = tx ?? deps.db;
      const now = clock.now();
      const buy = await loadBuy(q, input.media_buy_id, principal.orgId);
      if (!buy || buy.status === 'pending_review') {
        throw new ProtocolError('MEDIA_BUY_NOT_FOUND', `No media buy ${input.media_buy_id.slice(0, 128)} for this caller`, {
          status: 404,
          field: 'media_buy_id',
        });
      }
      if (new Date(input.measurement_period.start) > now) {
        throw new ProtocolError('INVALID_REQUEST', 'measurement_period.start: is in the future', { field: 'measurement_period.start' });
      }
      if (input.package_id && !(await loadPackages(q, [buy.media_buy_id])).get(buy.media_buy_id)!.some((p) => p.package_id === input.package_id)) {
        throw new ProtocolError('PACKAGE_NOT_FOUND', `No package ${input.package_id.slice(0, 128)} in media buy ${buy.media_buy_id}`, {
          status: 404,
          field: 'package_id',
        });
      }
      if (input.creative_id) {
        const found = (await deps.creatives.formatKeys(q, buy.account_id, [input.creative_id])).has(input.creative_id);
        if (!found)
          throw new ProtocolError('CREATIVE_NOT_FOUND', `No creative ${input.creative_id.slice(0, 128)} in the account library`, {
            status: 404,
            field: 'creative_id',
          });
      }
      await q.query(sql`INSERT INTO sales_performance_feedback (feedback_id, media_buy_id, package_id, creative_id, period_start, period_end, performance_index,
          metric_type, feedback_source, status, submitted_at)
        VALUES (${`fb_${ids.uuid7().replace(/-/g, '')}`}::text, ${buy.media_buy_id}::text, ${input.package_id ?? null}::text, ${input.creative_id ?? null}::text,
          ${input.measurement_period.start}::timestamptz, ${input.measurement_period.end}::timestamptz, ${input.performance_index}::numeric,
          ${input.metric_type}::text, ${input.feedback_source}::text, 'accepted', ${now}::timestamptz)`);
      const body: Json = { success: true };
      if (deps.options.sandbox || buy.sandbox) body.sandbox = true;
      return body;
    },
  });
}
