import { Crawler } from '../../core/ports/crawler.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import { deploy } from '../support/deploy.ts';
import { crawlerContract } from './crawler.contract.ts';

// crawler-http (no database): the test DNS through its `resolver` option, loopback through its allowlist.
crawlerContract('crawler-http', async ({ dns, allowLoopback, ca }) => {
  const d = await deploy(null, [crawlerHttp({ resolver: dns, allowlist: allowLoopback ? ['127.0.0.1'] : [], ca })]);
  return { port: d.deployment.get(Crawler), close: () => d.close() };
});
