import { expect, test } from 'bun:test';
import fc from 'fast-check';
import * as sdk from '@modelcontextprotocol/sdk/types.js';
import { INTERNAL_ERROR, INVALID_PARAMS, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../../hosts/shared/mcp-protocol.ts';
import { plainParams } from '../../hosts/shared/mcp-edge.ts';

// The MCP fast path keeps the SDK's protocol schemas (zod) unloaded for the messages nearly every
// client sends: it carries the SDK's constants itself and recognizes params the SDK's schemas accept
// as they are. Both must agree with the SDK, or the wire answers would drift from the SDK's.

test("the fast path's protocol constants are the SDK's", () => {
  expect(LATEST_PROTOCOL_VERSION).toBe(sdk.LATEST_PROTOCOL_VERSION);
  expect([...SUPPORTED_PROTOCOL_VERSIONS]).toEqual([...sdk.SUPPORTED_PROTOCOL_VERSIONS]);
  expect(INVALID_PARAMS).toBe(sdk.ErrorCode.InvalidParams);
  expect(INTERNAL_ERROR).toBe(sdk.ErrorCode.InternalError);
});

const SCHEMAS: Record<string, { safeParse(x: unknown): { success: boolean } }> = {
  initialize: sdk.InitializeRequestSchema,
  'tools/list': sdk.ListToolsRequestSchema,
  'tools/call': sdk.CallToolRequestSchema,
  'tasks/get': sdk.GetTaskRequestSchema,
};

test('what the SDK client sends takes the plain path: initialize, tools/list, tools/call', () => {
  const messages = [
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: sdk.LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'buyer-agent', version: '1.0.0' } },
    },
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} },
        clientInfo: { name: 'c', title: 'C', version: '2' },
      },
    },
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: 'abc' } },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_signals', arguments: { signal_spec: 'sports' } } },
  ];
  for (const m of messages) {
    expect(plainParams(m)).toBe(true);
    expect(SCHEMAS[m.method]!.safeParse(m).success).toBe(true);
  }
});

// Values of every JSON kind, nested a little: most are wrong for the member they land in.
const anyJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 8 }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('listChanged', 'name', 'version', 'title', 'cursor', 'x', '_meta', '__proto__'), tie('value'), { maxKeys: 3 }),
  ),
})).value;
const member = <T>(value: fc.Arbitrary<T>) => fc.option(value, { nil: undefined });
/** Mostly right, sometimes wrong: `right`, or any JSON value. */
const mostly = <T>(right: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 8, arbitrary: right as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: fc.oneof(anyJson, fc.constant(undefined)) });
const str = mostly(fc.string({ maxLength: 8 }));
const rarely = <T>(value: fc.Arbitrary<T>) => fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: value });
const capability = (name: string) =>
  mostly(
    name === 'roots'
      ? fc.record({ listChanged: mostly(fc.boolean()) }, { requiredKeys: [] })
      : fc.oneof({ weight: 6, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.record({ context: fc.constant({}) }) }),
  );
const capabilities = mostly(
  fc
    .subarray(['experimental', 'sampling', 'elicitation', 'roots', 'tasks', 'extensions', 'roots', 'sampling', 'other'], { maxLength: 3 })
    .map((names) => [...new Set(names)])
    .chain((names) => fc.tuple(...names.map((n) => capability(n).map((c) => [n, c] as const))).map((pairs) => Object.fromEntries(pairs))),
);
const clientInfo = mostly(
  fc.record({ name: mostly(str), version: mostly(str), title: member(str), icons: rarely(anyJson), websiteUrl: rarely(str) }, { requiredKeys: [] }),
);

/** Near-valid params of each method, each member right or wrong; and now and then another method's. */
const PARAMS: Record<string, fc.Arbitrary<unknown>> = {
  initialize: fc.record(
    { protocolVersion: str, capabilities, clientInfo, _meta: rarely(anyJson) },
    { requiredKeys: ['protocolVersion', 'capabilities', 'clientInfo'] },
  ),
  'tools/list': fc.oneof(fc.constant(undefined), fc.record({ cursor: str, _meta: rarely(anyJson) }, { requiredKeys: [] }), anyJson),
  'tools/call': fc.record(
    {
      name: str,
      arguments: member(mostly(fc.dictionary(fc.string({ maxLength: 4 }), anyJson, { maxKeys: 3 }))),
      _meta: rarely(anyJson),
      task: rarely(anyJson),
    },
    { requiredKeys: ['name'] },
  ),
  'tasks/get': fc.record({ taskId: str }),
};
const message = fc
  .constantFrom(...Object.keys(PARAMS))
  .chain((method) =>
    fc.tuple(fc.constant(method), fc.oneof({ weight: 6, arbitrary: PARAMS[method]! }, { weight: 1, arbitrary: fc.oneof(...Object.values(PARAMS)) })),
  );

test('params the fast path takes as they are, the SDK schema accepts (random messages)', () => {
  const plain: Record<string, number> = {};
  fc.assert(
    fc.property(message, ([method, p]) => {
      // Through JSON, as the edge sees them (undefined members vanish, __proto__ becomes an own key).
      const m = JSON.parse(JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: p }));
      if (!plainParams(m)) return;
      plain[method] = (plain[method] ?? 0) + 1;
      expect(SCHEMAS[method]!.safeParse(m).success).toBe(true);
    }),
    { numRuns: 5000 },
  );
  // Not vacuous: every method the plain path knows took it for a fair share of the random messages.
  for (const method of ['initialize', 'tools/list', 'tools/call']) expect(plain[method] ?? 0).toBeGreaterThan(100);
});
