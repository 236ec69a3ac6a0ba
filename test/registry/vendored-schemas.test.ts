import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { readdirSync } from 'node:fs';
import { createSchemaValidator, DEFAULT_SCHEMA_DIR } from '../../lib/registry-documents/schema-validation.ts';
import { REFERENCE } from '../support/reference.ts';

const PUBLISHED = join(REFERENCE, 'schemas/3.1.19');

// The registry ships its own copy of the schemas (a deployment has no test fixtures); it must judge
// documents exactly as the published set does.
test('vendored schemas validate exactly like the published reference set', () => {
  const vendored = createSchemaValidator(DEFAULT_SCHEMA_DIR);
  const reference = createSchemaValidator(PUBLISHED);
  const adagents = [
    {
      authorized_agents: [{ url: 'https://agent.example/mcp', authorized_for: 'all', authorization_type: 'property_tags', property_tags: ['news'] }],
      properties: [{ property_id: 'home', property_type: 'website', name: 'Home', identifiers: [{ type: 'domain', value: 'pub.example' }], tags: ['news'] }],
    },
    { authorized_agents: 'nope' },
    { authoritative_location: 'https://cdn.example/adagents.json' },
    { authorized_agents: [{ url: 'not a url', authorized_for: '' }] },
    {},
  ];
  const brands = [
    {
      version: '1.0',
      house: { domain: 'acme.example', name: 'Acme', architecture: 'branded_house' },
      brands: [{ id: 'acme', names: [{ en_US: 'Acme' }], keller_type: 'master' }],
    },
    { house: 'x' },
    { authoritative_location: 'https://brands.example/brand.json' },
    {},
  ];
  for (const doc of adagents) expect(vendored.adagents(doc)).toEqual(reference.adagents(doc));
  for (const doc of brands) expect(vendored.brand(doc)).toEqual(reference.brand(doc));
  expect(readdirSync(DEFAULT_SCHEMA_DIR)).toEqual(expect.arrayContaining(['adagents.json', 'brand.json']));
});
