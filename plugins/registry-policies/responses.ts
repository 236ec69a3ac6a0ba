import * as v from 'valibot';
import * as r from '../../lib/response-schemas.ts';

const summaryFields = {
  policy_id: r.str,
  version: r.str,
  name: r.str,
  description: r.nul(r.str),
  category: v.picklist(['regulation', 'standard']),
  enforcement: v.picklist(['must', 'should', 'may']),
  jurisdictions: r.strings,
  region_aliases: v.record(v.string(), r.strings),
  policy_categories: r.strings,
  channels: r.nul(r.strings),
  governance_domains: r.strings,
  effective_date: r.nul(r.str),
  sunset_date: r.nul(r.str),
  source_url: r.nul(r.str),
  source_name: r.nul(r.str),
  source_type: v.picklist(['registry', 'community']),
  review_status: v.picklist(['pending', 'approved']),
  created_at: r.time,
  updated_at: r.time,
};

export const policySummaryOut = r.obj(summaryFields);
export const policyOut = r.obj({
  ...summaryFields,
  policy: r.str,
  guidance: r.nul(r.str),
  exemplars: r.nul(r.anyObject),
  ext: r.nul(r.anyObject),
  revision_number: r.int,
});

export const policyRegistryOut = r.obj({
  policies: r.arr(policySummaryOut),
  stats: r.obj({ total: r.int, regulation: r.int, standard: r.int }),
  total: r.int,
  limit: r.int,
  offset: r.int,
});

export const policyBulkOut = r.obj({ results: v.record(v.string(), r.nul(policyOut)) });

export const policyHistoryOut = r.obj({
  policy_id: r.str,
  total: r.int,
  revisions: r.arr(r.obj({ revision_number: r.int, editor_name: r.str, edit_summary: r.str, is_rollback: r.bool, created_at: r.time })),
});

export const policySaveOut = r.obj({ success: v.literal(true), message: r.str, policy_id: r.str, revision_number: r.nul(r.int) });
