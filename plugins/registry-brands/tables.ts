import type { RevisionTables } from '../registry-revisions/store.ts';

export const BRAND_TABLES: RevisionTables = {
  entries: 'brands',
  revisions: 'brand_revisions',
  authoritative: ['brand_json', 'hosted'],
  noun: 'brand',
};
