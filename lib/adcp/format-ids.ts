import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { describeIssues } from '../../core/validation.ts';
import type { FormatRef } from '../../core/ports/inventory.ts';
import { normalizeAgentUrl } from '../urls.ts';

/** A structured format id; a bare string is INVALID_FORMAT_ID (checked by the tasks). */
export const formatId = v.object({
  agent_url: v.pipe(v.string('is required'), v.maxLength(2048), v.url('must be an absolute URL')),
  id: v.pipe(v.string('is required'), v.regex(/^[a-zA-Z0-9_-]{1,128}$/, 'must match ^[a-zA-Z0-9_-]+$')),
  width: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  height: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  duration_ms: v.optional(v.pipe(v.number(), v.minValue(1))),
});
export type FormatIdInput = v.InferOutput<typeof formatId>;

/**
 * Format ids are `{agent_url, id}` objects: a bare string (or any malformed id) is
 * INVALID_FORMAT_ID naming the field, as the creative protocol requires.
 */
export function structuredFormatId(raw: unknown, field: string): FormatRef {
  if (typeof raw === 'string') {
    throw new ProtocolError('INVALID_FORMAT_ID', `${field}: a format id is an object {agent_url, id}, not the string "${raw.slice(0, 64)}"`, {
      field,
      suggestion: 'Send {agent_url, id} as returned by get_products or list_creative_formats',
    });
  }
  const parsed = v.safeParse(formatId, raw);
  if (!parsed.success) {
    const { message, field: at } = describeIssues(parsed.issues, field);
    throw new ProtocolError('INVALID_FORMAT_ID', message, { field: at });
  }
  return { agent_url: parsed.output.agent_url, id: parsed.output.id };
}

export const structuredFormatIds = (list: readonly unknown[], field: string): FormatRef[] => list.map((f, i) => structuredFormatId(f, `${field}[${i}]`));

/** The key a format id is compared by: the agent URL normalized, then the id. */
export const formatKey = (f: FormatRef) => `${normalizeAgentUrl(f.agent_url) ?? f.agent_url}#${f.id}`;

/** A creative of format `key` fits a package taking `formatIds` (none listed: any format). */
export const fitsFormats = (formatIds: readonly FormatRef[], key: string): boolean => formatIds.length === 0 || formatIds.some((f) => formatKey(f) === key);
