#!/usr/bin/env bun
/**
 * `bun run mirror --from <registry url> --key <api key> [--once] [--interval ms] [--page-size n] [--port n]`
 * Follows another registry's change feed into the local database (DATABASE_URL, or PGlite in
 * DATA_DIR). The cursor is stored with each applied page, so stopping and starting again resumes
 * where it left off; an expired cursor (410) re-bootstraps. `--once` catches up and exits;
 * `--port` also serves the mirrored feed (GET /api/registry/feed; API keys of the local database).
 */
import { assemble } from '../core/deployment.ts';
import { definePreset } from '../core/config.ts';
import { Database } from '../core/ports/database.ts';
import { storage } from '../config/storage.ts';
import registryFeed from '../plugins/registry-feed/index.ts';
import * as v from 'valibot';
import registryMirror, { FeedFollower, mirrorOptions as mirrorSchema } from '../plugins/registry-mirror/index.ts';
import { EventLog } from '../core/ports/events.ts';
import auth from '../plugins/auth/index.ts';
import restHost from '../hosts/rest/index.ts';
import { serve } from '../hosts/serve.ts';
import { exitOnHelp } from '../lib/cli.ts';

const usage = `usage: bun run mirror --from <registry url> --key <api key> [--once] [--interval ms] [--page-size n] [--port n]

Follows another registry's change feed into the local database (DATABASE_URL, or PGlite in DATA_DIR),
resuming where it stopped. --once catches up and exits; --port also serves the mirrored feed
(GET /api/registry/feed). The key may come from MIRROR_KEY.`;
exitOnHelp(usage);

const args = process.argv.slice(2);
const value = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const from = value('--from');
const key = value('--key') ?? process.env.MIRROR_KEY;
if (!from || !key) {
  console.error(usage);
  process.exit(2);
}
const once = args.includes('--once');
const port = value('--port');
const mirrorOptions = {
  from,
  key,
  follow: !once,
  ...(value('--interval') ? { intervalMs: Number(value('--interval')) } : {}),
  ...(value('--page-size') ? { pageSize: Number(value('--page-size')) } : {}),
};

const preset = definePreset({
  name: 'mirror',
  plugins: [storage, registryFeed(), registryMirror(mirrorOptions), ...(port ? [auth(), restHost({ title: 'Registry mirror' })] : [])],
});
const deployment = await assemble(preset);
await deployment.start();

if (once) {
  const follower = new FeedFollower(deployment.get(Database), deployment.get(EventLog), v.parse(mirrorSchema, mirrorOptions), deployment.logger);
  const received = await follower.catchUp();
  console.log(`mirror: caught up with ${follower.source} (${received} events received, cursor ${await follower.cursor()})`);
  await deployment.stop();
  process.exit(0);
}

const server = port ? await serve(deployment, { port: Number(port), hostname: deployment.config.server.host }) : null;
if (server) console.log(`mirror: serving the mirrored feed on ${server.url.href}`);
const shutdown = async () => {
  if (server) await server.close();
  else await deployment.stop();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
