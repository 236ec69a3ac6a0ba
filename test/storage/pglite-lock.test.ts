import { afterAll, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DataDirLockedError, LOCK_FILE, lockDataDir } from '../../plugins/storage-pglite/lock.ts';
import { createPgliteDatabase } from '../../plugins/storage-pglite/index.ts';
import { sharedPglite } from '../support/db.ts';

const root = mkdtempSync(join(tmpdir(), 'pglite-lock-'));
const dir = (name: string) => {
  const d = join(root, name);
  mkdirSync(d, { recursive: true });
  return d;
};
// A live process other than this one, to stand for a running server.
const holder = Bun.spawn(['sleep', '300']);
afterAll(() => {
  holder.kill();
  rmSync(root, { recursive: true, force: true });
});

/** The PID of a process that has exited. */
async function deadPid(): Promise<number> {
  const p = Bun.spawn(['true']);
  await p.exited;
  return p.pid;
}

test('one opener per data directory: a second lock fails at once, saying what to do; release frees it', () => {
  const d = dir('a');
  const release = lockDataDir(d);
  expect(readFileSync(join(d, LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
  expect(statSync(join(d, LOCK_FILE)).mode & 0o777).toBe(0o600);
  expect(() => lockDataDir(d)).toThrow(DataDirLockedError);
  expect(() => lockDataDir(d)).toThrow(`in use by process ${process.pid}`);
  expect(() => lockDataDir(d)).toThrow('stop that server first (or use another DATA_DIR), or run every process against Postgres (DATABASE_URL)');
  release();
  expect(existsSync(join(d, LOCK_FILE))).toBe(false);
  lockDataDir(d)();
});

test('a stale lock (its process is gone, or the file is empty) is taken over', async () => {
  for (const content of [`${await deadPid()}\n`, '']) {
    const d = dir(`stale-${content.length}`);
    writeFileSync(join(d, LOCK_FILE), content);
    const release = lockDataDir(d);
    expect(readFileSync(join(d, LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
    release();
  }
});

test('the adapter takes the lock before PGlite touches the directory: a held directory fails fast', async () => {
  const d = dir('held');
  writeFileSync(join(d, LOCK_FILE), `${holder.pid}\n`);
  const db = createPgliteDatabase({ dataDir: d });
  await expect(db.ping()).rejects.toBeInstanceOf(DataDirLockedError);
  await db.close();
  // Nothing of PGlite's was created: the second opener never read or wrote the files.
  expect(existsSync(join(d, 'PG_VERSION'))).toBe(false);
  expect(readFileSync(join(d, LOCK_FILE), 'utf8').trim()).toBe(String(holder.pid));
});

test('memory:// and a shared instance take no lock', async () => {
  const db = createPgliteDatabase({ dataDir: 'memory://', instance: await sharedPglite() });
  await db.ping();
  await db.close();
  expect(existsSync(resolve('memory:'))).toBe(false);
});

test('`bun run admin` while a server holds the directory: exit 1 with what to do, no stack trace', async () => {
  const d = dir('admin');
  writeFileSync(join(d, LOCK_FILE), `${holder.pid}\n`);
  const env: Record<string, string> = { ...(process.env as Record<string, string>), DATA_DIR: d, STORAGE: 'pglite' };
  delete env.DATABASE_URL;
  const admin = Bun.spawn(['bun', resolve(import.meta.dir, '../../scripts/admin.ts'), 'list-keys', 'Acme'], { env, stderr: 'pipe', stdout: 'pipe' });
  const [code, stderr] = await Promise.all([admin.exited, new Response(admin.stderr).text()]);
  expect(code).toBe(1);
  expect(stderr).toContain(`is in use by process ${holder.pid}`);
  expect(stderr).toContain('stop that server first');
  expect(stderr).not.toContain('    at ');
});
