import { definePlugin } from '../../core/plugin.ts';
import { Http } from '../../core/http.ts';

/**
 * The agent operator's `/.well-known/brand.json`, naming the agent (at `path` on this origin, `/mcp` by
 * default) and its JWKS, so a buyer's webhook receiver can discover the keys that verify RFC 9421 signatures.
 */
export function operatorBrandJson(agent: { type: string; domain: string; id?: string; path?: string }) {
  return definePlugin({
    name: 'test-operator-brand-json',
    deps: { http: Http },
    init({ http }) {
      http.add({
        method: 'GET',
        path: '/.well-known/brand.json',
        handle: (request) => {
          const origin = new URL(request.url).origin;
          const entry = {
            type: agent.type,
            ...(agent.id ? { id: agent.id } : {}),
            url: `${origin}${agent.path ?? '/mcp'}`,
            jwks_uri: `${origin}/.well-known/jwks.json`,
          };
          return Response.json({ house: { domain: agent.domain, agents: [entry] } });
        },
      });
    },
  })();
}
