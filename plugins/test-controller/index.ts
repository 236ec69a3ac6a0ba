import * as v from 'valibot';
import { definePlugin } from '../../core/plugin.ts';
import { parseOrThrow } from '../../core/validation.ts';
import { defineTask, Tasks, type Json } from '../../core/task.ts';
import { ScenarioError, TestController, type TestScenario } from '../../core/ports/test-controller.ts';
import { TaskStore } from '../../core/ports/tasks.ts';
import { taskCompletionScenario } from './task-completion.ts';
import { UpstreamOutages } from './upstream-outages.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { join } from 'node:path';

/** Scenarios AdCP 3.0.6 enumerates in `compliance_testing.scenarios` (3.1 accepts any string). */
const SCENARIOS_3_0 = new Set([
  'force_creative_status',
  'force_account_status',
  'force_media_buy_status',
  'force_session_status',
  'simulate_delivery',
  'simulate_budget_spend',
]);

const options = v.object({
  /** The controller serves only when a preset turns it on (sandbox deployments: the test agent). */
  enabled: v.optional(v.boolean(), false),
});

const input = v.looseObject({
  scenario: v.pipe(v.string('is required'), v.regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be a scenario name (snake_case)')),
  params: v.optional(v.record(v.string(), v.unknown(), 'must be an object')),
  // 3.1 sends the caller's sandbox account; 3.0 has no such member. Scenarios act only on sandbox
  // entities of the caller either way, so a reference naming a production account is refused.
  account: v.optional(
    v.looseObject({ sandbox: v.optional(v.literal(true, 'must be true: the controller acts on sandbox accounts only')) }, 'must be an account reference'),
  ),
  adcp_major_version: v.optional(v.pipe(v.number(), v.integer(), v.minValue(3), v.maxValue(3))),
  adcp_version: v.optional(v.pipe(v.string(), v.maxLength(32))),
  ext: v.optional(v.record(v.string(), v.unknown())),
});

/**
 * Deterministic test control (`comply_test_controller`): a buyer forces state transitions and
 * seeds fixtures instead of waiting for real time. Feature plugins contribute the scenarios for
 * their own entities through the TestController port. The task is the `compliance` group: a
 * path-routed mount lists it beside its specialism (`['media_buy', 'compliance']`) and offers the
 * scenarios of its other groups only. Off unless the preset enables it; it never acts on non-sandbox
 * accounts. Failures of a scenario are answered in band (`success: false`, comply-test-controller-
 * response ControllerError) and write nothing.
 */
export default definePlugin({
  name: 'test-controller',
  provides: [TestController],
  deps: { tasks: Tasks, store: TaskStore, db: Database, clock: Clock },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  options,
  env: { TEST_CONTROLLER: { path: 'enabled', type: 'bool' } },
  init({ tasks, store, db, clock }, kernel) {
    const scenarios = new Map<string, TestScenario>();
    const outages = new UpstreamOutages(db, clock);
    kernel.provide(TestController, {
      active: kernel.options.enabled,
      declareUpstreams(...tools) {
        for (const t of tools) outages.tools.add(t);
      },
      upstreamDown: (q, principalId, tool) => outages.down(q, principalId, tool),
      register(...list) {
        for (const s of list) {
          if (scenarios.has(s.name)) throw new Error(`Test scenario "${s.name}" is registered twice`);
          scenarios.set(s.name, s);
        }
      },
    });
    if (!kernel.options.enabled) return;
    scenarios.set('force_task_completion', taskCompletionScenario(store));
    scenarios.set('force_upstream_unavailable', outages.scenario());
    const offered = (protocols?: readonly string[]) =>
      [...scenarios.values()].filter((s) => !protocols || protocols.includes(s.protocol) || !!s.servedWith?.some((p) => protocols.includes(p)));
    tasks.add(
      defineTask({
        name: 'comply_test_controller',
        description:
          'Sandbox only. Force state transitions and seed fixtures: scenario list_scenarios, force_media_buy_status (active, paused, completed, canceled), simulate_delivery, simulate_budget_spend, simulate_impairment, simulate_delayed_report, force_account_status, seed_account, force_signal_activation_status, seed_plan. Send account: {sandbox: true}.',
        // Its own group: a path-routed mount serves it only where its specialism has scenarios.
        protocol: 'compliance',
        // No requestSchema: dereferenced, the published one inlines every task response (about 6 MB).
        failureBody: { success: false, error: 'INVALID_PARAMS' },
        input,
        async handler({ input, principal, protocols }): Promise<Json> {
          if (input.scenario === 'list_scenarios') return { success: true, scenarios: offered(protocols).map((s) => s.name) };
          const scenario = offered(protocols).find((s) => s.name === input.scenario);
          if (!scenario) {
            const elsewhere = scenarios.get(input.scenario);
            if (!elsewhere)
              return {
                success: false,
                error: 'UNKNOWN_SCENARIO',
                error_detail: `Scenario ${input.scenario} is not offered here; list_scenarios names those that are`,
              };
            // A scenario of another path of this deployment: its params are checked as there, and the
            // entity it names cannot be one served here.
            parseOrThrow(elsewhere.params, input.params ?? {}, 'params');
            return {
              success: false,
              error: 'NOT_FOUND',
              error_detail: `Scenario ${input.scenario} acts on ${elsewhere.protocol} entities, which this path does not serve`,
              current_state: null,
            };
          }
          const params = parseOrThrow(scenario.params, input.params ?? {}, 'params');
          try {
            const result = await scenario.run({ params, principal, account: input.account });
            const { kind: _kind, ...body } = result;
            return { success: true, ...body };
          } catch (error) {
            if (!(error instanceof ScenarioError)) throw error;
            const out: Json = { success: false, error: error.code, error_detail: error.message };
            if (error.currentState !== undefined) out.current_state = error.currentState;
            return out;
          }
        },
      }),
    );
    return {
      start() {
        // Capabilities list, per protocol group, the scenarios 3.0 can name (3.0 enumerates them).
        const groups = new Set([...scenarios.values()].map((s) => s.protocol));
        for (const protocol of groups) {
          const names = offered([protocol])
            .map((s) => s.name)
            .filter((n) => SCENARIOS_3_0.has(n));
          if (names.length) tasks.declareCapability({ protocol, block: { compliance_testing: { scenarios: names } } });
        }
      },
    };
  },
});
