import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import YAML from 'yaml';
import { Crawler } from '../../core/ports/crawler.ts';
import { Database } from '../../core/ports/database.ts';
import { deploy, forEachAdapter, type Deployed } from '../support/deploy.ts';
import { offlineCrawler, REGISTRY_TOKENS, registryPlugins } from '../support/registry.ts';
import { settledFingerprint, tableFingerprint } from '../support/rows.ts';
import { bodyText, contentType, fromSchema, fuzzSettings, hostileShortString, plausible } from './arbitraries.ts';
import { describe as show, send, type FuzzRequest } from './http.ts';

/**
 * Every endpoint of the served OpenAPI document, with hostile parameters and bodies: no 5xx, no
 * hang, and no row changed by a refused (4xx) request. Bounded for CI (FUZZ_RUNS, a time budget);
 * `bun run fuzz` runs longer. The seed is printed; FUZZ_SEED=<seed> replays a run.
 */

interface Parameter {
  name: string;
  in: 'path' | 'query';
  schema: Record<string, any>;
}
interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body?: Record<string, any>;
}

/** 4xx answers that write by design: a failed ownership verification spends the challenge. */
const WRITES_ON_REFUSAL = new Set(['POST /api/ownership/verify 422']);

const { seed, numRuns } = fuzzSettings(150);
const budgetMs = Number(process.env.FUZZ_BUDGET_MS ?? 12_000);

const token = fc.constantFrom<string | null>(
  null,
  `Bearer ${REGISTRY_TOKENS.member}`,
  `Bearer ${REGISTRY_TOKENS.other}`,
  `Bearer ${REGISTRY_TOKENS.admin}`,
  `Bearer ${REGISTRY_TOKENS.public}`,
  'Bearer not-a-key',
  'Basic dXNlcjpwYXNz',
  `Bearer ${'k'.repeat(600)}`,
);

const queryValue = (schema: Record<string, any>, name: string) =>
  fc
    .oneof({ weight: 3, arbitrary: plausible(schema, name) }, { weight: 1, arbitrary: fromSchema(schema) }, { weight: 1, arbitrary: hostileShortString })
    .map((v) => {
      const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
      return text.slice(0, 300); // long enough to be hostile, short enough for a URL
    });

/** A path segment, percent-encoded; a lone surrogate (not encodable) goes as U+FFFD, as a browser would send it. */
function encodeSegment(text: string): string {
  return [...new TextEncoder().encode(text)]
    .map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
}

function requestFor(op: Operation): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  return fc
    .record({
      path: fc.tuple(
        ...pathParams.map((p) => fc.oneof({ weight: 3, arbitrary: plausible(p.schema, p.name) }, { weight: 1, arbitrary: hostileShortString })),
        fc.constant(null),
      ),
      query: fc.tuple(
        ...queryParams.map((p) =>
          fc.option<string | string[]>(
            p.schema.type === 'array' ? fc.array(queryValue(p.schema.items ?? {}, p.name), { maxLength: 3 }) : queryValue(p.schema, p.name),
            {
              freq: 3,
            },
          ),
        ),
        fc.constant(null),
      ),
      extra: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.tuple(hostileShortString, hostileShortString) }),
      body: bodyText(op.body),
      type: contentType,
      token,
      oversize: fc.oneof(
        { weight: 40, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constantFrom<'declared' | 'chunked'>('declared', 'chunked') },
      ),
    })
    .map((r) => {
      let path = op.path;
      pathParams.forEach((p, i) => {
        path = path.replace(`{${p.name}}`, encodeSegment(String(r.path[i])));
      });
      const search = new URLSearchParams();
      queryParams.forEach((p, i) => {
        const value = r.query[i];
        if (value === null || value === undefined) return;
        for (const v of Array.isArray(value) ? value : [value]) search.append(p.name, v as string);
      });
      if (r.extra) search.append(r.extra[0], r.extra[1]);
      const qs = search.toString();
      const headers: Record<string, string> = {};
      if (r.token) headers.authorization = r.token;
      const hasBody = op.method !== 'GET' && op.method !== 'DELETE';
      if (hasBody && r.type) headers['content-type'] = r.type;
      return {
        method: op.method,
        path: qs ? `${path}?${qs}` : path,
        headers,
        ...(hasBody ? (r.oversize ? { oversize: r.oversize } : { body: r.body }) : {}),
      };
    });
}

forEachAdapter('fuzz: registry endpoints', (adapter) => {
  describe(`fuzz: registry endpoints [${adapter}]`, () => {
    let d: Deployed;
    let ops: Operation[];
    beforeAll(async () => {
      d = await deploy(adapter, registryPlugins(), { serve: true, overrides: [[Crawler, offlineCrawler]] });
      const doc = YAML.parse(await (await fetch(`${d.base}/openapi/registry.yaml`)).text()) as { paths: Record<string, Record<string, any>> };
      ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => ({
          method: method.toUpperCase(),
          path,
          parameters: (op.parameters ?? []) as Parameter[],
          body: op.requestBody?.content?.['application/json']?.schema,
        })),
      );
    });
    afterAll(async () => d?.close());

    test('every endpoint: no 5xx, no hang, no row changed on a 4xx', async () => {
      console.log(`fuzz seed ${seed} (${numRuns} runs, ${budgetMs} ms budget): FUZZ_SEED=${seed} bun run fuzz replays it`);
      expect(ops.length).toBeGreaterThan(30);
      const db = d.deployment.get(Database);
      let before = await tableFingerprint(db, d.schema!);
      const statuses: Record<number, number> = {};
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...ops).chain((op) => requestFor(op).map((r) => ({ op, r }))),
          async ({ op, r }) => {
            const res = await send(d.base!, r);
            statuses[res.status] = (statuses[res.status] ?? 0) + 1;
            if (res.status >= 500) throw new Error(`${res.status} for ${show(r)}: ${res.text.slice(0, 300)}`);
            const after = await tableFingerprint(db, d.schema!);
            if (res.status >= 400 && !WRITES_ON_REFUSAL.has(`${op.method} ${op.path} ${res.status}`)) {
              const changed = Object.keys(after).filter((t) => after[t] !== before[t]);
              if (changed.length) throw new Error(`${res.status} for ${show(r)} changed ${changed.join(', ')}`);
            }
            // A success may have woken background jobs (search index, feed): judge the next call after them.
            before = res.status < 400 ? await settledFingerprint(db, d.schema!, d.deployment.scheduler) : after;
          },
        ),
        { seed, numRuns, interruptAfterTimeLimit: budgetMs, markInterruptAsFailure: false },
      );
      console.log(`fuzz statuses: ${JSON.stringify(statuses)}`);
    });
  });
});
