#!/usr/bin/env bun
/**
 * The registry's agent tools: `resolve_brand` over /mcp (tools/call, one JSON answer) beside
 * GET /api/brands/resolve on the same server, measured in the same run (the REST figure is the
 * baseline: both run the same endpoint definition), on embedded PGlite.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, row, spawnServer } from './harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const dataDir = mkdtempSync(join(tmpdir(), 'bench-mcp-'));
const server = await spawnServer(join(import.meta.dir, 'servers/registry.ts'), [], { DATABASE_URL: '', DATA_DIR: dataDir, OWNERSHIP_PROOF: 'off' });
const base = `http://127.0.0.1:${server.port}`;
console.log(`resolve_brand over /mcp vs GET /api/brands/resolve, ${concurrency} concurrent connections, ${seconds} s per run`);
const rest = await load(`${base}/api/brands/resolve?domain=bench-brand.example`, { concurrency, seconds });
console.log(row('REST GET /api/brands/resolve (baseline)', rest));
const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'resolve_brand', arguments: { domain: 'bench-brand.example' } } });
const mcp = await load(`${base}/mcp`, { concurrency, seconds, method: 'POST', body: call });
console.log(row('MCP tools/call resolve_brand', mcp, rest));
await server.stop();
rmSync(dataDir, { recursive: true, force: true });
