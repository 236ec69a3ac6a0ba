/**
 * MEMORY_BUDGET_MB: `bun hosts/start.ts` replaces itself once (same pid) so the engine sizes its
 * heap for the budget (BUN_JSC_forceRAMSize). Real processes, their environment read from /proc.
 */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { freePort } from '../support/loopback.ts';

function environ(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

async function serving(env: Record<string, string>) {
  const port = freePort();
  const base = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: 'memory://', DATABASE_URL: '', LOG_LEVEL: 'silent' };
  delete (base as Record<string, string | undefined>).BUN_JSC_forceRAMSize;
  const proc = Bun.spawn(['bun', 'hosts/start.ts', 'test/fixtures/slow-preset.ts'], { env: { ...base, ...env }, stdout: 'ignore', stderr: 'pipe' });
  for (let i = 0; i < 600; i++) {
    const pid = await fetch(`http://127.0.0.1:${port}/pid`).then(
      async (r) => ((await r.json()) as { pid: number }).pid,
      () => null,
    );
    if (pid !== null) return { proc, pid };
    await Bun.sleep(100);
  }
  proc.kill();
  throw new Error(`no server on ${port}: ${await new Response(proc.stderr).text()}`);
}

test.skipIf(process.platform !== 'linux')(
  '(Linux only: reads /proc) the started process serves with the engine sized for MEMORY_BUDGET_MB (default 512), in the same pid',
  async () => {
    for (const [env, expected] of [
      [{}, String(512 * 1024 * 1024)],
      [{ MEMORY_BUDGET_MB: '256' }, String(256 * 1024 * 1024)],
      [{ MEMORY_BUDGET_MB: '0' }, undefined],
    ] as const) {
      const { proc, pid } = await serving(env);
      try {
        // The process answering is the one started (replaced in place, no parent left behind).
        expect(pid).toBe(proc.pid);
        expect(environ(pid).BUN_JSC_forceRAMSize).toBe(expected);
      } finally {
        proc.kill('SIGTERM');
        await proc.exited;
      }
    }
  },
  120_000,
);

test('a MEMORY_BUDGET_MB that is not a number of megabytes stops start-up with the variable named', async () => {
  const proc = Bun.spawn(['bun', 'hosts/start.ts', 'test/fixtures/slow-preset.ts'], {
    env: { ...process.env, MEMORY_BUDGET_MB: 'lots', PORT: String(freePort()), DATA_DIR: 'memory://', DATABASE_URL: '' },
    stdout: 'ignore',
    stderr: 'pipe',
  });
  expect(await proc.exited).toBe(2);
  expect(await new Response(proc.stderr).text()).toContain('MEMORY_BUDGET_MB: must be a whole number of megabytes');
});

test('importing the module changes nothing: the entry point applies the budget explicitly', () => {
  const env = { ...process.env, MEMORY_BUDGET_MB: '64' } as Record<string, string | undefined>;
  delete env.BUN_JSC_forceRAMSize;
  const module = JSON.stringify(resolve(import.meta.dir, '../../hosts/memory-budget.ts'));
  const out = Bun.spawnSync(['bun', '-e', `await import(${module}); console.log(process.env.BUN_JSC_forceRAMSize ?? 'unset')`], { env });
  expect(out.stdout.toString().trim()).toBe('unset');
});
