#!/usr/bin/env bun
/**
 * Local administration of principals, against the same database the server uses
 * (DATABASE_URL, else the PGlite directory DATA_DIR, default ./data):
 *
 *   bun run admin create-org <name> [--tier public|member|admin]
 *   bun run admin create-key <org name or id> [--name <label>] [--user <user name>]
 *   bun run admin list-keys <org name or id>
 *   bun run admin revoke-key <key id>
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { assemble } from '../core/deployment.ts';
import { definePreset } from '../core/config.ts';
import { sql } from '../core/sql.ts';
import { Database } from '../core/ports/database.ts';
import { storageFor } from '../config/storage.ts';
import auth from '../plugins/auth/index.ts';
import { createApiKey, createOrganization, createUser, findOrganization, revokeApiKey } from '../plugins/auth/store.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { tier: { type: 'string', default: 'member' }, name: { type: 'string', default: 'cli' }, user: { type: 'string' } },
});
const [command, arg] = positionals;
const usage = 'usage: bun run admin create-org <name> [--tier member] | create-key <org> [--name label] [--user name] | list-keys <org> | revoke-key <id>';

if (!command || !arg) {
  console.error(usage);
  process.exit(2);
}

const deployment = await assemble(definePreset({ name: 'admin', log: { level: 'warn' }, plugins: [storageFor, auth()] }), { env: { LOG_LEVEL: 'warn', ...process.env } });
await deployment.start();
const db = deployment.get(Database);
let code = 0;
try {
  switch (command) {
    case 'create-org': {
      if (!['public', 'member', 'admin'].includes(values.tier!)) throw new Error('--tier must be public, member or admin');
      if (await findOrganization(db, arg)) throw new Error(`organization "${arg}" already exists`);
      const org = await createOrganization(db, { name: arg, tier: values.tier as 'member' });
      console.log(JSON.stringify(org));
      break;
    }
    case 'create-key': {
      const org = await findOrganization(db, arg);
      if (!org) throw new Error(`no organization "${arg}" (create it with create-org)`);
      const user = values.user ? await createUser(db, { orgId: org.id, name: values.user }) : undefined;
      const key = await createApiKey(db, { orgId: org.id, name: values.name!, userId: user?.id, namespace: deployment.config.protocol.namespace });
      console.log(JSON.stringify({ id: key.id, organization: org.name, tier: org.tier, key: key.key }));
      console.error('Store this key now: only its hash is kept.');
      break;
    }
    case 'list-keys': {
      const org = await findOrganization(db, arg);
      if (!org) throw new Error(`no organization "${arg}"`);
      const rows = await db.query(sql`SELECT id::text, name, prefix, created_at, last_used_at, revoked_at FROM api_keys WHERE org_id = ${org.id}::uuid ORDER BY created_at`);
      console.log(JSON.stringify(rows, null, 2));
      break;
    }
    case 'revoke-key': {
      console.log((await revokeApiKey(db, arg)) ? `revoked ${arg}` : `no active key ${arg}`);
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
