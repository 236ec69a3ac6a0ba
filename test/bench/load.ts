#!/usr/bin/env bun
/**
 * Load generator run in its own process: `bun load.ts <url> <concurrency> <seconds> [method] [body] [headers]`
 * (headers: a JSON object, replacing the default `content-type: application/json` of a POST).
 * Prints one JSON line: {requests, warmup_requests, errors, rps, p50_ms, p95_ms, p99_ms} (the first second's
 * requests warm up and are not measured).
 */
export {};
const [url, concurrencyArg = '64', secondsArg = '5', method = 'GET', body, headersArg] = process.argv.slice(2);
if (!url) throw new Error('usage: load.ts <url> [concurrency] [seconds] [method] [body] [headers]');
const concurrency = Number(concurrencyArg);
const seconds = Number(secondsArg);
const headers: Record<string, string> | undefined = headersArg ? JSON.parse(headersArg) : undefined;
const init: RequestInit = method === 'GET' ? { headers } : { method, body, headers: headers ?? { 'content-type': 'application/json' } };

async function run(until: number, samples: number[] | null) {
  let errors = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        try {
          const res = await fetch(url!, init);
          await res.arrayBuffer();
          if (!res.ok) errors++;
        } catch {
          errors++;
        }
        samples?.push(performance.now() - t);
      }
    }),
  );
  return errors;
}

const warmup: number[] = [];
await run(performance.now() + 1000, warmup); // warm-up: JIT, pools, caches
const samples: number[] = [];
const start = performance.now();
const errors = await run(start + seconds * 1000, samples);
const elapsed = (performance.now() - start) / 1000;
samples.sort((a, b) => a - b);
const pct = (p: number) => Math.round((samples[Math.min(samples.length - 1, Math.floor(samples.length * p))] ?? 0) * 100) / 100;
console.log(
  JSON.stringify({
    requests: samples.length,
    warmup_requests: warmup.length,
    errors,
    rps: Math.round(samples.length / elapsed),
    p50_ms: pct(0.5),
    p95_ms: pct(0.95),
    p99_ms: pct(0.99),
  }),
);
