/**
 * The creative agent over MCP (Streamable HTTP, SSE answers): `list_creative_formats` (all 69
 * formats, one page) and `preview_creative` (a batch of 10 manifests, previews stored), requests/s
 * and p50/p95 against a raw Bun.serve answering the same bytes, measured in the same run. Runs on
 * PGlite, and on Postgres when DATABASE_URL is set. Servers run in their own processes; the load
 * comes from this one.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_AGENT_URL, BENCH_TOKEN } from './creative-server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${BENCH_TOKEN}` };

const rpc = (name: string, args: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
const nativeManifest = (i: number) => ({
  format_id: { agent_url: BENCH_AGENT_URL, id: 'native_standard' },
  assets: {
    title: { asset_type: 'text', content: `Rocket Skates ${i}` },
    description: { asset_type: 'text', content: 'Go faster than the road runner.' },
    main_image: { asset_type: 'image', url: `https://cdn.acme.example/skates-${i}.jpg`, width: 1200, height: 627 },
    cta_text: { asset_type: 'text', content: 'Shop now' },
    sponsored_by: { asset_type: 'text', content: 'Acme Rockets' },
  },
});
const CALLS = {
  list: {
    body: rpc('list_creative_formats', {}),
    check: (t: string) => (t.match(/"format_id":\{"agent_url":"https:\/\/creative\.bench\.example"/g)?.length ?? 0) === 69,
  },
  preview: {
    body: rpc('preview_creative', { request_type: 'batch', requests: Array.from({ length: 10 }, (_, i) => ({ creative_manifest: nativeManifest(i) })) }),
    check: (t: string) => (t.match(/\\"success\\":true/g)?.length ?? 0) === 10,
  },
} as const;

// A failed run must not leave servers behind.
const spawned = new Set<ReturnType<typeof Bun.spawn>>();
process.on('exit', () => {
  for (const p of spawned) p.kill();
});

async function startServer(env: Record<string, string>) {
  const proc = Bun.spawn(['bun', join(import.meta.dir, 'creative-server.ts')], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const reader = proc.stdout.getReader();
  let out = '';
  while (!/READY (\d+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${out}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  spawned.add(proc);
  return { proc, port: Number(/READY (\d+)/.exec(out)![1]) };
}

async function load(url: string, body: string, check: (text: string) => boolean) {
  for (let i = 0; i < 30; i++) {
    const text = await (await fetch(url, { method: 'POST', headers: HEADERS, body })).text();
    if (!check(text)) throw new Error(`unexpected answer: ${text.slice(0, 300)}`);
  }
  const latencies: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const res = await fetch(url, { method: 'POST', headers: HEADERS, body });
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`status ${res.status}`);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  return { rps: Math.round(latencies.length / SECONDS), p50: q(0.5), p95: q(0.95) };
}

const fmt = (r: { rps: number; p50: number; p95: number }) =>
  `${String(r.rps).padStart(6)} req/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p95 ${r.p95.toFixed(1).padStart(6)} ms`;

// Baseline bodies: the real answers' bytes, captured from the agent once.
const sample = await startServer({ BENCH_STORAGE: 'pglite' });
const dir = mkdtempSync(join(tmpdir(), 'bench-creative-'));
let contentType = 'text/event-stream';
for (const [name, call] of Object.entries(CALLS)) {
  const res = await fetch(`http://127.0.0.1:${sample.port}/mcp`, { method: 'POST', headers: HEADERS, body: call.body });
  contentType = res.headers.get('content-type') ?? contentType;
  const text = await res.text();
  if (!call.check(text)) throw new Error(`unexpected ${name} answer: ${text.slice(0, 300)}`);
  writeFileSync(join(dir, `${name}.body`), text);
}
sample.proc.kill();
await sample.proc.exited;
const baseline = await startServer({
  BENCH_TARGET: 'baseline',
  BENCH_LIST_BODY: join(dir, 'list.body'),
  BENCH_PREVIEW_BODY: join(dir, 'preview.body'),
  BENCH_CONTENT_TYPE: contentType,
});
const base = {
  list: await load(`http://127.0.0.1:${baseline.port}/list`, CALLS.list.body, () => true),
  preview: await load(`http://127.0.0.1:${baseline.port}/preview`, CALLS.preview.body, () => true),
};
baseline.proc.kill();
await baseline.proc.exited;

console.log(`creative agent over MCP, ${CONCURRENCY} concurrent clients, ${SECONDS} s per run`);
console.log(`list_creative_formats (69)   baseline raw Bun.serve  ${fmt(base.list)}`);
console.log(`preview_creative batch of 10 baseline raw Bun.serve  ${fmt(base.preview)}`);
const storages = process.env.DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
for (const storage of storages) {
  const server = await startServer({ BENCH_STORAGE: storage });
  const url = `http://127.0.0.1:${server.port}/mcp`;
  const list = await load(url, CALLS.list.body, CALLS.list.check);
  const preview = await load(url, CALLS.preview.body, CALLS.preview.check);
  server.proc.kill();
  await server.proc.exited;
  console.log(`list_creative_formats (69)   agent (${storage.padEnd(8)})       ${fmt(list)}  = ${(list.rps / base.list.rps).toFixed(2)}x raw`);
  console.log(`preview_creative batch of 10 agent (${storage.padEnd(8)})       ${fmt(preview)}  = ${(preview.rps / base.preview.rps).toFixed(2)}x raw`);
}
// Idle keep-alive sockets to the stopped servers would otherwise hold the process open.
process.exit(0);
