import type { AdServerSimulatedOptions } from '../../../plugins/ad-server-simulated/index.ts';
import type { WebhooksOptions } from '../../../plugins/webhooks/index.ts';

/** Shared by the fault test and its sender process (times are virtual: the clock runs 3600x). */
export const FAULT_AD_SERVER: AdServerSimulatedOptions = { delayMinutes: 0, lateProbability: 0, adjustmentProbability: 0, tickMs: 1000 };
export const FAULT_OUTBOX: NonNullable<WebhooksOptions['outbox']> = {
  workers: true,
  allowHttp: true,
  batchSize: 4,
  pollMs: 20,
  leaseSeconds: 3600,
  timeoutMs: 1000,
  baseDelaySeconds: 120,
  maxDelaySeconds: 1200,
};
