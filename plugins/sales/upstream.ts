import { upstreamUnavailable } from '../../lib/adcp/sandbox-directives.ts';
import type { SalesDeps } from './deps.ts';

/** The seller's tools that call its ad server (the upstream force_upstream_unavailable cuts off in a sandbox). */
export const AD_SERVER_TOOLS = ['create_media_buy', 'update_media_buy', 'get_media_buy_delivery'] as const;

/** SERVICE_UNAVAILABLE (transient) when a sandbox outage cuts this caller off the ad server for `tool`; nothing is written. */
export async function requireAdServer(deps: SalesDeps, principalId: string, tool: (typeof AD_SERVER_TOOLS)[number]): Promise<void> {
  if (deps.upstreamDown && (await deps.upstreamDown(principalId, tool))) throw upstreamUnavailable(tool, 'the ad server');
}
