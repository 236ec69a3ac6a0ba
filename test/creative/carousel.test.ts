import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { clientFor } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { fid, startCreativeServer, TOKEN, type CreativeServer } from './fixture.ts';

const product = (i: number) => ({
  [`product_${i}_image`]: { asset_type: 'image', url: `https://cdn.acme.example/p${i}.jpg`, width: 300, height: 300 },
  [`product_${i}_title`]: { asset_type: 'text', content: `Product ${i}` },
  [`product_${i}_price`]: { asset_type: 'text', content: `$${10 + i}.99` },
});
const carousel = (n: number) => ({
  format_id: fid('product_carousel_3_to_10'),
  assets: {
    ...Object.assign({}, ...Array.from({ length: n }, (_, i) => product(i))),
    brand_logo: { asset_type: 'image', url: 'https://cdn.acme.example/logo.png', width: 80, height: 80 },
  },
});

/** Repeatable asset groups: the reference catalog's product carousel, listed as a group, manifests named `{group}_{i}_{asset}`. */
forEachDatabase<CreativeServer>(
  'creative carousel (repeatable groups)',
  (adapter, schema) => startCreativeServer(adapter, schema),
  (s) => s.server.close(),
  (get) => {
    test('listed with its repeatable group (valid in both versions); 3 to 10 products preview, 2 or a partial product are refused naming the slot', async () => {
      const c = await clientFor('rest', get().server, TOKEN);
      const listed = await c.call('list_creative_formats', { format_ids: [fid('product_carousel_3_to_10')] });
      expect(bothVersionsErrors('creative/list-creative-formats-response.json', listed.body)).toEqual([]);
      const group = listed.body.formats[0].assets.find((a: { item_type: string }) => a.item_type === 'repeatable_group');
      expect(group).toMatchObject({ asset_group_id: 'product', min_count: 3, max_count: 10 });
      expect(group.assets.map((a: { asset_id: string }) => a.asset_id)).toEqual(['image', 'title', 'price']);

      const three = await c.call('preview_creative', { request_type: 'single', creative_manifest: carousel(3), output_format: 'html' });
      expect(three.ok).toBe(true);
      expect(bothVersionsErrors('creative/preview-creative-response.json', three.body)).toEqual([]);
      expect(three.body.previews[0].preview_html).toContain('Product 2');

      // The hosted preview page lays the products out too.
      const hosted = await c.call('preview_creative', { request_type: 'single', creative_manifest: carousel(3), output_format: 'url' });
      const page = await (await get().server.fetch(new URL(hosted.body.previews[0].renders[0].preview_url).pathname)).text();
      expect(page).toContain('data-role="carousel"');
      expect(page).toContain('Product 2');

      const two = await c.call('preview_creative', { request_type: 'single', creative_manifest: carousel(2), output_format: 'html' });
      expect(two.ok).toBe(false);
      expect(JSON.stringify(two.body)).toContain('product_2_image');
      const partial = carousel(3);
      delete (partial.assets as Record<string, unknown>).product_1_price;
      const missing = await c.call('preview_creative', { request_type: 'single', creative_manifest: partial, output_format: 'html' });
      expect(JSON.stringify(missing.body)).toContain('product_1_price');
      // A fourth product without its price is an incomplete repetition.
      const four = carousel(4);
      delete (four.assets as Record<string, unknown>).product_3_price;
      const incomplete = await c.call('preview_creative', { request_type: 'single', creative_manifest: four, output_format: 'html' });
      expect(incomplete.ok).toBe(false);
      expect(JSON.stringify(incomplete.body)).toContain('repetition 3 of product is incomplete');
      const eleven = await c.call('preview_creative', { request_type: 'single', creative_manifest: carousel(11), output_format: 'html' });
      expect(eleven.ok).toBe(false);
      expect(JSON.stringify(eleven.body)).toContain('product_10_image');
      await c.close();
    });
  },
);
