import type { RevisionTables } from '../../lib/revisioned/store.ts';

export const BRAND_TABLES: RevisionTables = {
  entries: 'brands',
  revisions: 'brand_revisions',
  authoritative: ['brand_json', 'hosted'],
  noun: 'brand',
};
