import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../core/ports/test-controller.ts';

/** How long a forced outage lasts: a compliance session. */
const SESSION_MS = 3600_000;

/** The outages the controller keeps, and the tools whose features declared an upstream. */
export class UpstreamOutages {
  readonly tools = new Set<string>();

  constructor(
    private readonly db: DatabasePort,
    private readonly clock: ClockPort,
  ) {}

  /** Whether this caller's calls to `tool` find its upstream unreachable now. */
  async down(q: Queryable, principalId: string, tool: string): Promise<boolean> {
    const rows = await q.query(sql`SELECT 1 FROM sandbox_upstream_outages
      WHERE principal_id = ${principalId}::text AND tool IN (${tool}::text, '*') AND until > ${this.clock.now()}::timestamptz LIMIT 1`);
    return rows.length > 0;
  }

  /**
   * `force_upstream_unavailable` (3.1): the named tool's upstream (the ad server, an activation platform)
   * is unreachable for the caller's calls for the rest of the session; `*` names every tool with one.
   * A tool of this deployment without an upstream is INVALID_PARAMS, naming those that have one.
   */
  scenario(): TestScenario {
    return defineScenario({
      name: 'force_upstream_unavailable',
      protocol: 'compliance',
      description: "Make the upstream of a tool unreachable for your calls for an hour: params {tool} ('*': every tool with an upstream)",
      params: v.object({ tool: v.pipe(v.string('is required'), v.regex(/^(\*|[a-z][a-z0-9_]{0,63})$/, "must be a tool name or '*'")) }),
      run: async ({ params, principal }) => {
        if (params.tool !== '*' && !this.tools.has(params.tool))
          throw new ScenarioError(
            'INVALID_PARAMS',
            `tool: ${params.tool} calls no upstream here; tools with one: ${[...this.tools].sort().join(', ') || 'none'}`,
          );
        const until = new Date(this.clock.now().getTime() + SESSION_MS);
        await this.db.query(sql`INSERT INTO sandbox_upstream_outages (principal_id, tool, until) VALUES (${principal.id}::text, ${params.tool}::text, ${until}::timestamptz)
          ON CONFLICT (principal_id, tool) DO UPDATE SET until = EXCLUDED.until`);
        return {
          kind: 'transition',
          previous_state: 'available',
          current_state: 'unavailable',
          message: `Upstream of ${params.tool} unreachable for your calls until ${until.toISOString()}`,
        };
      },
    });
  }
}
