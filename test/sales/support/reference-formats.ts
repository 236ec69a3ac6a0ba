import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { definePlugin } from '../../../core/plugin.ts';
import { CreativeFormats, type FormatSummary } from '../../../core/ports/creative-formats.ts';
import { REFERENCE } from '../../support/reference.ts';

/** The 69 reference creative formats (the same deployment's creative agent, as a port). */
export const REFERENCE_AGENT = 'https://creative.adcontextprotocol.org/';
const formats: Array<{ format_id: { id: string }; name: string; type?: string }> = JSON.parse(
  readFileSync(join(REFERENCE, 'data/creative-reference-formats.json'), 'utf8'),
);

/** Stand-in for the creative plugin's CreativeFormats binding (a test plugin, not a product one). */
export const referenceFormats = definePlugin({
  name: 'test-reference-formats',
  provides: [CreativeFormats],
  init(_deps, kernel) {
    const byId = new Map<string, FormatSummary>(
      formats.map((f) => [f.format_id.id, { id: f.format_id.id, name: f.name, ...(f.type ? { type: f.type } : {}) }]),
    );
    kernel.provide(CreativeFormats, {
      agentUrl: REFERENCE_AGENT,
      async find(ids) {
        return new Map(ids.flatMap((id) => (byId.has(id) ? [[id, byId.get(id)!] as const] : [])));
      },
    });
  },
});
