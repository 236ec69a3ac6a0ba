import { expect, test } from 'bun:test';
import { Database } from '../../core/ports/database.ts';
import { createLogger } from '../../core/log.ts';
import { FormatCatalog } from '../../plugins/creative/catalog.ts';
import { parseCatalog, upsertFormats } from '../../plugins/creative/formats.ts';
import { forEachDatabase } from '../support/db.ts';
import { startCreativeServer, type CreativeServer } from './fixture.ts';

const VENDOR = {
  formats: [
    {
      format_id: { agent_url: 'https://vendor.example', id: 'vendor_current_mention' },
      name: 'Vendor Current Mention',
      type: 'native',
      assets: [{ item_type: 'individual', asset_id: 'mention_text', asset_type: 'text', required: true }],
    },
  ],
};

// The seller's format check asks the deployment's catalog (CreativeFormats.find → findCurrent): a format
// imported on another instance must be accepted at once, before that instance's announcement arrives here.
forEachDatabase<CreativeServer>(
  'format catalog current',
  (adapter, schema) => startCreativeServer(adapter, schema),
  async (s) => s.server.close(),
  (get, adapter) => {
    test('an id the copy lacks is looked up in the table; a copy loaded after the call answers', async () => {
      const db = get().server.deployment.get(Database);
      // On Postgres a copy that follows no announcements stands for an instance whose announcement is
      // still on its way; PGlite's announcements arrive before the writing call returns, so it follows them.
      const copy = new FormatCatalog(db, 'https://copy.example');
      const unfollow = adapter === 'pglite' ? await copy.follow(createLogger('silent')) : undefined;
      expect((await copy.findCurrent(['native_mention', 'vendor_current_mention'])).has('vendor_current_mention')).toBe(false);
      expect(await upsertFormats(db, parseCatalog(VENDOR), 'vendor', new Date())).toBe(1);
      if (adapter === 'postgres') expect((await copy.find(['vendor_current_mention'])).size).toBe(0); // the stale copy
      const found = await copy.findCurrent(['native_mention', 'vendor_current_mention', 'no_such_format']);
      expect([...found.keys()].sort()).toEqual(['native_mention', 'vendor_current_mention']);
      expect(found.get('vendor_current_mention')?.name).toBe('Vendor Current Mention');
      await unfollow?.();
    });
  },
);
