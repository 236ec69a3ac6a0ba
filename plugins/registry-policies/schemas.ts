import * as v from 'valibot';
import { qInt } from '../../core/endpoint.ts';

const text = (max: number) =>
  v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(max, `must be at most ${max} characters`));
const token = v.pipe(v.string('must be a string'), v.trim(), v.regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be a short code (letters, digits, _ . : -)'));
const tokens = v.pipe(v.array(token, 'must be an array of codes'), v.maxLength(100, 'lists at most 100 codes'));
/** ISO 8601 calendar date (YYYY-MM-DD), or a full timestamp. */
const date = v.pipe(
  v.string('must be a string'),
  v.regex(/^\d{4}-\d{2}-\d{2}(T[0-9:.]+(Z|[+-]\d{2}:\d{2}))?$/, 'must be an ISO 8601 date (YYYY-MM-DD)'),
  v.check((s) => !Number.isNaN(Date.parse(s)), 'must be a real date'),
);
const httpUrl = v.pipe(
  v.string('must be a string'),
  v.maxLength(2048),
  v.check((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password;
    } catch {
      return false;
    }
  }, 'must be an http:// or https:// URL'),
);
const exemplar = v.object({ scenario: text(2000), explanation: text(2000) });

export const CATEGORIES = ['regulation', 'standard'] as const;
export const ENFORCEMENT = ['must', 'should', 'may'] as const;

export const policyId = v.pipe(
  v.string('is required'),
  v.trim(),
  v.regex(/^[a-z0-9][a-z0-9_]{0,127}$/, 'must be lowercase letters, digits and underscores (at most 128)'),
);

/** `POST /api/policies/save`: what a community contributor may set. */
export const saveBody = v.object({
  policy_id: policyId,
  version: v.pipe(v.string('is required'), v.trim(), v.regex(/^[0-9A-Za-z][0-9A-Za-z.+-]{0,39}$/, 'must be a version such as 1.0.0')),
  name: text(200),
  category: v.picklist(CATEGORIES, 'must be regulation or standard'),
  enforcement: v.picklist(ENFORCEMENT, 'must be must, should or may'),
  policy: text(20_000),
  description: v.optional(text(2000)),
  jurisdictions: v.optional(tokens),
  region_aliases: v.optional(
    v.pipe(
      v.record(token, tokens),
      v.check((r) => Object.keys(r).length <= 50, 'has at most 50 aliases'),
    ),
  ),
  policy_categories: v.optional(tokens),
  channels: v.optional(tokens),
  effective_date: v.optional(date),
  sunset_date: v.optional(date),
  governance_domains: v.optional(tokens),
  source_url: v.optional(httpUrl),
  source_name: v.optional(text(200)),
  guidance: v.optional(text(20_000)),
  exemplars: v.optional(
    v.object({
      pass: v.optional(v.pipe(v.array(exemplar), v.maxLength(50))),
      fail: v.optional(v.pipe(v.array(exemplar), v.maxLength(50))),
    }),
  ),
  ext: v.optional(v.record(v.string(), v.unknown())),
  edit_summary: v.optional(text(500)),
});
export type SaveBody = v.InferOutput<typeof saveBody>;
/** What is stored: the saved body without the policy id and the edit summary. */
export type PolicyData = Omit<SaveBody, 'policy_id' | 'edit_summary'>;

export const registryQuery = v.object({
  search: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(200))),
  category: v.optional(v.picklist(CATEGORIES, 'must be regulation or standard')),
  enforcement: v.optional(v.picklist(ENFORCEMENT, 'must be must, should or may')),
  jurisdiction: v.optional(token),
  policy_category: v.optional(token),
  domain: v.optional(token),
  limit: qInt(1, 1000, 20),
  offset: qInt(0, 1_000_000, 0),
});

export const resolveQuery = v.object({ policy_id: policyId, version: v.optional(v.pipe(v.string(), v.maxLength(40))) });

export const bulkBody = v.object({
  policy_ids: v.pipe(
    v.array(v.pipe(v.string('must be a string'), v.maxLength(128)), 'must be an array of policy ids'),
    v.minLength(1, 'must list at least one policy id'),
    v.maxLength(100, 'accepts at most 100 policy ids'),
  ),
});

export const historyQuery = v.object({ policy_id: policyId, limit: qInt(1, 100, 20), offset: qInt(0, 1_000_000, 0) });
