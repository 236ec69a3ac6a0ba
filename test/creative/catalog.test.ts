import { expect, test } from 'bun:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from '../../core/ports/database.ts';
import { ProtocolError } from '../../core/errors.ts';
import { parseCatalog, upsertFormats } from '../../plugins/creative/formats.ts';
import { DEFAULT_SEED } from '../../plugins/creative/index.ts';
import { DATABASE_URL, forEachDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { AGENT_URL, fid, startCreativeServer, TOKEN, type CreativeServer } from './fixture.ts';

const VENDOR = {
  formats: [
    {
      format_id: { agent_url: 'https://vendor.example', id: 'vendor_story_1080x1920' },
      name: 'Vendor Story',
      type: 'display',
      renders: [{ role: 'primary', dimensions: { width: 1080, height: 1920 } }],
      assets: [
        { item_type: 'individual', asset_id: 'headline', asset_type: 'text', required: true },
        { item_type: 'individual', asset_id: 'hero', asset_type: 'image', required: true, requirements: { width: 1080, height: 1920 } },
        { item_type: 'individual', asset_id: 'pixel', asset_type: 'pixel_tracker', required: false, event: 'impression' },
      ],
      supported_macros: ['CACHEBUSTER'],
    },
    {
      format_id: { agent_url: 'https://vendor.example', id: 'native_mention' },
      name: 'Vendor Mention',
      type: 'native',
      assets: [{ item_type: 'individual', asset_id: 'mention_text', asset_type: 'text', required: true }],
    },
  ],
};

/** The running agent learns of catalog writes by NOTIFY, which arrives just after the write commits. */
async function listUntil(s: CreativeServer, args: Record<string, unknown>, done: (formats: any[]) => boolean): Promise<any[]> {
  for (let i = 0; ; i++) {
    const { body } = await restClient(s.server, TOKEN).call('list_creative_formats', args);
    if (done(body.formats) || i === 200) return body.formats;
    await Bun.sleep(10);
  }
}

forEachDatabase(
  'creative catalog',
  async (adapter, schema) => ({ s: await startCreativeServer(adapter, schema), schema }),
  async ({ s }) => s.server.close(),
  (get, adapter) => {
    test('vendor formats are upserted after the reference ones, replace a reference id, survive a re-seed', async () => {
      const { s } = get();
      const db = s.server.deployment.get(Database);
      expect(await upsertFormats(db, parseCatalog(VENDOR), 'vendor', new Date())).toBe(2);
      const all = await listUntil(s, {}, (f) => f.some((x) => x.format_id.id === 'vendor_story_1080x1920'));
      expect(all).toHaveLength(81); // the seed (70 reference formats, 8 templates, 2 hosted videos), then the vendor's new one
      expect(all[80].format_id).toEqual({ agent_url: AGENT_URL, id: 'vendor_story_1080x1920' });
      expect(all[80].assets[2]).toEqual({
        item_type: 'individual',
        asset_id: 'pixel',
        asset_type: 'url',
        required: false,
        event: 'impression',
        requirements: { role: 'impression_tracker' },
      });
      // The vendor's native_mention replaced the reference one in place.
      const mention = all.find((x) => x.format_id.id === 'native_mention');
      expect(mention.name).toBe('Vendor Mention');
      const seed: any[] = await Bun.file(DEFAULT_SEED).json();
      expect(all.findIndex((x) => x.format_id.id === 'native_mention')).toBe(seed.findIndex((x) => x.format_id.id === 'native_mention'));

      // Same content again writes nothing; the reference seed does not overwrite a vendor definition.
      expect(await upsertFormats(db, parseCatalog(VENDOR), 'vendor', new Date())).toBe(0);
      expect(await upsertFormats(db, parseCatalog(seed), 'reference', new Date())).toBe(0);
      const sized = await listUntil(s, { type: 'display', min_width: 1000, min_height: 1900 }, () => true);
      expect(sized.map((f) => f.format_id.id)).toEqual(['vendor_story_1080x1920']);

      // The vendor's format is usable at once: a preview of a manifest in it.
      const { ok } = await restClient(s.server, TOKEN).call('preview_creative', {
        request_type: 'single',
        creative_manifest: {
          format_id: fid('vendor_story_1080x1920'),
          assets: {
            headline: { asset_type: 'text', content: 'Hi' },
            hero: { asset_type: 'image', url: 'https://cdn.vendor.example/h.jpg', width: 1080, height: 1920 },
          },
        },
      });
      expect(ok).toBe(true);
    });

    test(`bun run creative import writes into a running agent's database${adapter === 'pglite' ? ' (Postgres only)' : ''}`, async () => {
      if (adapter === 'pglite' || !DATABASE_URL) {
        // The CLI is another process; the suite's PGlite lives in this one. Covered on Postgres.
        expect(adapter).toBe('pglite');
        return;
      }
      const { s, schema } = get();
      const file = join(mkdtempSync(join(tmpdir(), 'creative-import-')), 'formats.json');
      writeFileSync(file, JSON.stringify({ formats: [{ ...VENDOR.formats[0], format_id: { id: 'cli_story' }, name: 'CLI Story' }] }));
      const proc = Bun.spawn(['bun', 'scripts/creative.ts', 'import', file], {
        cwd: join(import.meta.dir, '../..'),
        env: { ...process.env, DATABASE_URL, DATABASE_SCHEMA: schema, LOG_LEVEL: 'error' },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      expect(await proc.exited).toBe(0);
      expect(await new Response(proc.stdout).text()).toContain('imported 1 formats');
      const listed = await listUntil(s, { name_search: 'cli story' }, (f) => f.length > 0);
      expect(listed.map((f) => f.format_id.id)).toEqual(['cli_story']);

      writeFileSync(file, JSON.stringify([{ format_id: 'bare', name: 'x', type: 'display', assets: [] }]));
      const bad = Bun.spawn(['bun', 'scripts/creative.ts', 'import', file], {
        cwd: join(import.meta.dir, '../..'),
        env: { ...process.env, DATABASE_URL, DATABASE_SCHEMA: schema },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      expect(await bad.exited).toBe(1);
      expect(await new Response(bad.stderr).text()).toContain('import failed: [0].format_id');
    });
  },
);

test('catalog files are checked entry by entry, naming the failing field', () => {
  const failure = (input: unknown) => {
    try {
      parseCatalog(input);
    } catch (error) {
      expect(error).toBeInstanceOf(ProtocolError);
      return (error as ProtocolError).field;
    }
    throw new Error('accepted');
  };
  expect(failure({ formats: [{ ...VENDOR.formats[0], type: 'tv' }] })).toBe('formats[0].type');
  expect(failure([VENDOR.formats[0], VENDOR.formats[0]])).toBe('[1].format_id.id');
  expect(failure([{ ...VENDOR.formats[0], assets: [VENDOR.formats[0]!.assets[0], VENDOR.formats[0]!.assets[0]] }])).toBe('[0].assets[1].asset_id');
  // A repeatable group names its group and counts; an unknown item type is refused.
  expect(failure([{ ...VENDOR.formats[0], assets: [{ item_type: 'repeatable_group', asset_id: 'x', asset_type: 'text', required: true }] }])).toBe(
    '[0].assets[0].asset_group_id',
  );
  expect(failure([{ ...VENDOR.formats[0], assets: [{ item_type: 'bundle', asset_id: 'x', asset_type: 'text', required: true }] }])).toBe(
    '[0].assets[0].item_type',
  );
  const group = { item_type: 'repeatable_group', asset_group_id: 'card', min_count: 4, max_count: 2, assets: [{ asset_id: 'image', asset_type: 'image' }] };
  expect(failure([{ ...VENDOR.formats[0], assets: [group] }])).toBe('[0].assets[0]');
  expect(failure('not a catalog')).toBe(undefined);
});
