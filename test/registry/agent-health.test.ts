import { afterAll, expect, test } from 'bun:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ManualClock } from '../../core/ports/clock.ts';
import auth from '../../plugins/auth/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { newKey } from '../support/principals.ts';
import { TEST_CERT, TEST_KEY, loopbackResolver } from '../support/loopback.ts';

/** Agents on loopback TLS: one conforming, one whose capabilities answer is incomplete, one the test takes down. */
let flakyUp = true;
const ANSWERS: Record<string, unknown> = {
  'good.pub.test': { proto: { major_versions: [3] }, supported_protocols: ['media_buy'], media_buy: {} },
  'bad.pub.test': { proto: { major_versions: [] }, media_buy: 'yes' },
  'flaky.pub.test': { proto: { major_versions: [3] }, supported_protocols: ['signals'] },
  'secret.pub.test': { proto: { major_versions: [3] }, supported_protocols: ['signals'] },
};
const agents: ReturnType<typeof Bun.serve> = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  tls: { cert: TEST_CERT, key: TEST_KEY },
  async fetch(req): Promise<Response> {
    const host = new URL(req.url).hostname;
    if (host === 'flaky.pub.test' && !flakyUp) return new Response('down', { status: 503 });
    const server = new McpServer({ name: host, version: '1.0.0' });
    server.registerTool('get_proto_capabilities', { description: 'Capabilities' }, async () => ({
      content: [{ type: 'text', text: JSON.stringify(ANSWERS[host]) }],
    }));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    return transport.handleRequest(req);
  },
});
afterAll(() => agents.stop(true));
const url = (host: string) => `https://${host}:${agents.port}/mcp`;

forEachAdapter('agent health, compliance and verification', (adapter) => {
  test(`probes, catalog enrichment, badge earned and lost, feed events, history [${adapter}]`, async () => {
    flakyUp = true;
    const clock = new ManualClock(new Date('2026-05-01T00:00:00Z'));
    const d = await deploy(
      adapter,
      [
        auth(),
        crawlerHttp({ allowlist: ['127.0.0.1'], resolver: loopbackResolver(['pub.test']), ca: TEST_CERT }),
        searchPostgres(),
        registryAgents({ healthIntervalMs: 1000, healthEverySeconds: 3600, healthTimeoutMs: 2000 }),
        registryFeed({ sequenceIntervalMs: 0, retentionIntervalMs: 0 }),
        restHost(),
      ],
      { serve: true, clock },
    );
    try {
      const { key } = await newKey(d.deployment);
      const call = (path: string, init: RequestInit = {}) =>
        fetch(d.base + path, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
      for (const host of ['good.pub.test', 'bad.pub.test', 'flaky.pub.test', 'secret.pub.test']) {
        const res = await call('/api/registry/agents', {
          method: 'POST',
          body: JSON.stringify({ url: url(host), name: host, type: 'sales', protocol: 'mcp', visibility: host.startsWith('secret') ? 'private' : 'public' }),
        });
        expect(res.status).toBe(201);
      }
      let cursor: string | null = null;
      const newEvents = async () => {
        const body: any = await (
          await call(`/api/registry/feed?types=agent.compliance_changed,agent.verification_*${cursor ? `&cursor=${cursor}` : ''}`)
        ).json();
        cursor = body.cursor ?? cursor;
        return body.events.map(
          (e: any) =>
            `${e.event_type} ${new URL(e.payload.agent_url).hostname}${e.event_type === 'agent.compliance_changed' ? ` ${e.payload.compliance}${e.payload.verified ? ' verified' : ''}` : ''}`,
        );
      };
      const probeRound = async () => {
        d.timers.advance(1000);
        await d.deployment.scheduler.idle();
        clock.advance(3600_000);
      };
      const catalog = async () => {
        const body: any = await (await call('/api/registry/agents?health=true&compliance=true&verification=true')).json();
        return Object.fromEntries(body.agents.map((a: any) => [a.name, { health: a.health, compliance: a.compliance, verification: a.verification }]));
      };

      // Before any probe: unknown.
      expect((await catalog())['good.pub.test']).toEqual({
        health: { status: 'unknown', last_checked_at: null, latency_ms: null, uptime_24h: null, checks_24h: 0 },
        compliance: { status: 'unknown', issues: [], changed_at: null },
        verification: { verified: false, badge: null, since: null },
      });
      const plain: any = await (await call('/api/registry/agents')).json();
      expect(plain.agents[0].health).toBeUndefined();

      await probeRound();
      let c = await catalog();
      expect(c['good.pub.test']!.health).toMatchObject({ status: 'healthy', checks_24h: 1, uptime_24h: 1 });
      expect(c['good.pub.test']!.compliance.status).toBe('compliant');
      expect(c['bad.pub.test']!.health.status).toBe('healthy');
      expect(c['bad.pub.test']!.compliance.status).toBe('non_compliant');
      expect(c['bad.pub.test']!.compliance.issues.map((i: any) => i.path).sort()).toEqual(['/media_buy', '/proto/major_versions', '/supported_protocols']);
      expect((await newEvents()).sort()).toEqual([
        'agent.compliance_changed bad.pub.test non_compliant',
        'agent.compliance_changed flaky.pub.test compliant',
        'agent.compliance_changed good.pub.test compliant',
      ]);

      // Three passing probes in a row earn the badge; nothing changes for the non-compliant agent.
      await probeRound();
      expect(await newEvents()).toEqual([]);
      await probeRound();
      expect((await newEvents()).sort()).toEqual([
        'agent.compliance_changed flaky.pub.test compliant verified',
        'agent.compliance_changed good.pub.test compliant verified',
        'agent.verification_earned flaky.pub.test',
        'agent.verification_earned good.pub.test',
      ]);
      c = await catalog();
      expect(c['good.pub.test']!.verification).toMatchObject({ verified: true, badge: 'verified' });
      expect(c['bad.pub.test']!.verification.verified).toBe(false);

      // The flaky agent goes down: one failed probe keeps the badge, the second loses it.
      flakyUp = false;
      await probeRound();
      expect(await newEvents()).toEqual([]);
      expect((await catalog())['flaky.pub.test']!.health).toMatchObject({ status: 'unreachable', checks_24h: 4, uptime_24h: 0.75 });
      await probeRound();
      expect((await newEvents()).sort()).toEqual(['agent.compliance_changed flaky.pub.test compliant', 'agent.verification_lost flaky.pub.test']);
      c = await catalog();
      expect(c['flaky.pub.test']!.verification.verified).toBe(false);
      expect(c['good.pub.test']!.verification.verified).toBe(true);

      const history: any = await (await call(`/api/registry/agents/checks?url=${encodeURIComponent(url('flaky.pub.test'))}`)).json();
      expect(history.checks).toHaveLength(5);
      expect(history.checks.map((x: any) => x.capabilities_answered)).toEqual([false, false, true, true, true]);
      expect(history.checks[0].error).toBeString();
      // The private agent was probed, but the feed never named it.
      const secret: any = await (await call(`/api/registry/agents/checks?url=${encodeURIComponent(url('secret.pub.test'))}`)).json();
      expect(secret.checks).toHaveLength(5);

      // The official client's getAgentCompliance / getAgentStoryboardStatus(Bulk) paths (agent URL encoded in the path).
      const anonymous = (path: string, init: RequestInit = {}) => fetch(d.base + path, init);
      const enc = (host: string) => encodeURIComponent(url(host));
      const good: any = await (await anonymous(`/api/registry/agents/${enc('good.pub.test')}/compliance`)).json();
      expect(good).toMatchObject({
        agent_url: url('good.pub.test'),
        status: 'passing',
        tracks: { core: 'pass' },
        storyboards_passing: 1,
        storyboards_total: 1,
      });
      expect(good.storyboard_statuses[0]).toMatchObject({ storyboard_id: 'registry_capabilities_probe', status: 'passing', steps_passed: 3, steps_total: 3 });
      const bad: any = await (await anonymous(`/api/registry/agents/${enc('bad.pub.test')}/compliance`)).json();
      expect(bad).toMatchObject({ status: 'failing', tracks: { core: 'fail' }, storyboards_passing: 0 });
      expect(bad.storyboard_statuses[0]).toMatchObject({ status: 'partial', steps_passed: 2, first_failed_step_id: 'validate_capabilities' });
      expect(bad.issues).toHaveLength(3);
      expect((await anonymous(`/api/registry/agents/${encodeURIComponent('https://nowhere.example/mcp')}/compliance`)).status).toBe(404);
      // A private agent is not shown to others (404, the client's null), only to its owner.
      expect((await anonymous(`/api/registry/agents/${enc('secret.pub.test')}/compliance`)).status).toBe(404);
      expect((await call(`/api/registry/agents/${enc('secret.pub.test')}/compliance`)).status).toBe(200);
      expect((await anonymous(`/api/registry/agents/not%20a%20url/compliance`)).status).toBe(400);

      expect((await anonymous(`/api/registry/agents/${enc('flaky.pub.test')}/storyboard-status`)).status).toBe(401);
      const flaky: any = await (await call(`/api/registry/agents/${enc('flaky.pub.test')}/storyboard-status`)).json();
      expect(flaky).toMatchObject({ agent_url: url('flaky.pub.test'), passing_count: 0, total_count: 1 });
      expect(flaky.storyboards[0]).toMatchObject({ status: 'failing', first_failed_step_id: 'reach_agent' });
      const bulk = await call('/api/registry/agents/storyboard-status', {
        method: 'POST',
        body: JSON.stringify({ agent_urls: [url('good.pub.test'), url('bad.pub.test'), 'https://nowhere.example/mcp', 'not a url'] }),
      });
      expect(bulk.status).toBe(200);
      const b: any = await bulk.json();
      expect(Object.keys(b.agents).sort()).toEqual([url('bad.pub.test'), url('good.pub.test')]);
      expect(b.agents[url('good.pub.test')][0].status).toBe('passing');
      expect(b.invalid_urls).toBe(1);
      expect((await call('/api/registry/agents/storyboard-status', { method: 'POST', body: JSON.stringify({ agent_urls: [] }) })).status).toBe(400);
    } finally {
      await d.close();
    }
  });
});
