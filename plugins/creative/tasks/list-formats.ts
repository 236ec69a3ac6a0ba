import * as v from 'valibot';
import { ProtocolError } from '../../../core/errors.ts';
import { defineTask, type Json } from '../../../core/task.ts';
import { formatIdIssueCode, formatIdSchema } from '../format-id.ts';
import { FORMAT_TYPES } from '../formats.ts';
import { ASSET_TYPES } from '../manifest.ts';
import { localFormatIds, type CreativeContext } from '../context.ts';
import { seededPage, seedScope } from '../seeded-formats.ts';
import { declareMembers, JsonPiece, type JsonPart } from '../../../lib/prebuilt-json.ts';

const pixels = v.optional(v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(100_000)));

export const listFormatsInput = v.object({
  format_ids: v.optional(
    v.pipe(v.array(formatIdSchema, 'must be an array of format ids'), v.minLength(1, 'must not be empty'), v.maxLength(100, 'accepts at most 100 format ids')),
  ),
  type: v.optional(v.picklist(FORMAT_TYPES, `must be one of ${FORMAT_TYPES.join(', ')}`)),
  asset_types: v.optional(
    v.pipe(
      v.array(v.picklist(ASSET_TYPES, `must be one of ${ASSET_TYPES.join(', ')}`), 'must be an array'),
      v.minLength(1, 'must not be empty'),
      v.maxLength(20),
    ),
  ),
  max_width: pixels,
  max_height: pixels,
  min_width: pixels,
  min_height: pixels,
  is_responsive: v.optional(v.boolean('must be true or false')),
  name_search: v.optional(v.pipe(v.string('must be a string'), v.maxLength(200, 'must be at most 200 characters'))),
  /** A sandbox account whose seeded formats (seed_creative_format) are listed instead of the catalog. */
  account: v.optional(v.record(v.string(), v.unknown(), 'must be an account reference')),
  pagination: v.optional(
    v.object({
      max_results: v.optional(
        v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(100, 'must be at most 100')),
      ),
      cursor: v.optional(v.pipe(v.string('must be a string'), v.maxLength(300))),
    }),
  ),
});

/** Opaque keyset cursor: the (position, id) of the last format of a page. */
const encodeCursor = (position: number, id: string) => Buffer.from(JSON.stringify([position, id])).toString('base64url');
function decodeCursor(cursor: string): { position: number; id: string } {
  try {
    const [position, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Number.isInteger(position) && typeof id === 'string' && id.length <= 128) return { position, id };
  } catch {
    // fall through
  }
  throw new ProtocolError('INVALID_REQUEST', 'pagination.cursor: is not a cursor this agent issued', { field: 'pagination.cursor' });
}

/** A format's JSON, serialized once per definition (the catalog's are read-only; a reload brings new ones). */
const pieces = new WeakMap<object, JsonPiece>();
const [OPEN, COMMA, CLOSE] = ['[', ',', ']'].map(JsonPiece.text) as [JsonPiece, JsonPiece, JsonPiece];
function pieceOf(wire: object): JsonPiece {
  let piece = pieces.get(wire);
  if (!piece) pieces.set(wire, (piece = JsonPiece.of(wire)));
  return piece;
}

export function listFormatsTask(ctx: CreativeContext) {
  const local = localFormatIds(ctx.agentUrl);
  return defineTask({
    name: 'list_creative_formats',
    description:
      'Formats this creative agent supports (full definitions: assets, renders), filtered by format_ids, type, asset_types, size, responsiveness or name; cursor-paged. Also lists other creative agents it federates.',
    protocol: 'creative',
    // Format discovery is public (AdCP: "No authentication required for list_creative_formats").
    auth: 'optional',
    errorShape: 'creative',
    inputIssueCode: formatIdIssueCode,
    input: listFormatsInput,
    async handler({ input, principal }) {
      const limit = input.pagination?.max_results ?? ctx.pageSize;
      const body: Json = {};
      if (input.account && ctx.seeded) {
        // A sandbox account that seeded formats sees exactly those (its compliance session's catalog).
        const scope = seedScope(principal, input.account);
        const after = input.pagination?.cursor ? decodeCursor(input.pagination.cursor).position : undefined;
        const seeded = await seededPage(ctx.db, scope, limit + 1, after);
        if (seeded.length || after !== undefined) {
          body.formats = seeded.slice(0, limit).map((s) => s.definition);
          const last = seeded[limit - 1];
          body.pagination = seeded.length > limit && last ? { has_more: true, cursor: encodeCursor(last.seq, last.id) } : { has_more: false };
          return body;
        }
      }
      // Format ids of other agents match nothing here (they are a filter, not a lookup).
      const ids = input.format_ids?.filter(local).map((f) => f.id);
      const page =
        ids && ids.length === 0
          ? []
          : await ctx.catalog.page({
              ids,
              type: input.type,
              assetTypes: input.asset_types,
              maxWidth: input.max_width,
              maxHeight: input.max_height,
              minWidth: input.min_width,
              minHeight: input.min_height,
              responsive: input.is_responsive,
              nameSearch: input.name_search,
              after: input.pagination?.cursor ? decodeCursor(input.pagination.cursor) : undefined,
              limit: limit + 1,
            });
      const shown = page.slice(0, limit);
      body.formats = shown.map((e) => e.wire);
      if (ctx.creativeAgents.length) body.creative_agents = ctx.creativeAgents;
      const last = page[limit - 1];
      body.pagination = page.length > limit && last ? { has_more: true, cursor: encodeCursor(last.position, last.id) } : { has_more: false };
      // The formats' JSON is serialized once per catalog copy and shared by every answer that lists them.
      const formats: JsonPart[] = [OPEN];
      for (const [i, e] of shown.entries()) {
        if (i) formats.push(COMMA);
        formats.push(pieceOf(e.wire));
      }
      formats.push(CLOSE);
      return declareMembers(body, { formats });
    },
  });
}
