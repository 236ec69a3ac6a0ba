#!/usr/bin/env bun
/**
 * Local administration of principals, against the same database the server uses
 * (DATABASE_URL, else the PGlite directory DATA_DIR, default ./data):
 *
 *   bun run admin create-org <name> [--tier public|member|admin]
 *   bun run admin create-key <org name or id> [--name <label>] [--user <user name>]
 *   bun run admin list-keys <org name or id>
 *   bun run admin revoke-key <key id>
 *   bun run admin set-tier <org name or id> <public|member|admin>
 *   bun run admin create-user <org name or id> <login> [--name <display name>]   (password: ADMIN_PASSWORD or stdin)
 *   bun run admin set-password <login or user id>                               (password: ADMIN_PASSWORD or stdin)
 *   bun run admin link-identity <user id> --issuer <url> --subject <sub>         (external OpenID Connect sign-in)
 *   bun run admin rotate-oauth-key                                               (new signing key for the built-in authorization server)
 *   bun run admin reindex                                                        (rebuild the agent search index from the database; SEARCH picks the adapter)
 *   bun run admin search-status                                                  (search outbox backlog, watermark and index stamp)
 */
import { parseArgs } from 'node:util';
import { assemble } from '../core/deployment.ts';
import { ConfigError, definePreset } from '../core/config.ts';
import { Database } from '../core/ports/database.ts';
import { storage } from '../config/storage.ts';
import { search } from '../config/search.ts';
import registryAgents from '../plugins/registry-agents/index.ts';
import { SearchSync } from '../core/ports/search-sync.ts';
import auth from '../plugins/auth/index.ts';
import oauth, { findLogin, setPassword } from '../plugins/oauth/index.ts';
import rateLimit from '../plugins/rate-limit/index.ts';
import {
  createApiKey,
  createOrganization,
  createUser,
  findOrganization,
  findUser,
  linkIdentity,
  listApiKeys,
  revokeApiKey,
  setOrganizationTier,
} from '../plugins/auth/store.ts';
import { createKeyStore } from '../plugins/oauth/keys.ts';
import { Clock } from '../core/ports/clock.ts';
import { Ids } from '../core/ports/ids.ts';
import { SecretBox } from '../core/ports/secrets.ts';
import { exitOnHelp, parseArgsOrExit } from '../lib/cli.ts';

const usage = `usage: bun run admin <command> [arguments]   (DATABASE_URL, else the PGlite directory DATA_DIR, default ./data)

  create-org <name> [--tier public|member|admin]      an organization (default tier member)
  create-key <org> [--name label] [--user name]       an API key, printed once
  list-keys <org>                                     its keys (no secrets)
  revoke-key <key id>
  set-tier <org> <public|member|admin>
  create-user <org> <login> [--name display name]     a sign-in user (password: ADMIN_PASSWORD or stdin)
  set-password <login or user id>                     (password: ADMIN_PASSWORD or stdin)
  link-identity <user id> --issuer <url> --subject <sub>   external OpenID Connect sign-in
  rotate-oauth-key                                    new signing key for the built-in authorization server
  reindex                                             rebuild the agent search index (SEARCH picks the adapter)
  search-status                                       search outbox backlog, watermark and index stamp

With PGlite, run these while the server is stopped (one process per data directory).`;
exitOnHelp(usage);
const { positionals, values } = parseArgsOrExit(usage, () =>
  parseArgs({
    allowPositionals: true,
    options: {
      tier: { type: 'string', default: 'member' },
      name: { type: 'string' },
      user: { type: 'string' },
      issuer: { type: 'string' },
      subject: { type: 'string' },
    },
  }),
);
const [command, argument, arg2] = positionals;
const arg = argument ?? '';
const noArgument = ['rotate-oauth-key', 'reindex', 'search-status'];
// The search index is reached through the registry plugin that owns its outbox (SearchSync), never written from here.
const searchCommand = command === 'reindex' || command === 'search-status';

/** A password from ADMIN_PASSWORD, else the first line of standard input (never from the command line). */
async function readPassword(): Promise<string> {
  const fromEnv = process.env.ADMIN_PASSWORD;
  const text = fromEnv ?? (await new Response(Bun.stdin.stream()).text()).split(/\r?\n/)[0]!;
  if (text.length < 10) throw new Error('the password must be at least 10 characters (ADMIN_PASSWORD or standard input)');
  return text;
}

if (!command || (!argument && !noArgument.includes(command))) {
  console.error(usage);
  process.exit(2);
}

const plugins = searchCommand ? [storage, search, registryAgents()] : [storage, auth(), oauth(), rateLimit({ pruneIntervalMs: 0 })];
const deployment = await assemble(definePreset({ name: 'admin', log: { level: 'warn' }, plugins }), {
  env: { ...process.env, LOG_LEVEL: 'error' },
});
try {
  await deployment.start();
} catch (error) {
  // A running embedded server holds the PGlite directory: the message says what to do.
  if (!(error instanceof ConfigError)) throw error;
  console.error(`error: ${error.message}`);
  await deployment.stop();
  process.exit(1);
}
const db = deployment.get(Database);
const ids = deployment.get(Ids);
let code = 0;
try {
  switch (command) {
    case 'create-org': {
      if (!['public', 'member', 'admin'].includes(values.tier!)) throw new Error('--tier must be public, member or admin');
      if (await findOrganization(db, arg)) throw new Error(`organization "${arg}" already exists`);
      const org = await createOrganization(db, ids, { name: arg, tier: values.tier as 'member' });
      console.log(JSON.stringify(org));
      break;
    }
    case 'create-key': {
      const org = await findOrganization(db, arg);
      if (!org) throw new Error(`no organization "${arg}" (create it with create-org)`);
      const user = values.user ? await createUser(db, ids, { orgId: org.id, name: values.user }) : undefined;
      const key = await createApiKey(db, ids, { orgId: org.id, name: values.name ?? 'cli', userId: user?.id, namespace: deployment.config.protocol.namespace });
      console.log(JSON.stringify({ id: key.id, organization: org.name, tier: org.tier, key: key.key }));
      console.error('Store this key now: only its hash is kept.');
      break;
    }
    case 'list-keys': {
      const org = await findOrganization(db, arg);
      if (!org) throw new Error(`no organization "${arg}"`);
      console.log(JSON.stringify(await listApiKeys(db, org.id), null, 2));
      break;
    }
    case 'revoke-key': {
      console.log((await revokeApiKey(db, arg)) ? `revoked ${arg}` : `no active key ${arg}`);
      break;
    }
    case 'set-tier': {
      if (!['public', 'member', 'admin'].includes(arg2 ?? '')) throw new Error('set-tier needs a tier: public, member or admin');
      const org = await findOrganization(db, arg);
      if (!org) throw new Error(`no organization "${arg}"`);
      await setOrganizationTier(db, org.id, arg2 as 'member');
      console.log(`${org.name}: ${org.tier} -> ${arg2}`);
      break;
    }
    case 'create-user': {
      const org = await findOrganization(db, arg);
      if (!org) throw new Error(`no organization "${arg}" (create it with create-org)`);
      if (!arg2) throw new Error('create-user needs a login');
      const password = await readPassword();
      const user = await createUser(db, ids, { orgId: org.id, name: values.name ?? arg2 });
      await setPassword(db, { userId: user.id, login: arg2, password, now: deployment.get(Clock).now() });
      console.log(JSON.stringify({ id: user.id, login: arg2, organization: org.name, tier: org.tier }));
      break;
    }
    case 'set-password': {
      const login = await findLogin(db, arg);
      const user = login ? { id: login.userId, login: login.login } : await findUser(db, arg).then((u) => u && { id: u.id, login: u.name });
      if (!user) throw new Error(`no user "${arg}"`);
      await setPassword(db, { userId: user.id, login: user.login, password: await readPassword(), now: deployment.get(Clock).now() });
      console.log(`password set for ${user.login}`);
      break;
    }
    case 'link-identity': {
      if (!values.issuer || !values.subject) throw new Error('link-identity needs --issuer and --subject');
      const user = await findUser(db, arg);
      if (!user) throw new Error(`no user "${arg}"`);
      await linkIdentity(db, { issuer: values.issuer.replace(/\/+$/, ''), subject: values.subject, userId: user.id });
      console.log(`linked ${values.issuer} ${values.subject} to ${user.name}`);
      break;
    }
    case 'rotate-oauth-key': {
      const kid = await createKeyStore(db, deployment.get(SecretBox), deployment.get(Clock)).rotate();
      console.log(JSON.stringify({ kid }));
      break;
    }
    case 'reindex': {
      const sync = deployment.get(SearchSync);
      const applied = await sync.reindex();
      console.log(JSON.stringify({ reindexed: applied, ...(await sync.status()) }));
      break;
    }
    case 'search-status': {
      console.log(JSON.stringify(await deployment.get(SearchSync).status(), null, 2));
      break;
    }
    default:
      console.error(usage);
      code = 2;
  }
} catch (error) {
  console.error(`error: ${(error as Error).message}`);
  code = 1;
} finally {
  await deployment.stop();
}
process.exit(code);
