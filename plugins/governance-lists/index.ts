import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { WebhookOutbox } from '../../core/ports/webhook-outbox.ts';
import { Signer } from '../../core/ports/signer.ts';
import { PublisherCatalog } from '../../core/ports/publisher-catalog.ts';
import { ListReader } from '../../core/ports/list-reader.ts';
import { Tasks } from '../../core/task.ts';
import { listReader } from './reader.ts';
import type { ListsDeps } from './deps.ts';
import { COLLECTION, PROPERTY } from './kinds.ts';
import { createListTask } from './create-list.ts';
import { getListTask } from './get-list.ts';
import { updateListTask } from './update-list.ts';
import { deleteListTask } from './delete-list.ts';
import { listListsTask } from './list-lists.ts';
import { validatePropertyDeliveryTask } from './validate-delivery.ts';

/**
 * Property lists and collection lists of a governance agent: buyers keep, per account, the
 * properties (domains, apps...) and the collections (shows, series, podcasts) their ads may run
 * on; sellers fetch them with the auth_token the buyer shares; validate_property_delivery checks
 * delivery after the fact. Sources resolve through the registry's PublisherCatalog when the
 * deployment has one (literal identifiers always resolve as given); updates that change a list's
 * resolved content notify its webhook_url through the webhook outbox. Sellers of the same deployment
 * read lists in process (the ListReader port).
 */
export default definePlugin({
  name: 'governance-lists',
  provides: [ListReader],
  deps: {
    db: Database,
    clock: Clock,
    ids: Ids,
    tasks: Tasks,
    outbox: optional(WebhookOutbox),
    signer: optional(Signer),
    catalog: optional(PublisherCatalog),
  },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, ids, tasks, outbox, signer, catalog }, kernel) {
    const deps: ListsDeps = { db, clock, ids, outbox, signer, catalog };
    for (const spec of [PROPERTY, COLLECTION]) {
      tasks.add(createListTask(deps, spec), getListTask(deps, spec), updateListTask(deps, spec), deleteListTask(deps, spec), listListsTask(deps, spec));
    }
    tasks.add(validatePropertyDeliveryTask(deps));
    tasks.declareCapability({ protocol: 'governance', specialisms: ['property-lists', 'collection-lists'] });
    kernel.provide(ListReader, listReader(deps));
  },
});
