import * as v from 'valibot';
import { domainSchema } from '../../lib/domain.ts';
import { qInt } from '../../core/endpoint.ts';
import { IDENTIFIER_TYPES, PROPERTY_TYPES } from '../../lib/adcp/property-vocabularies.ts';

const text = (max: number) =>
  v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(max, `must be at most ${max} characters`));

const agentUrl = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.maxLength(2048, 'must be at most 2048 characters'),
  v.url('must be a URL'),
  v.regex(/^https:\/\//i, 'must be an https URL'),
);

const property = v.object({
  id: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9_-]{1,100}$/, 'must be 1-100 of a-z, 0-9, _ or -'))),
  type: v.picklist(PROPERTY_TYPES, `must be one of ${PROPERTY_TYPES.join(', ')}`),
  name: text(300),
  identifiers: v.optional(
    v.pipe(
      v.array(v.object({ type: v.picklist(IDENTIFIER_TYPES, `must be one of ${IDENTIFIER_TYPES.join(', ')}`), value: text(500) })),
      v.maxLength(100, 'accepts at most 100 identifiers'),
    ),
  ),
  tags: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^[a-z0-9_-]{1,64}$/, 'must be 1-64 of a-z, 0-9, _ or -'))), v.maxLength(50))),
});

export const saveBody = v.object({
  publisher_domain: domainSchema(),
  authorized_agents: v.pipe(
    v.array(v.object({ url: agentUrl, authorized_for: v.optional(text(500)) }), 'must be an array'),
    v.maxLength(200, 'accepts at most 200 agents'),
  ),
  properties: v.optional(v.pipe(v.array(property, 'must be an array'), v.maxLength(1000, 'accepts at most 1000 properties'))),
  contact: v.optional(v.object({ name: v.optional(text(200)), email: v.optional(v.pipe(text(320), v.email('must be an email address'))) })),
  edit_summary: v.optional(text(500)),
});
export type SaveBody = v.InferOutput<typeof saveBody>;

export interface StoredProperty {
  /** Stable registry id of the property (UUID), kept across revisions. */
  rid: string;
  id: string;
  type: string;
  name: string;
  identifiers: Array<{ type: string; value: string }>;
  tags: string[];
}

/** The editable record stored per publisher (and in each revision). */
export interface PropertyData {
  authorized_agents: Array<{ url: string; authorized_for?: string }>;
  properties: StoredProperty[];
  contact?: { name?: string; email?: string };
}

export const registryQuery = v.object({
  search: v.optional(v.pipe(v.string(), v.maxLength(200, 'must be at most 200 characters'))),
  source: v.optional(v.picklist(['hosted', 'adagents_json'], 'must be hosted or adagents_json')),
  limit: qInt(1, 1000, 100),
  offset: qInt(0, 1_000_000, 0),
});
