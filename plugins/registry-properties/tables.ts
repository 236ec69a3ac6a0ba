import type { RevisionTables } from '../../lib/revisioned/store.ts';

/** One entry per publisher domain: hosted (community-maintained) or backed by its adagents.json. */
export const PROPERTY_TABLES: RevisionTables = {
  entries: 'property_entries',
  revisions: 'property_revisions',
  authoritative: ['adagents_json'],
  noun: 'property',
};
