import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { describeIssues } from '../../core/validation.ts';
import type { FormatRef } from '../../core/ports/inventory.ts';
import { formatId } from './schemas.ts';

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
