import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import { adapterNames, DATABASE_URL, dropSchema, uniqueSchema, type AdapterName } from '../support/db.ts';

// The command-line entry points as a person meets them: spawned, with their exit code and output checked.
const ROOT = resolve(import.meta.dir, '../..');
const SCRIPTS = ['admin', 'seed-demo', 'crawl', 'mirror', 'signals', 'sales', 'creative', 'conformance'];

/** Environment of a child: nothing of this test process's database or logging (test/support/setup.ts silences it) unless given. */
function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  const own = ['DATABASE_URL', 'DATABASE_SCHEMA', 'STORAGE', 'DATA_DIR', 'LOG_FORMAT', 'LOG_LEVEL'];
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !own.includes(k)) env[k] = v;
  return { ...env, ...extra };
}

async function run(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000) {
  const child = Bun.spawn(['bun', ...args], { cwd: ROOT, env: childEnv(env), stdout: 'pipe', stderr: 'pipe' });
  const timer = setTimeout(() => child.kill(), timeoutMs);
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Storage variables of a fresh, empty database for a spawned server: a Postgres schema or a PGlite directory. */
function freshStorage(adapter: AdapterName, schema: string, dirs: string[]): Record<string, string> {
  if (adapter === 'postgres') return { STORAGE: 'postgres', DATABASE_URL: DATABASE_URL!, DATABASE_SCHEMA: schema };
  const dir = mkdtempSync(join(tmpdir(), 'cli-test-'));
  dirs.push(dir);
  return { STORAGE: 'pglite', DATA_DIR: dir };
}

/** Whether any migration ran in that database. */
async function migrated(adapter: AdapterName, storage: Record<string, string>, schema: string): Promise<boolean> {
  if (adapter === 'postgres') {
    const sql = postgres(DATABASE_URL!, { max: 1, onnotice: () => {} });
    const [row] = await sql`SELECT to_regclass(${`"${schema}".schema_migrations`}) AS t`;
    await sql.end();
    return row!.t !== null;
  }
  if (!existsSync(join(storage.DATA_DIR!, 'PG_VERSION'))) return false;
  const db = await PGlite.create(storage.DATA_DIR!);
  const { rows } = await db.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
  await db.close();
  return rows[0]!.t !== null;
}

const dirs: string[] = [];
const schemas: Array<[AdapterName, string]> = [];
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  for (const [adapter, schema] of schemas) if (adapter === 'postgres') await dropSchema(adapter, schema);
});

describe('--help', () => {
  for (const script of SCRIPTS) {
    test(`scripts/${script}.ts --help prints its usage and exits 0, touching no database`, async () => {
      // A database URL nothing listens on: had the script tried to open it, it would fail.
      const { code, stdout, stderr } = await run([`scripts/${script}.ts`, '--help'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).toStartWith(`usage: bun run ${script}`);
      expect(stdout).not.toContain('    at ');
    });
  }

  test('bun run start --help prints the usage and the presets instead of "no preset at --help"', async () => {
    for (const flag of ['--help', '-h']) {
      const { code, stdout, stderr } = await run(['hosts/start.ts', flag]);
      expect(code).toBe(0);
      expect(stderr).toBe('');
      expect(stdout).toStartWith('usage: bun run start [preset]');
      expect(stdout).toContain('config/registry.ts');
      expect(stdout).toContain('PROTOCOL_NAMESPACE');
    }
  });

  test('an unknown option is one error line and the usage (exit 2), not a stack', async () => {
    const { code, stderr } = await run(['scripts/admin.ts', '--bogus']);
    expect(code).toBe(2);
    expect(stderr).toStartWith("error: Unknown option '--bogus'");
    expect(stderr).toContain('usage: bun run admin');
    expect(stderr).not.toContain('    at ');
  });
});

for (const adapter of adapterNames()) {
  describe(`servers and logs [${adapter}]`, () => {
    test('a port in use is one line on stderr (exit 1), checked before any migration runs', async () => {
      const holder = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('taken') });
      try {
        const schema = uniqueSchema('cliport');
        schemas.push([adapter, schema]);
        const storage = freshStorage(adapter, schema, dirs);
        const { code, stdout, stderr } = await run(['hosts/start.ts', 'config/registry.ts'], {
          ...storage,
          PORT: String(holder.port),
          HOST: '127.0.0.1',
          WORKERS: '1',
          LOG_FORMAT: 'json',
        });
        expect(code).toBe(1);
        expect(stderr.trim().split('\n')).toEqual([
          `error: port ${holder.port} is already in use on 127.0.0.1: stop the other server or set PORT to a free port`,
        ]);
        expect(stdout).not.toContain('deployment started');
        expect(await migrated(adapter, storage, schema)).toBe(false);
      } finally {
        holder.stop(true);
      }
    });

    test('a start without SECRETS_KEY warns about it once; logs are JSON lines when stdout is not a terminal', async () => {
      const schema = uniqueSchema('clisecrets');
      schemas.push([adapter, schema]);
      const child = Bun.spawn(['bun', 'hosts/start.ts', 'config/registry.ts'], {
        cwd: ROOT,
        env: childEnv({ ...freshStorage(adapter, schema, dirs), PORT: '0', HOST: '127.0.0.1', WORKERS: '1', OWNERSHIP_PROOF: 'off' }),
        stdout: 'pipe',
        stderr: 'pipe',
      });
      let out = '';
      const decoder = new TextDecoder();
      const reader = child.stdout.getReader();
      while (!out.includes('"msg":"listening"')) {
        const { value, done } = await reader.read();
        if (done) break;
        out += decoder.decode(value);
      }
      child.kill('SIGTERM');
      await child.exited;
      const lines = out.trim().split('\n');
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
      expect(lines.some((l) => JSON.parse(l).msg === 'listening')).toBe(true);
      expect(lines.filter((l) => l.includes('SECRETS_KEY')).length).toBe(1);
    }, 60_000);

    test('bun run crawl prints its table with no JSON log lines among the rows', async () => {
      const schema = uniqueSchema('clicrawl');
      schemas.push([adapter, schema]);
      // A name that cannot resolve: the crawl fails at once (2 attempts), and says so in its row.
      const { code, stdout } = await run(['scripts/crawl.ts', 'no-such-publisher.invalid'], freshStorage(adapter, schema, dirs), 120_000);
      expect(code).toBe(1);
      const lines = stdout.trim().split('\n');
      for (const line of lines) expect(line.trimStart().startsWith('{')).toBe(false);
      expect(lines.some((l) => /^no-such-publisher\.invalid\s+FAILED/.test(l))).toBe(true);
    }, 120_000);
  });
}

describe('pretty logs', () => {
  const program = `import { createLogger } from '${ROOT}/core/log.ts'; createLogger('info').info({ answer: 42 }, 'hello from the logger');`;
  const hasScript = Bun.which('script') !== null;

  test('a terminal gets pino-pretty lines (LOG_FORMAT unset)', async () => {
    if (!hasScript) return;
    // util-linux `script` gives the child a pseudo-terminal as stdout.
    const child = Bun.spawn(['script', '-qec', `bun -e "${program.replace(/"/g, '\\"')}"`, '/dev/null'], { cwd: ROOT, env: childEnv({}), stdout: 'pipe' });
    const text = await new Response(child.stdout).text();
    await child.exited;
    expect(text).toContain('hello from the logger');
    expect(text).toMatch(/INFO/);
    expect(text).not.toContain('"msg"');
  });

  test('a pipe gets JSON lines; LOG_FORMAT=pretty forces pretty ones', async () => {
    const json = await run(['-e', program]);
    expect(JSON.parse(json.stdout.trim())).toMatchObject({ msg: 'hello from the logger', answer: 42 });
    const forced = await run(['-e', program.replace("createLogger('info')", "createLogger('info', 'pretty')")]);
    expect(forced.stdout).toContain('hello from the logger');
    expect(forced.stdout).not.toContain('"msg"');
  });
});
