import * as v from 'valibot';
import { defineTask, type Json } from '../../core/task.ts';
import { readableList } from './access.ts';
import type { ListsDeps } from './deps.ts';
import { PROPERTY } from './kinds.ts';
import { identifierMatcher } from './resolve-properties.ts';
import { accountRef, identifier, listId, listToken, versionFields, type Identifier } from './schemas.ts';

const record = v.strictObject({
  identifier,
  impressions: v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(0, 'must be at least 0')),
  record_id: v.optional(v.pipe(v.string(), v.maxLength(256))),
  sales_agent_url: v.optional(v.pipe(v.string(), v.maxLength(2048), v.url('must be an absolute URL'))),
  ext: v.optional(v.record(v.string(), v.unknown())),
});

/**
 * validate_property_delivery: each delivery record is compliant when its identifier is in the
 * resolved list (domain rules of core/identifier.json: `example.com` covers www. and m., `*.example.com`
 * every subdomain), non_compliant otherwise, with a failed `list_membership` feature naming the list.
 * sales_agent_url is accepted but authorization is not checked (no authorization_summary).
 */
export function validatePropertyDeliveryTask(deps: ListsDeps) {
  return defineTask({
    name: 'validate_property_delivery',
    description:
      'Check delivery records (identifier + impressions) against a property list: per-record compliant / non_compliant with the reason, counts and impressions per status, and an overall compliant flag.',
    protocol: 'governance',
    requestSchema: 'property/validate-property-delivery-request.json',
    input: v.looseObject({
      ...versionFields,
      list_id: listId,
      account: v.optional(accountRef),
      records: v.pipe(
        v.array(record, 'must be an array of delivery records'),
        v.minLength(1, 'must not be empty'),
        v.maxLength(10_000, 'accepts at most 10000 records'),
      ),
      include_compliant: v.optional(v.boolean()),
      auth_token: v.optional(listToken),
    }),
    async handler({ input, principal, clock }) {
      const { row } = await readableList(deps.db, PROPERTY, principal, input.list_id, input.account, input.auth_token);
      const resolution = await PROPERTY.resolve(row.sources, row.filters, deps.catalog);
      const inList = identifierMatcher(resolution.items as unknown as Identifier[]);
      const summary = {
        total_records: 0,
        total_impressions: 0,
        compliant_records: 0,
        compliant_impressions: 0,
        non_compliant_records: 0,
        non_compliant_impressions: 0,
        not_covered_records: 0,
        not_covered_impressions: 0,
        unidentified_records: 0,
        unidentified_impressions: 0,
      };
      const results: Json[] = [];
      for (const r of input.records) {
        const ok = inList(r.identifier);
        summary.total_records++;
        summary.total_impressions += r.impressions;
        const result: Json = { identifier: r.identifier, ...(r.record_id !== undefined ? { record_id: r.record_id } : {}) };
        if (ok) {
          summary.compliant_records++;
          summary.compliant_impressions += r.impressions;
          if (input.include_compliant) results.push({ ...result, status: 'compliant', impressions: r.impressions });
        } else {
          summary.non_compliant_records++;
          summary.non_compliant_impressions += r.impressions;
          results.push({
            ...result,
            status: 'non_compliant',
            impressions: r.impressions,
            features: [
              {
                feature_id: 'list_membership',
                status: 'failed',
                explanation: `${r.identifier.type} ${r.identifier.value} is not in property list ${row.list_id} (${row.name})`,
              },
            ],
          });
        }
      }
      const now = clock.now();
      return {
        compliant: summary.non_compliant_records === 0,
        list_id: row.list_id,
        summary,
        results,
        validated_at: now.toISOString(),
        list_resolved_at: now.toISOString(),
      };
    },
  });
}
