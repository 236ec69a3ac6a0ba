import { defaultIds } from '../../core/ports/ids.ts';
import { expect } from 'bun:test';
import type { PluginEntry } from '../../core/config.ts';
import type { Token } from '../../core/token.ts';
import { Database } from '../../core/ports/database.ts';
import type { Tier } from '../../core/ports/auth.ts';
import { createOrganization, createUser } from '../../plugins/auth/store.ts';
import { setPassword } from '../../plugins/oauth/index.ts';
import type { AdapterName } from '../support/db.ts';
import { freePort, startServer, type TestServer } from '../support/server.ts';

export { freePort } from '../support/server.ts';

/** Like startServer, on a known port with PUBLIC_URL set to it (the issuer and token audiences name the deployment's URL). */
export function startAt(
  adapter: AdapterName,
  schema: string,
  plugins: readonly PluginEntry[],
  options: { env?: Record<string, string>; overrides?: ReadonlyArray<[Token<any>, unknown]> } = {},
): Promise<TestServer> {
  const port = freePort();
  return startServer(adapter, schema, plugins, { ...options, port, env: { PUBLIC_URL: `http://127.0.0.1:${port}`, ...options.env } });
}

let n = 0;
/** An organization of the given standing with one user who can sign in. */
export async function newUser(s: TestServer, tier: Tier): Promise<{ login: string; password: string; userId: string; orgName: string }> {
  const db = s.deployment.get(Database);
  const org = await createOrganization(db, defaultIds, { name: `oauth-org-${process.pid}-${n++}-${Date.now()}`, tier });
  const login = `user${n}-${tier}@example.com`;
  const user = await createUser(db, defaultIds, { orgId: org.id, name: `User ${n}` });
  const password = `correct horse battery ${n}`;
  await setPassword(db, { userId: user.id, login, password, now: new Date() });
  return { login, password, userId: user.id, orgName: org.name };
}

/**
 * Drive the sign-in page as a browser would: GET the authorization URL, read the form's hidden
 * fields, POST them with the credentials, and return where the server redirects.
 */
export async function signIn(authorizationUrl: string, login: string, password: string, decision: 'allow' | 'deny' = 'allow'): Promise<URL> {
  const page = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toContain('text/html');
  const html = await page.text();
  const form = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) form.append(decode(m[1]!), decode(m[2]!));
  form.set('login', login);
  form.set('password', password);
  form.set('decision', decision);
  const action = new URL('authorize', authorizationUrl);
  const posted = await fetch(action, { method: 'POST', body: form, redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  expect(posted.status).toBe(302);
  return new URL(posted.headers.get('location')!);
}

const decode = (s: string) => s.replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c)));
