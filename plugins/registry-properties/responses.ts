import * as v from 'valibot';
import * as r from '../../lib/response-schemas.ts';

const identifier = r.obj({ type: r.str, value: r.str });

export const propertyResolution = r.obj({
  publisher_domain: r.str,
  source: r.str,
  authorized_agents: r.arr(r.obj({ url: r.str, authorized_for: r.nul(r.str) })),
  properties: r.arr(r.obj({ id: r.str, type: r.str, name: r.str, identifiers: r.arr(identifier), tags: r.strings })),
  contact: r.nul(r.obj({ name: r.opt(r.str), email: r.opt(r.str) })),
  verified: r.bool,
});

export const propertyRegistryOut = r.obj({
  properties: r.arr(
    r.obj({ domain: r.str, publisher_domain: r.str, source: r.str, property_count: r.int, agent_count: r.int, verified: r.bool, updated_at: r.time }),
  ),
  /** Totals over every publisher matching the query (not only this page). */
  stats: r.obj({ publishers: r.int, properties: r.int, verified: r.int, by_source: v.record(v.string(), r.int) }),
  total: r.int,
  limit: r.int,
  offset: r.int,
});

const checkSummary = r.obj({ total: r.int, remove: r.int, modify: r.int, assess: r.int, ok: r.int });

export const propertyCheckOut = r.obj({
  summary: checkSummary,
  remove: r.arr(r.obj({ input: r.str, canonical: r.str, reason: v.picklist(['duplicate', 'blocked']) })),
  modify: r.arr(r.obj({ input: r.str, canonical: r.str, reason: r.str })),
  assess: r.arr(r.obj({ domain: r.str })),
  ok: r.arr(r.obj({ domain: r.str, source: r.str })),
  report_id: r.str,
});

export const propertyCheckReportOut = r.obj({ report_id: r.str, summary: checkSummary, created_at: r.time, expires_at: r.time });
