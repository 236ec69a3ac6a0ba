import type { IdsPort } from '../../core/ports/ids.ts';
import { claimJobs, completeJob, failJob, type CrawlJob, type JobKind, type JobSettings } from './jobs.ts';
import { crawlDomain, type CrawlDeps, type CrawlOutcome } from './pipeline.ts';
import { refreshAgentCapabilities, type AgentCheckResult } from './agent-capabilities.ts';

/** `namespace` is the deployment's protocol namespace: agents are asked for `get_{ns}_capabilities`. */
export type WorkerDeps = CrawlDeps & { ids: IdsPort; settings: JobSettings; namespace: string; agentLimits?: { timeoutMs: number; maxBytes: number } };

/** Run one claimed job by its kind. */
function runJob(deps: WorkerDeps, job: CrawlJob): Promise<CrawlOutcome | AgentCheckResult> {
  return job.kind === 'agent_capabilities' ? refreshAgentCapabilities(deps, job.domain) : crawlDomain(deps, job.domain);
}

/**
 * Claim up to `concurrency` jobs (of the given kinds, default all) and run them; returns how many were claimed. A thrown error
 * (network failure, 5xx, database error) re-queues the job with backoff; a verdict about the
 * file (missing, invalid) is a successful crawl.
 */
export async function runCrawlBatch(
  deps: WorkerDeps,
  worker: string,
  concurrency: number,
  onDone?: (domain: string, outcome: CrawlOutcome | AgentCheckResult | Error, job: CrawlJob) => void,
  kinds?: readonly JobKind[],
): Promise<number> {
  const jobs = await claimJobs(deps.db, deps, worker, concurrency, kinds);
  await Promise.all(
    jobs.map(async (job) => {
      try {
        const outcome = await runJob(deps, job);
        const kept = await completeJob(deps.db, deps, job, outcome);
        if (!kept) deps.logger.warn({ job: job.id, domain: job.domain }, 'crawl finished after its lease was taken over; result dropped');
        onDone?.(job.domain, outcome, job);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const verdict = await failJob(deps.db, deps, job, message);
        deps.logger.warn({ job: job.id, domain: job.domain, attempt: job.attempts, verdict, err: message }, 'crawl failed');
        onDone?.(job.domain, error instanceof Error ? error : new Error(message), job);
      }
    }),
  );
  return jobs.length;
}
