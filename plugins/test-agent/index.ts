import * as v from 'valibot';
import { definePlugin } from '../../core/plugin.ts';
import { Http } from '../../core/http.ts';
import { Tasks } from '../../core/task.ts';
import { baseUrl } from '../../hosts/tasks/deps.ts';

const tenant = v.object({
  /** Specialism id and path segment (`signals` -> `/signals/mcp`). */
  id: v.pipe(v.string(), v.regex(/^[a-z][a-z0-9-]{0,40}$/)),
  name: v.string(),
  /** Protocol groups of the tasks served there. */
  protocols: v.array(v.string()),
});

const options = v.object({ tenants: v.array(tenant) });

/**
 * `/.well-known/adagents.json` of the path-routed public test agent: which tenants (specialisms)
 * it serves, where (MCP, A2A, REST) and with which tools.
 */
export default definePlugin({
  name: 'test-agent',
  requires: [Tasks],
  options,
  start(ctx) {
    const registry = ctx.get(Tasks);
    ctx.get(Http).add({
      method: 'GET',
      path: '/.well-known/adagents.json',
      handle(request) {
        const base = baseUrl(ctx.config.server.publicUrl, request);
        const tenants = ctx.options.tenants.map((t) => ({
          id: t.id,
          name: t.name,
          path: `/${t.id}`,
          mcp: `${base}/${t.id}/mcp`,
          a2a: `${base}/${t.id}/.well-known/agent-card.json`,
          rest: `${base}/${t.id}/tasks/{name}`,
          tools: registry.list(t.protocols).map((task) => task.name),
        }));
        const body = {
          authorized_agents: tenants.map((t) => ({ url: t.mcp, authorized_for: `${t.name} (test tenant)` })),
          tenants,
          authentication: { scheme: 'Bearer', test_token: 'see README: test token' },
          last_updated: new Date(0).toISOString(),
        };
        return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' } });
      },
    });
  },
});
