import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask } from '../../core/task.ts';
import { ownedList } from './access.ts';
import type { ListsDeps } from './deps.ts';
import type { KindSpec } from './kinds.ts';
import { renderList } from './render.ts';
import { changeOf, digestOf } from './resolution.ts';
import { accountRef, brandRef, listDescription, listId, listName, versionFields, webhookUrl } from './schemas.ts';
import { saveList, type ListRow } from './store.ts';
import { checkWebhookSupported, notifyChange } from './webhook.ts';

/**
 * update_property_list / update_collection_list: replace members of a list (sources and filters
 * are whole replacements, not patches; webhook_url "" removes the registration). When the
 * resolved content changes and the list has a webhook_url, a `*_list_changed` webhook is queued
 * with the change.
 */
export function updateListTask(deps: ListsDeps, spec: KindSpec) {
  return defineTask({
    name: `update_${spec.noun}`,
    description: `Replace the name, description, ${spec.sourcesField}, filters, brand or webhook_url of a ${spec.noun.replace('_', ' ')}; a change of its resolved content notifies the webhook_url (${spec.event}).`,
    protocol: 'governance',
    requestSchema: `${spec.schemaDir}/update-${spec.noun.replace('_', '-')}-request.json`,
    mutating: true,
    input: v.looseObject({
      ...versionFields,
      list_id: listId,
      account: v.optional(accountRef),
      name: v.optional(listName),
      description: v.optional(listDescription),
      [spec.sourcesField]: v.optional(spec.sources),
      filters: v.optional(spec.filters),
      brand: v.optional(brandRef),
      webhook_url: v.optional(webhookUrl),
    }),
    async handler({ input, principal, clock }) {
      const webhook = input.webhook_url as string | undefined;
      checkWebhookSupported(deps, webhook);
      const before = await ownedList(deps.db, spec, principal, input.list_id, input.account);
      const sources = input[spec.sourcesField] as unknown[] | undefined;
      const filters = input.filters as Record<string, unknown> | undefined;
      const after: ListRow = {
        ...before,
        name: input.name ?? before.name,
        description: input.description ?? before.description,
        sources: sources !== undefined ? (sources as ListRow['sources']) : before.sources,
        filters: filters !== undefined ? filters : before.filters,
        brand: input.brand ?? before.brand,
        webhook_url: webhook === undefined ? before.webhook_url : webhook || null,
        updated_at: clock.now(),
      };
      // Both resolutions before the transaction (the registry is read through its own port).
      const [old, now] = await Promise.all([
        spec.resolve(before.sources, before.filters, deps.catalog),
        spec.resolve(after.sources, after.filters, deps.catalog),
      ]);
      after.resolved_count = now.items.length;
      after.resolved_digest = digestOf(now.keys);
      await deps.db.transaction(async (tx) => {
        if (!(await saveList(tx, after, before.updated_at))) {
          throw new ProtocolError('CONFLICT', `list_id: ${spec.noun.replace('_', ' ')} ${after.list_id} changed during this update; send it again`, {
            field: 'list_id',
            recovery: 'transient',
          });
        }
        if (after.resolved_digest !== digestOf(old.keys)) {
          await notifyChange(tx, deps, spec, after, { ...changeOf(old.keys, now.keys), total: now.items.length });
        }
      });
      return { list: renderList(spec, after, true) };
    },
  });
}
