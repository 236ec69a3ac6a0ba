import * as v from 'valibot';
import * as r from '../../lib/response-schemas.ts';

const identifier = r.obj({ type: r.str, value: r.str });

export const catalogEntryOut = r.obj({
  name: r.nul(r.str),
  url: r.str,
  type: r.nul(r.str),
  protocol: r.nul(r.str),
  description: r.nul(r.str),
  contact: r.any,
  member: r.nul(r.obj({ name: r.str })),
  visibility: v.picklist(['public', 'members_only', 'private']),
  operator_domain: r.nul(r.str),
  publisher_domains: r.strings,
  property_summary: r.obj({ property_count: r.int, publisher_count: r.int, channels: r.strings, property_types: r.strings }),
  capabilities: r.opt(
    r.obj({
      creative_capabilities: r.any,
      signals_capabilities: r.any,
      measurement: r.obj({
        metrics: r.arr(r.obj({ metric_id: r.str, accreditations: r.arr(r.obj({ accrediting_body: r.str, verified_by_aao: v.literal(false) })) })),
      }),
      crawled_at: r.nul(r.time),
    }),
  ),
  health: r.opt(
    r.obj({
      status: v.picklist(['healthy', 'degraded', 'unreachable', 'unknown']),
      last_checked_at: r.nul(r.time),
      latency_ms: r.nul(r.int),
      uptime_24h: r.nul(r.num),
      checks_24h: r.int,
    }),
  ),
  compliance: r.opt(r.obj({ status: v.picklist(['compliant', 'non_compliant', 'unknown']), issues: r.arr(r.issue), changed_at: r.nul(r.time) })),
  verification: r.opt(r.obj({ verified: r.bool, badge: r.nul(v.literal('verified')), since: r.nul(r.time) })),
});

export const agentChecksOut = r.obj({
  agent_url: r.str,
  checks: r.arr(
    r.obj({
      checked_at: r.time,
      protocol: r.nul(r.str),
      reachable: r.bool,
      capabilities_answered: r.bool,
      schema_conformant: r.nul(r.bool),
      latency_ms: r.nul(r.int),
      issues: r.arr(r.issue),
      error: r.nul(r.str),
    }),
  ),
});

export const catalogOut = r.obj({ agents: r.arr(catalogEntryOut), count: r.int, has_more: r.bool, cursor: r.nul(r.str) });
export const enrollOut = r.obj({ created: r.bool, agent: catalogEntryOut });
export const removeOut = r.obj({ removed: r.bool, agent_url: r.str });

export const searchOut = r.obj({
  results: r.arr(
    r.obj({
      agent_url: r.str,
      channels: r.strings,
      property_types: r.strings,
      markets: r.strings,
      categories: r.strings,
      tags: r.strings,
      delivery_types: r.strings,
      format_ids: r.arr(r.any),
      property_count: r.int,
      publisher_count: r.int,
      has_tmp: r.bool,
      category_taxonomy: r.nul(r.str),
      relevance_score: r.num,
      matched_filters: r.strings,
      updated_at: r.time,
    }),
  ),
  cursor: r.nul(r.str),
  has_more: r.bool,
});

export const publishersOut = r.obj({
  publishers: r.arr(r.obj({ domain: r.str, has_valid_adagents: r.bool, last_validated: r.nul(r.time), agent_count: r.int, property_count: r.int })),
  count: r.int,
});

export const statsOut = r.obj({
  agents: r.obj({ registered: r.int, discovered: r.int, total: r.int }),
  publishers: r.obj({ total: r.int, with_valid_adagents: r.int }),
  properties: r.obj({ active: r.int, stale: r.int, total: r.int }),
  authorizations: r.int,
  operators: r.int,
});

export const operatorOut = r.obj({
  domain: r.str,
  member: r.nul(r.obj({ name: r.str })),
  agents: r.arr(
    r.obj({
      url: r.str,
      name: r.nul(r.str),
      type: r.nul(r.str),
      visibility: r.str,
      authorized_by: r.arr(r.obj({ publisher_domain: r.str, authorized_for: r.nul(r.str), delegation_types: r.strings, source: r.str })),
    }),
  ),
  publishers: r.strings,
});

export const publisherOut = r.obj({
  domain: r.str,
  source: r.str,
  has_adagents: r.bool,
  adagents_valid: r.bool,
  last_validated: r.nul(r.time),
  contact: r.any,
  validation_errors: r.arr(r.any),
  properties: r.arr(r.obj({ property_rid: r.str, id: r.nul(r.str), type: r.str, name: r.str, identifiers: r.arr(identifier), tags: r.strings, status: r.str })),
  authorized_agents: r.arr(
    r.obj({ url: r.str, authorized_for: r.nul(r.str), authorization_types: r.strings, delegation_types: r.strings, property_count: r.int }),
  ),
});

export const lookupDomainOut = r.obj({
  domain: r.str,
  source: r.opt(v.picklist(['adagents_json', 'hosted'])),
  adagents_valid: r.opt(r.bool),
  authorized_agents: r.arr(r.obj({ url: r.str, authorized_for: r.nul(r.str), delegation_types: r.strings })),
  sales_agents_claiming: r.strings,
  count: r.opt(r.int),
});

const propertyView = r.obj({ property_rid: r.str, id: r.nul(r.str), name: r.str, type: r.str });

export const lookupPropertyOut = r.obj({
  type: r.str,
  value: r.str,
  agents: r.arr(r.obj({ agent_url: r.str, property: propertyView, publisher_domain: r.str, delegation_type: r.nul(r.str), authorized_for: r.nul(r.str) })),
  count: r.int,
});

export const agentDomainsOut = r.obj({ agent_url: r.str, domains: r.strings, count: r.int });

const side = r.obj({ ok: r.bool, reason: r.opt(r.str) });
const failedSide = r.nul(v.picklist(['publisher', 'operator', 'both']));

export const propertyAuthorizationOut = r.obj({
  agent_url: r.str,
  identifier_type: r.str,
  identifier_value: r.str,
  authorized: r.bool,
  failed_side: failedSide,
  property_id: r.opt(r.str),
  property_rid: r.opt(r.str),
  publisher_domain: r.opt(r.str),
  checks: r.obj({ publisher: side, operator: side }),
  checked_at: r.time,
});

export const productAuthorizationOut = r.obj({
  agent_url: r.str,
  authorized: r.bool,
  coverage_percentage: r.num,
  total_requested: r.int,
  total_authorized: r.int,
  selectors: r.arr(
    r.obj({
      publisher_domain: r.str,
      selection_type: r.str,
      total_requested: r.int,
      total_authorized: r.int,
      authorized: r.bool,
      authorized_property_ids: r.strings,
      unauthorized: r.arr(r.obj({ property_id: r.str, failed_side: failedSide, reason: r.nul(r.str) })),
    }),
  ),
  checked_at: r.time,
});

export const expandOut = r.obj({
  agent_url: r.str,
  properties: r.arr(r.obj({ property_rid: r.str, id: r.nul(r.str), name: r.str, type: r.str, publisher_domain: r.str, identifiers: r.arr(identifier) })),
  identifiers: r.arr(r.obj({ type: r.str, value: r.str, property_id: r.str, publisher_domain: r.str })),
  property_count: r.int,
  identifier_count: r.int,
  generated_at: r.time,
});

const verdict = { valid: r.bool, errors: r.arr(r.issue), warnings: r.arr(r.any), agent_count: r.int, property_count: r.int };

export const adagentsValidateOut = r.obj({ success: r.bool, data: r.obj({ domain: r.opt(r.str), ...verdict }), timestamp: r.time });
export const adagentsCreateOut = r.obj({
  success: r.bool,
  data: r.obj({ document: r.anyObject, json: r.str, warnings: r.arr(r.any) }),
  timestamp: r.time,
});
export const propertiesValidateOut = r.obj({ domain: r.str, ...verdict, last_validated: r.nul(r.time) });

export const siteSearchOut = r.obj({
  query: r.str,
  brands: r.arr(r.obj({ domain: r.str, name: r.nul(r.str), source: r.str })),
  publishers: r.arr(r.obj({ domain: r.str, has_valid_adagents: r.bool })),
  properties: r.arr(r.obj({ publisher_domain: r.str, id: r.nul(r.str), name: r.str, type: r.str, identifiers: r.arr(identifier), source: r.str })),
  agents: r.arr(r.obj({ url: r.str, name: r.nul(r.str), type: r.nul(r.str) })),
});

export const manifestRefsOut = r.obj({
  success: r.bool,
  found: r.bool,
  reference: r.opt(
    r.obj({
      reference_type: v.picklist(['url', 'agent']),
      manifest_url: r.nul(r.str),
      agent_url: r.nul(r.str),
      agent_id: r.nul(r.str),
      verification_status: r.str,
    }),
  ),
});

export const collectionsOut = r.obj({
  collections: r.arr(
    r.obj({
      collection_rid: r.str,
      collection_id: r.str,
      publisher_domain: r.str,
      name: r.str,
      kind: r.nul(r.str),
      status: v.picklist(['active', 'removed', 'merged']),
      merged_into: r.nul(r.str),
      distribution: r.arr(r.any),
      updated_at: r.time,
    }),
  ),
  total: r.int,
  limit: r.int,
  offset: r.int,
});

const storyboardStatus = r.obj({
  storyboard_id: r.str,
  title: r.str,
  category: r.nul(r.str),
  track: r.nul(r.str),
  status: v.picklist(['passing', 'failing', 'partial', 'untested']),
  steps_passed: r.int,
  steps_total: r.int,
  failure_count: r.int,
  skipped_count: r.int,
  first_failed_step_id: r.nul(r.str),
  first_failed_step_title: r.nul(r.str),
  last_tested_at: r.nul(r.time),
});

export const agentComplianceOut = r.obj({
  agent_url: r.str,
  status: v.picklist(['passing', 'degraded', 'failing', 'unknown', 'opted_out']),
  lifecycle_stage: r.str,
  compliance_opt_out: r.bool,
  tracks: v.record(v.string(), r.str),
  track_details: r.arr(r.obj({ track: r.str, status: r.str, scenario_count: r.int, passed_count: r.int, duration_ms: r.num })),
  streak_days: r.int,
  last_checked_at: r.nul(r.time),
  last_passed_at: r.nul(r.time),
  last_failed_at: r.nul(r.time),
  headline: r.nul(r.str),
  status_changed_at: r.nul(r.time),
  storyboards_passing: r.int,
  storyboards_total: r.int,
  storyboard_statuses: r.arr(storyboardStatus),
  issues: r.arr(r.any),
});

export const storyboardStatusOut = r.obj({ agent_url: r.str, storyboards: r.arr(storyboardStatus), passing_count: r.int, total_count: r.int });

export const storyboardStatusBulkOut = r.obj({ agents: v.record(v.string(), r.arr(storyboardStatus)), invalid_urls: r.int });
