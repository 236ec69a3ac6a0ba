import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { WebhookOutboxPort } from '../../core/ports/webhook-outbox.ts';
import type { SignerPort } from '../../core/ports/signer.ts';
import type { PublisherCatalogPort } from '../../core/ports/publisher-catalog.ts';

/** What the list tasks use; the optional ports change what they can do, never whether they run. */
export interface ListsDeps {
  db: DatabasePort;
  clock: ClockPort;
  ids: IdsPort;
  /** Change webhooks (`webhook_url`); without it a webhook_url is refused. */
  outbox?: WebhookOutboxPort;
  /** Signs the `signature` member of change webhooks. */
  signer?: SignerPort;
  /** Publishers' properties and collections (a registry in the deployment); without it only literal identifiers resolve. */
  catalog?: PublisherCatalogPort;
}
