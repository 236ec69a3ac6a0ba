import * as v from 'valibot';
import type { IssueCode } from '../../core/validation.ts';

const dimension = v.pipe(
  v.number('must be an integer'),
  v.integer('must be an integer'),
  v.minValue(1, 'must be at least 1'),
  v.maxValue(20_000, 'must be at most 20000'),
);

/** `{agent_url, id}` (plus optional parameters); a bare string fails with INVALID_FORMAT_ID (see formatIdIssueCode). */
export const formatIdSchema = v.pipe(
  v.looseObject(
    {
      agent_url: v.pipe(v.string('is required (the URL of the agent defining the format)'), v.maxLength(2048), v.url('must be an absolute URL')),
      id: v.pipe(v.string('is required'), v.regex(/^[a-zA-Z0-9_-]{1,128}$/, 'must match ^[a-zA-Z0-9_-]{1,128}$')),
      width: v.optional(dimension),
      height: v.optional(dimension),
      duration_ms: v.optional(v.pipe(v.number('must be a number'), v.minValue(1, 'must be at least 1'), v.maxValue(3_600_000, 'must be at most 3600000'))),
    },
    'must be an object {agent_url, id}, not a string',
  ),
  v.check((f) => (f.width === undefined) === (f.height === undefined), 'width and height go together'),
);
export type FormatIdInput = v.InferOutput<typeof formatIdSchema>;

// Every place a format id is expected: format_id, target_format_id, creative_manifest.format_id,
// format_ids[n], target_format_ids[n], requests[n].format_id ... and anything below them.
const FORMAT_ID_FIELD = /(^|\.)(target_)?format_id($|\.)|(^|\.)(target_)?format_ids\[\d+\]($|\.)/;

/** INVALID_FORMAT_ID for any input failure inside a format id (a bare string above all). */
export const formatIdIssueCode: IssueCode = (_issue, field) => (FORMAT_ID_FIELD.test(field) ? 'INVALID_FORMAT_ID' : undefined);
