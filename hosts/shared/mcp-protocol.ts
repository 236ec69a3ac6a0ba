/**
 * What the MCP fast path needs from `@modelcontextprotocol/sdk/types.js` on every request: a few
 * constants, kept here because that module builds every protocol schema (zod) when it loads, about
 * 19 MB of resident memory. test/hosts/mcp-protocol.test.ts holds these equal to the SDK's. The
 * schemas themselves load on the first request that needs them (`sdkTypes`).
 */

/** `LATEST_PROTOCOL_VERSION` of the SDK: the version answered to a client asking for an unsupported one. */
export const LATEST_PROTOCOL_VERSION = '2025-11-25';
/** `SUPPORTED_PROTOCOL_VERSIONS` of the SDK. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [LATEST_PROTOCOL_VERSION, '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];
/** JSON-RPC error codes (the SDK's `ErrorCode`). */
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

let types: Promise<typeof import('@modelcontextprotocol/sdk/types.js')> | null = null;

/** The SDK's protocol schemas, loaded once, on first use. */
export function sdkTypes(): Promise<typeof import('@modelcontextprotocol/sdk/types.js')> {
  types ??= import('@modelcontextprotocol/sdk/types.js');
  return types;
}
