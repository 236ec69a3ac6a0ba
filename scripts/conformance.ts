#!/usr/bin/env bun
/**
 * `bun run conformance`: the official AdCP storyboards (the `adcp` CLI of `@adcp/sdk`, pinned in
 * conformance/package.json) against the test agent (config/test-agent.ts, PROTOCOL_NAMESPACE=adcp).
 *
 * For each tenant path, the storyboards that apply are chosen the way the official runner chooses
 * them (from the path's get_adcp_capabilities); each storyboard runs against a test agent started
 * on a fresh database (a new Postgres schema when DATABASE_URL is set, an in-memory PGlite
 * otherwise). A storyboard that another one requires runs inside that one's run, as the runner does.
 * security_baseline gets the operator's test kit its prerequisites ask for (the published test token as
 * `auth.api_key`, a credential-only read of the path as `auth.probe_task`), through the runner's library
 * entry point since the CLI takes no kit. Prints one row per storyboard and path, a total, and exits 1 on any failed step.
 *
 * Options: --storyboards a,b (only these ids or bundle ids), --tenants sales,signals,
 * --storage postgres|pglite, --json FILE (the rows and failures), --verbose (each failure's step), --ci (the
 * subset CI runs, CI_SUBSET).
 */
import { parseArgs } from 'node:util';
import { join, resolve } from 'node:path';
import { existsSync, writeFileSync } from 'node:fs';
import postgres from 'postgres';
import { TENANTS, TEST_TOKEN } from '../config/test-agent.ts';
import { exitOnHelp, parseArgsOrExit } from '../lib/cli.ts';

const ROOT = resolve(import.meta.dir, '..');
const RUNNER_DIR = join(ROOT, 'conformance');
const CLI = join(RUNNER_DIR, 'node_modules/.bin/adcp');

const usage = `usage: bun run conformance [--storyboards a,b] [--tenants sales,signals] [--storage postgres|pglite] [--json FILE] [--verbose] [--ci]

Runs the official AdCP storyboards (the adcp CLI of @adcp/sdk, pinned in conformance/package.json) against
the test agent (config/test-agent.ts, PROTOCOL_NAMESPACE=adcp), one fresh database per storyboard (a Postgres
schema with DATABASE_URL, else in-memory PGlite). Prints one row per storyboard and path; exit 1 on a failed step.

  --storyboards   only these storyboard or bundle ids
  --tenants       only these tenant paths
  --storage       postgres or pglite (default: postgres when DATABASE_URL is set)
  --json FILE     write the rows and failures
  --verbose       each failure's step
  --ci            the subset CI runs`;
exitOnHelp(usage);
const { values: args } = parseArgsOrExit(usage, () =>
  parseArgs({
    options: {
      storyboards: { type: 'string' },
      tenants: { type: 'string' },
      storage: { type: 'string' },
      json: { type: 'string' },
      verbose: { type: 'boolean', default: false },
      ci: { type: 'boolean', default: false },
    },
  }),
);

interface Storyboard {
  id: string;
  requires_scenarios?: string[];
}
interface ResolvedStoryboards {
  storyboards: Storyboard[];
}
interface Compliance {
  resolveStoryboardsForCapabilities(caps: { supported_protocols: string[]; specialisms: string[]; major_versions: number[] }): ResolvedStoryboards;
}

interface StepResult {
  step: string;
  task?: string;
  passed: boolean;
  skipped?: boolean;
  skip_reason?: string;
  warnings?: string[];
  error?: string;
  details?: string;
}
interface RunResult {
  tracks: { scenarios: { scenario: string; steps: StepResult[] }[] }[];
  summary: { steps_passed: number; steps_failed: number; steps_skipped: number };
  failures?: {
    storyboard_id: string;
    step_id: string;
    step_title?: string;
    task?: string;
    error?: string;
    validation?: { description?: string; expected?: unknown; actual?: unknown };
  }[];
}

export interface Row {
  storyboard: string;
  /** The storyboard whose run produced the row: `adcp storyboard run` of it also runs the scenarios it requires. */
  run: string;
  path: string;
  passed: number;
  failed: number;
  skipped: number;
  status: 'pass' | 'fail' | 'skip' | 'error';
  failures: string[];
  skips: string[];
}

if (!existsSync(CLI)) {
  console.error('The conformance runner is not installed: bun install --cwd conformance --frozen-lockfile');
  process.exit(2);
}
const compliance = (await import(join(RUNNER_DIR, 'node_modules/@adcp/sdk/dist/lib/testing/storyboard/compliance.js'))) as Compliance;
const { PROBE_TASK_ALLOWLIST } = (await import(join(RUNNER_DIR, 'node_modules/@adcp/sdk/dist/lib/testing/storyboard/test-kit.js'))) as {
  PROBE_TASK_ALLOWLIST: readonly string[];
};

const storage = args.storage ?? (process.env.DATABASE_URL ? 'postgres' : 'pglite');
if (storage !== 'postgres' && storage !== 'pglite') throw new Error(`--storage: postgres or pglite, not ${storage}`);
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const sql = storage === 'postgres' ? postgres(databaseUrl, { max: 1, onnotice: () => {} }) : null;

/**
 * What CI runs (`--ci`): storyboards that pass with no failed step, one run each, chosen to cover every
 * tenant and the fixes they hold (seeding, sandbox accounts, errors, formats, governance, signing) in a
 * few minutes on two cores. The whole set is `bun run conformance` without options.
 */
const CI_SUBSET: Record<string, string[]> = {
  signals: ['capability_discovery', 'signals_baseline', 'signal_marketplace', 'signal_owned', 'security_baseline', 'webhook_emission'],
  sales: [
    'error_compliance',
    'schema_validation',
    'get_media_buys_pagination_integrity',
    'pagination_integrity_list_accounts',
    'pagination_integrity',
    'creative_sales_agent',
    'v3_envelope_integrity',
    'pagination_integrity_creative_formats',
    'audience_sync',
  ],
  creative: ['creative_template', 'creative_generative', 'creative_lifecycle', 'creative_ad_server', 'security_baseline'],
  governance: [
    'governance_spend_authority/denied',
    'property_lists',
    'collection_lists',
    'pagination_integrity_property_lists',
    'pagination_integrity_collection_lists',
    'content_standards',
    'pagination_integrity_content_standards',
  ],
  brand: ['si_baseline', 'security_baseline', 'deterministic_testing'],
};
const subset = args.ci ? CI_SUBSET : null;
const wanted = args.storyboards ? new Set(args.storyboards.split(',')) : null;
const tenantFilter = args.tenants ? new Set(args.tenants.split(',')) : subset ? new Set(Object.keys(subset)) : null;
const tenants = TENANTS.filter((t) => !tenantFilter || tenantFilter.has(t.id));
const wants = (tenant: string, id: string) => {
  const list = subset ? new Set(subset[tenant] ?? []) : wanted;
  return !list || list.has(id) || [...list].some((w) => id.startsWith(`${w}/`));
};

function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

interface Agent {
  base: string;
  stop(): Promise<void>;
}

let schemaCounter = 0;
/** A test agent on a database nobody used before. */
async function startAgent(): Promise<Agent> {
  const port = freePort();
  const schema = `conformance_${process.pid}_${++schemaCounter}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(port),
    HOST: '127.0.0.1',
    PROTOCOL_NAMESPACE: 'adcp',
    DEV_LOOPBACK_WEBHOOKS: 'true',
    WORKERS: '1',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
  };
  if (sql) {
    await sql.unsafe(`CREATE SCHEMA ${schema}`);
    Object.assign(env, { STORAGE: 'postgres', DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema });
  } else {
    delete env.DATABASE_URL;
    Object.assign(env, { STORAGE: 'pglite', DATA_DIR: 'memory://' });
  }
  const child = Bun.spawn(['bun', join(ROOT, 'hosts/start.ts'), join(ROOT, 'config/test-agent.ts')], {
    cwd: ROOT,
    env,
    stdout: 'ignore',
    stderr: 'pipe',
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`${base}/.well-known/adagents.json`);
      if (res.ok) break;
    } catch {}
    if (child.exitCode !== null || Date.now() > deadline) {
      const err = await new Response(child.stderr).text();
      throw new Error(`test agent did not start: ${err.slice(-2000)}`);
    }
    await Bun.sleep(50);
  }
  return {
    base,
    async stop() {
      child.kill('SIGTERM');
      await child.exited;
      if (sql) await sql.unsafe(`DROP SCHEMA ${schema} CASCADE`);
    },
  };
}

async function capabilities(base: string, tenant: string): Promise<{ supported_protocols: string[]; specialisms: string[] }> {
  const res = await fetch(`${base}/${tenant}/tasks/get_adcp_capabilities`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body: '{}',
  });
  const body = (await res.json()) as { supported_protocols?: string[]; specialisms?: string[] };
  return { supported_protocols: body.supported_protocols ?? [], specialisms: body.specialisms ?? [] };
}

async function tools(base: string, tenant: string): Promise<string[]> {
  const body = (await (await fetch(`${base}/.well-known/adagents.json`)).json()) as { tenants: { id: string; tools: string[] }[] };
  return body.tenants.find((t) => t.id === tenant)?.tools ?? [];
}

/**
 * The operator's test kit a storyboard reads (`$test_kit.*`), where we must declare one: security_baseline's
 * API-key phase runs only with `auth.api_key`, probing `auth.probe_task` (one of the runner's allowed
 * credential-only reads that this path serves; without one the runner probes list_creatives).
 */
function testKit(storyboard: string, served: string[]): object | null {
  if (storyboard !== 'security_baseline') return null;
  const probe = PROBE_TASK_ALLOWLIST.find((t) => served.includes(t));
  return probe ? { auth: { api_key: TEST_TOKEN, probe_task: probe } } : null;
}

/** Runs one storyboard (with the scenarios it requires) and splits its steps by storyboard. */
async function runStoryboard(url: string, id: string, kit: object | null): Promise<Map<string, StepResult[]> | string> {
  // The CLI has no test-kit flag: with a kit, the same runner function through conformance/run-with-test-kit.mjs.
  const command = kit
    ? ['node', join(RUNNER_DIR, 'run-with-test-kit.mjs'), url, id, TEST_TOKEN, JSON.stringify(kit), '180']
    : [CLI, 'storyboard', 'run', url, id, '--allow-http', '--auth', TEST_TOKEN, '--webhook-receiver', '--json', '--timeout', '180'];
  const proc = Bun.spawn(command, { cwd: RUNNER_DIR, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, NO_COLOR: '1' } });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  let result: RunResult;
  try {
    result = JSON.parse(out) as RunResult;
  } catch {
    return `runner gave no result: ${(err || out).trim().split('\n').slice(-3).join(' ')}`;
  }
  const steps = new Map<string, StepResult[]>();
  for (const track of result.tracks ?? []) {
    for (const scenario of track.scenarios) {
      const storyboard = scenario.scenario.slice(0, scenario.scenario.lastIndexOf('/'));
      const list = steps.get(storyboard) ?? [];
      for (const step of scenario.steps) list.push(step);
      steps.set(storyboard, list);
    }
  }
  // Tracks the runner deems not applicable (security, say) leave their steps out of `tracks`: a run
  // of one storyboard then counts from the summary and names its failures from `failures`.
  if (!steps.size && result.summary) {
    const { steps_passed: passed, steps_failed: failed, steps_skipped: skipped } = result.summary;
    const failures = (result.failures ?? []).map<StepResult>((f) => ({
      step: f.step_title ?? f.step_id,
      task: f.task,
      passed: false,
      error: `${f.error ?? ''} ${f.validation ? `${f.validation.description}: expected ${JSON.stringify(f.validation.expected)}, got ${JSON.stringify(f.validation.actual)}` : ''}`,
    }));
    const list: StepResult[] = [...failures];
    for (let i = failures.length; i < failed; i++) list.push({ step: '(unnamed)', passed: false });
    for (let i = 0; i < passed; i++) list.push({ step: '(passed)', passed: true });
    for (let i = 0; i < skipped; i++) list.push({ step: '(skipped)', passed: true, skipped: true, skip_reason: 'counted by the runner' });
    steps.set(id, list);
  }
  return steps;
}

/** Why a step was skipped: the runner's reason, with the tool it missed. */
function skipWhy(step: StepResult): string {
  const tool = step.warnings?.join(' ').match(/did not advertise tool "([^"]+)"/)?.[1];
  return `${step.skip_reason ?? 'no reason given'}${tool ? ` (${tool})` : ''}`;
}

/** What a failed step says: the runner's failed checks, else its error. */
function why(step: StepResult): string {
  const checks = (step.details ?? '').split('; ').filter((d) => d.startsWith('✗'));
  return (checks.length ? checks.join('; ') : (step.error ?? '')).slice(0, 400);
}

function row(storyboard: string, run: string, path: string, steps: StepResult[]): Row {
  const skipped = steps.filter((s) => s.skipped);
  const failed = steps.filter((s) => !s.skipped && !s.passed);
  const passed = steps.length - skipped.length - failed.length;
  return {
    storyboard,
    run,
    path,
    passed,
    failed: failed.length,
    skipped: skipped.length,
    status: failed.length ? 'fail' : passed ? 'pass' : 'skip',
    failures: failed.map((s) => `${s.step}${s.task ? ` (${s.task})` : ''}: ${why(s)}`),
    skips: [...new Set(skipped.map(skipWhy))],
  };
}

const rows: Row[] = [];
for (const tenant of tenants) {
  const path = `/${tenant.id}/mcp`;
  const probe = await startAgent();
  const [caps, served] = await Promise.all([capabilities(probe.base, tenant.id), tools(probe.base, tenant.id)]).finally(() => probe.stop());
  const resolved = compliance.resolveStoryboardsForCapabilities({ ...caps, major_versions: [3] }).storyboards;
  const required = new Set(resolved.flatMap((s) => s.requires_scenarios ?? []));
  const selected = resolved.filter((s) => !required.has(s.id) && wants(tenant.id, s.id));
  for (const storyboard of selected) {
    const agent = await startAgent();
    const started = Date.now();
    try {
      const result = await runStoryboard(`${agent.base}${path}`, storyboard.id, testKit(storyboard.id, served));
      if (typeof result === 'string') {
        rows.push({ storyboard: storyboard.id, run: storyboard.id, path, passed: 0, failed: 1, skipped: 0, status: 'error', failures: [result], skips: [] });
      } else {
        const ids = [storyboard.id, ...(storyboard.requires_scenarios ?? [])];
        for (const id of ids) rows.push(row(id, storyboard.id, path, result.get(id) ?? []));
      }
    } finally {
      await agent.stop();
    }
    const last = rows.at(-1)!;
    console.error(`${storyboard.id} on ${path}: ${last.status} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
}
await sql?.end();

const width = Math.max(...rows.map((r) => r.storyboard.length), 10);
const pathWidth = Math.max(...rows.map((r) => r.path.length), 4);
console.log(`\nAdCP conformance (@adcp/sdk storyboards, storage ${storage})\n`);
console.log(`${'storyboard'.padEnd(width)}  ${'path'.padEnd(pathWidth)}  passed  failed  skipped  status`);
for (const r of rows) {
  console.log(
    `${r.storyboard.padEnd(width)}  ${r.path.padEnd(pathWidth)}  ${String(r.passed).padStart(6)}  ${String(r.failed).padStart(6)}  ${String(r.skipped).padStart(7)}  ${r.status}`,
  );
  if (args.verbose) {
    for (const f of r.failures) console.log(`    FAIL ${f}`);
    for (const s of r.skips) console.log(`    skip ${s}`);
  }
}
const total = rows.reduce((t, r) => ({ passed: t.passed + r.passed, failed: t.failed + r.failed, skipped: t.skipped + r.skipped }), {
  passed: 0,
  failed: 0,
  skipped: 0,
});
console.log(`\ntotal: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped (${rows.length} storyboard runs)`);
if (args.json) writeFileSync(args.json, JSON.stringify({ storage, rows, total }, null, 2));
process.exit(total.failed ? 1 : 0);
