/**
 * WORKERS=N: one port served by N processes (SO_REUSEPORT), the primary supervising the others.
 * Real processes started with `bun hosts/start.ts`, real connections (each request on a fresh
 * connection so the kernel spreads them).
 */
import { afterAll, expect, test } from 'bun:test';
import postgres from 'postgres';
import { DATABASE_URL, describePostgres, uniqueSchema } from '../support/db.ts';
import { freePort } from '../support/loopback.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

function start(env: Record<string, string>) {
  const port = freePort();
  const proc = Bun.spawn(['bun', 'hosts/start.ts', 'test/fixtures/slow-preset.ts'], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  let said = '';
  const decoder = new TextDecoder();
  const output = (async () => {
    for await (const chunk of proc.stdout) said += decoder.decode(chunk, { stream: true });
    return said;
  })();
  /** Resolves once the processes have written `text` on stdout `times` times. */
  const heard = (text: string, times: number) => until(`${times} x ${text}`, async () => (said.split(text).length - 1 >= times ? true : undefined));
  const pid = async () => ((await (await fetch(`http://127.0.0.1:${port}/pid`, { headers: { connection: 'close' } })).json()) as { pid: number }).pid;
  /** The distinct pids answering `n` requests, each on its own connection. */
  const pids = async (n: number) => new Set(await Promise.all(Array.from({ length: n }, pid)));
  return { proc, port, output, heard, pid, pids };
}

const schemas: string[] = [];
afterAll(async () => {
  if (!DATABASE_URL || !schemas.length) return;
  const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
  for (const s of schemas) await sql.unsafe(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await sql.end();
});

describePostgres('WORKERS=2 on Postgres', () => {
  test('two processes answer on one port; a killed worker is restarted; SIGTERM drains all of them', async () => {
    const schema = uniqueSchema('workers');
    schemas.push(schema);
    const server = start({ WORKERS: '2', DATABASE_URL: DATABASE_URL!, DATABASE_SCHEMA: schema });
    await until('the primary', server.pid);
    const both = await until('a second process on the port', async () => {
      const seen = await server.pids(40);
      return seen.size === 2 ? seen : undefined;
    });
    expect(both.has(server.proc.pid)).toBe(true);
    const [worker] = [...both].filter((p) => p !== server.proc.pid) as [number];

    // A worker that dies is replaced.
    process.kill(worker, 'SIGKILL');
    const replacement = await until('a replacement worker', async () => {
      const seen = await server.pids(40);
      const fresh = [...seen].find((p) => p !== server.proc.pid && p !== worker);
      return fresh;
    });
    expect(alive(worker)).toBe(false);

    // SIGTERM on the primary: in-flight requests finish, every process exits cleanly.
    const inFlight = Array.from({ length: 8 }, () => fetch(`http://127.0.0.1:${server.port}/slow`, { headers: { connection: 'close' } }));
    await server.heard('slow request in', 8);
    server.proc.kill('SIGTERM');
    for (const res of await Promise.all(inFlight)) expect(await res.json()).toEqual({ done: true });
    expect(await server.proc.exited).toBe(0);
    await until('the worker to exit', async () => (alive(replacement) ? undefined : true), 15_000);
    await expect(fetch(`http://127.0.0.1:${server.port}/pid`)).rejects.toThrow();
  }, 180_000);

  test('a worker whose primary was SIGKILLed exits by itself', async () => {
    const schema = uniqueSchema('workers');
    schemas.push(schema);
    const server = start({ WORKERS: '2', DATABASE_URL: DATABASE_URL!, DATABASE_SCHEMA: schema });
    await until('the primary', server.pid);
    const worker = await until('the worker', async () => [...(await server.pids(40))].find((p) => p !== server.proc.pid));
    server.proc.kill('SIGKILL');
    await server.proc.exited;
    await until('the orphaned worker to exit', async () => (alive(worker) ? undefined : true), 15_000);
  }, 180_000);
});

test('PGlite serves from one process whatever WORKERS says, and says so', async () => {
  const server = start({ WORKERS: '2', DATABASE_URL: '', DATA_DIR: 'memory://' });
  await until('the server', server.pid);
  expect(await server.pids(30)).toEqual(new Set([server.proc.pid]));
  server.proc.kill('SIGTERM');
  expect(await server.proc.exited).toBe(0);
  const warning = (await server.output)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { msg: string; workers?: number })
    .find((l) => /PGlite/.test(l.msg));
  expect(warning).toMatchObject({ workers: 2 });
}, 180_000);
