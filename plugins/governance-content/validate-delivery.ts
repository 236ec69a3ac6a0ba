import * as v from 'valibot';
import { defineTask } from '../../core/task.ts';
import { ownedStandards } from './access.ts';
import type { ContentDeps } from './deps.ts';
import { policiesOf, renderFeatures } from './evaluate.ts';
import { accountRef, artifact, dateTime, id, nonEmpty, versionFields } from './schemas.ts';

const record = v.looseObject(
  {
    record_id: nonEmpty(256),
    media_buy_id: v.optional(nonEmpty(256)),
    timestamp: v.optional(dateTime),
    artifact,
    country: v.optional(nonEmpty(8)),
    channel: v.optional(nonEmpty(64)),
    brand_context: v.optional(v.looseObject({ brand_id: v.optional(v.string()), sku_id: v.optional(v.string()) })),
  },
  'must be a record {record_id, artifact}',
);

/** validate_content_delivery: judges delivered artifacts after the fact, one verdict per record and a summary. */
export function validateDeliveryTask(deps: ContentDeps) {
  return defineTask({
    name: 'validate_content_delivery',
    description:
      'Judge delivered artifacts (records of {record_id, artifact, channel?}) against a content standards configuration: per-record verdict and policy features, and pass/fail counts. feature_ids narrows the policies judged; include_passed: false leaves passing records out.',
    protocol: 'governance',
    requestSchema: 'content-standards/validate-content-delivery-request.json',
    input: v.looseObject({
      ...versionFields,
      standards_id: id,
      account: v.optional(accountRef),
      records: v.pipe(v.array(record, 'must be an array'), v.minLength(1, 'must not be empty'), v.maxLength(10_000, 'accepts at most 10000 records')),
      feature_ids: v.optional(v.pipe(v.array(nonEmpty(128)), v.minLength(1, 'must not be empty'))),
      include_passed: v.optional(v.boolean()),
    }),
    async handler({ input, principal }) {
      const row = await ownedStandards(deps.db, principal, input.standards_id, input.account);
      const wanted = input.feature_ids ? new Set(input.feature_ids) : undefined;
      const policies = policiesOf(row).filter((p) => !wanted || wanted.has(p.policy_id));
      const results = [];
      let passed = 0;
      for (const r of input.records) {
        const e = await deps.evaluator.evaluate(policies, { artifact: r.artifact, channel: r.channel, country: r.country });
        if (e.verdict === 'pass') passed++;
        if (e.verdict === 'pass' && input.include_passed === false) continue;
        results.push({ record_id: r.record_id, verdict: e.verdict, features: renderFeatures(e) });
      }
      return { summary: { total_records: input.records.length, passed_records: passed, failed_records: input.records.length - passed }, results };
    },
  });
}
