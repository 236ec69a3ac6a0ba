import * as v from 'valibot';
import { defineTask } from '../../core/task.ts';
import { owningAccount } from './accounts.ts';
import type { ListsDeps } from './deps.ts';
import type { KindSpec } from './kinds.ts';
import { renderList } from './render.ts';
import { digestOf } from './resolution.ts';
import { accountRef, brandRef, listDescription, listName, versionFields, webhookUrl } from './schemas.ts';
import { insertList, type ListRow } from './store.ts';
import { hashToken, newListToken } from './tokens.ts';
import { checkWebhookSupported } from './webhook.ts';

/** create_property_list / create_collection_list: a new list of an account, resolved once; its auth_token is shown only here. */
export function createListTask(deps: ListsDeps, spec: KindSpec) {
  return defineTask({
    name: `create_${spec.noun}`,
    description: `Create a ${spec.noun.replace('_', ' ')} of an account (sources, filters, brand). Answers the list and an auth_token, shown only once, that sellers present to get_${spec.noun}.`,
    protocol: 'governance',
    requestSchema: `${spec.schemaDir}/create-${spec.noun.replace('_', '-')}-request.json`,
    mutating: true,
    input: v.looseObject({
      ...versionFields,
      account: v.optional(accountRef),
      name: listName,
      description: v.optional(listDescription),
      [spec.sourcesField]: v.optional(spec.sources),
      filters: v.optional(spec.filters),
      brand: v.optional(brandRef),
      // Not in create-*-list-request (update sets it): taken here too, so a list can notify from its start.
      webhook_url: v.optional(webhookUrl),
    }),
    async handler({ input, principal, clock, ids }) {
      const sources = (input[spec.sourcesField] as unknown[] | undefined) ?? null;
      const filters = (input.filters as Record<string, unknown> | undefined) ?? null;
      const webhook = (input.webhook_url as string | undefined) || null;
      checkWebhookSupported(deps, webhook ?? undefined);
      // Resolved before the transaction: the registry is read through its own port.
      const resolution = await spec.resolve(sources, filters, deps.catalog);
      const token = newListToken();
      const now = clock.now();
      const row = await deps.db.transaction(async (tx) => {
        const r: ListRow = {
          list_id: `${spec.idPrefix}${ids.uuid7().replace(/-/g, '')}`,
          kind: spec.kind,
          owner: principal.orgId,
          account_id: await owningAccount(deps, tx, principal.orgId, input.account),
          name: input.name,
          description: input.description ?? null,
          sources: sources as ListRow['sources'],
          filters,
          brand: input.brand ?? null,
          webhook_url: webhook,
          token_hash: hashToken(token),
          resolved_count: resolution.items.length,
          resolved_digest: digestOf(resolution.keys),
          created_at: now,
          updated_at: now,
        };
        await insertList(tx, r);
        return r;
      });
      return { list: renderList(spec, row, true), auth_token: token };
    },
  });
}
