import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { Principal } from '../../core/ports/auth.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../core/ports/test-controller.ts';
import { canonicalJson } from '../../lib/canonical-json.ts';
import { FORMAT_TYPES } from './formats.ts';

/** Whose seeded formats a call sees: the caller's, under the account its request names. */
export const seedScope = (principal: Principal, account: Readonly<Record<string, unknown>>) => `${principal.id}\n${canonicalJson(account)}`;

/** A page of a scope's seeded formats, in seeding order after `after` (a `seq`); empty when the scope seeded none. */
export async function seededPage(
  db: DatabasePort,
  scope: string,
  limit: number,
  after?: number,
): Promise<{ seq: number; id: string; definition: Record<string, unknown> }[]> {
  const rows = await db.query<{ seq: string; id: string; definition: Record<string, unknown> }>(sql`
    SELECT seq::text, id, definition FROM creative_seeded_formats
    WHERE scope = ${scope}::text ${after === undefined ? sql`` : sql`AND seq > ${after}::bigint`} ORDER BY seq LIMIT ${limit}::int`);
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

/**
 * `seed_creative_format`: a format the caller's list_creative_formats shows under the request's account for
 * the rest of the compliance session (the fixture's name, type, assets, renders; this agent's format id).
 */
export function seedFormatScenario(db: DatabasePort, clock: ClockPort, agentUrl: string): TestScenario {
  return defineScenario({
    name: 'seed_creative_format',
    protocol: 'creative',
    description: 'Seed a creative format for the request account: params {format_id, fixture: {name, type?, assets?, renders?}}',
    params: v.object({
      format_id: v.pipe(v.string(), v.regex(/^[a-zA-Z0-9_-]{1,128}$/, 'must be 1-128 of a-z A-Z 0-9 _ -')),
      fixture: v.optional(
        v.looseObject({
          name: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
          type: v.optional(v.picklist(FORMAT_TYPES, `must be one of ${FORMAT_TYPES.join(', ')}`)),
          assets: v.optional(v.array(v.record(v.string(), v.unknown()))),
          renders: v.optional(v.array(v.record(v.string(), v.unknown()))),
        }),
        {},
      ),
    }),
    async run({ params, principal, account }) {
      if (!account) throw new ScenarioError('INVALID_PARAMS', 'account: name the sandbox account the format is seeded for');
      const { name, type, assets, renders } = params.fixture;
      const definition: Record<string, unknown> = { format_id: { agent_url: agentUrl, id: params.format_id }, name: name ?? params.format_id };
      if (type) definition.type = type;
      if (assets) definition.assets = assets;
      if (renders) definition.renders = renders;
      await db.query(sql`
        INSERT INTO creative_seeded_formats (scope, id, definition, created_at)
        VALUES (${seedScope(principal, account)}::text, ${params.format_id}::text, ${definition}::jsonb, ${clock.now()}::timestamptz)
        ON CONFLICT (scope, id) DO UPDATE SET definition = EXCLUDED.definition`);
      return { kind: 'seed', message: `Format ${params.format_id} seeded` };
    },
  });
}
