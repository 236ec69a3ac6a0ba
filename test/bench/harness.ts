/** Shared pieces of the HTTP benchmarks: spawn servers, wait for readiness, run the load generator. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface LoadResult {
  requests: number;
  /** Requests of the unmeasured warm-up second before them. */
  warmup_requests: number;
  errors: number;
  rps: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
}

export interface Spawned {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Spawn `bun [...bunArgs] <script> ...args` (or `[...launcher] <script> ...args`: another runtime); the
 * script prints `READY <port>` on stdout once it serves (or a line `ready` matches, its first group the
 * port: a server that is not ours).
 */
export async function spawnServer(
  script: string,
  args: string[] = [],
  env: Record<string, string> = {},
  options: { ready?: RegExp; bunArgs?: string[]; launcher?: string[] } = {},
): Promise<Spawned> {
  const ready = options.ready ?? /READY (\d+)/;
  const proc = Bun.spawn([...(options.launcher ?? ['bun', ...(options.bunArgs ?? [])]), script, ...args], {
    stdout: 'pipe',
    stderr: 'inherit',
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
  });
  const reader = proc.stdout.getReader();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`${script} exited before it was ready`);
    buffered += new TextDecoder().decode(value);
    const match = ready.exec(buffered);
    if (match) {
      // Keep draining stdout so the child never blocks on a full pipe.
      void (async () => {
        while (!(await reader.read()).done);
      })();
      return {
        port: Number(match[1]),
        pid: proc.pid,
        async stop() {
          proc.kill('SIGTERM');
          await proc.exited;
        },
      };
    }
  }
}

export async function load(
  url: string,
  options: { concurrency?: number; seconds?: number; method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<LoadResult> {
  const args = [join(import.meta.dir, 'load.ts'), url, String(options.concurrency ?? 64), String(options.seconds ?? 5)];
  if (options.method || options.headers) args.push(options.method ?? 'GET', options.body ?? '');
  if (options.headers) args.push(JSON.stringify(options.headers));
  const proc = Bun.spawn(['bun', ...args], { stdout: 'pipe', stderr: 'inherit' });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  return JSON.parse(out.trim().split('\n').pop()!);
}

/** The 1, 5 and 15 minute load averages (Linux /proc), to print beside figures taken on a shared machine. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/**
 * CPU time (user + system, all threads) a process has used so far, in ms (Linux /proc; the ticks
 * are 1/100 s); `children`: that of its children it has waited for (a finished load generator's).
 */
export function cpuMs(pid: number | 'self', children = false): number {
  // Fields after the command name, which is in parentheses and may hold spaces: utime, stime, cutime, cstime are the 12th to 15th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()!.split(' ');
  const at = children ? 13 : 11;
  return (Number(fields[at]) + Number(fields[at + 1])) * 10;
}

/** Resident set size of a process in MB (Linux /proc). */
export async function rssMb(pid: number): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

export function row(label: string, r: LoadResult, baseline?: LoadResult): string {
  const ratio = baseline ? (r.rps / baseline.rps).toFixed(2) : '1.00';
  return `${label.padEnd(44)} ${String(r.rps).padStart(8)} req/s  p50 ${r.p50_ms.toFixed(2).padStart(6)} ms  p95 ${r.p95_ms.toFixed(2).padStart(6)} ms  errors ${r.errors}  ratio ${ratio}`;
}

/**
 * The raw `Bun.serve` baseline a server script offers under `BENCH_TARGET=baseline`: it reads each
 * request body and answers the canned body for its path, then prints `READY <port>`.
 */
export function serveCanned(bodyFor: (path: string) => string, contentType = 'application/json'): void {
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      await req.text();
      return new Response(bodyFor(new URL(req.url).pathname), { headers: { 'content-type': contentType } });
    },
  });
  console.log(`READY ${server.port}`);
}
