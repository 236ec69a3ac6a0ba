import type { DatabasePort } from '../core/ports/database.ts';
import type { Logger } from '../core/log.ts';

/** How many loads a reader waits through while changes keep arriving before it takes the newest one. */
const MAX_ROUNDS = 5;

/**
 * A read-mostly catalog held in memory by each instance. Writers NOTIFY `channel` inside their
 * transaction; every instance marks its copy stale on the notification (or when its listening
 * connection reconnects, since notifications may have been lost) and reloads it.
 *
 * - One load at a time (single flight): concurrent readers of a stale copy share it.
 * - Versioned: a load that started before a newer notification is kept (it is newer than what
 *   was there) but not taken as current; the next read loads again. A reader waits for a load
 *   that started after the last notification, for at most MAX_ROUNDS loads under a stream of
 *   changes, then gets the newest copy.
 * - A failed load leaves the previous copy in place, still stale; the error reaches the readers.
 * - Current as of a call: `settled` tells when the copy needs no proof; otherwise the caller reads
 *   the catalog version (after the call began) and compares it with the copy's.
 * Values are shared by every reader: read-only by convention.
 */
export class CatalogSnapshot<T> {
  private value: T | undefined;
  private valueGeneration = -1;
  private generation = 0;
  private loading: Promise<T> | null = null;

  /**
   * `local`: the database delivers notifications before the writing call returns (PGlite: this
   * process is its only client), so a copy no notification has made stale holds every committed write.
   */
  constructor(
    private readonly load: () => Promise<T>,
    private readonly local = false,
  ) {}

  /** The copy is stale: a change was announced (or may have been missed). */
  invalidate(): void {
    this.generation++;
  }

  /** Whether a loaded copy is current (no change announced since its load started). */
  get fresh(): boolean {
    return this.value !== undefined && this.valueGeneration === this.generation;
  }

  /**
   * Whether `copy` holds every write committed before this call without reading the version: on a
   * local database, when it is the loaded copy and no notification has made it stale. Elsewhere
   * never (a notification may still be on its way).
   */
  settled(copy: T): boolean {
    return this.local && this.fresh && this.value === copy;
  }

  /** The newest loaded copy, current or not, without loading (diagnostics and tests). */
  peek(): T | undefined {
    return this.value;
  }

  /** The current copy, loading it when missing or stale. */
  get(): Promise<T> {
    if (this.value !== undefined && this.valueGeneration === this.generation) return Promise.resolve(this.value);
    this.loading ??= this.run().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  /** Mark stale and wait for a copy loaded after this call (a reader that knows its copy is outdated). */
  refresh(): Promise<T> {
    this.invalidate();
    return this.get();
  }

  private async run(): Promise<T> {
    for (let round = 1; ; round++) {
      const generation = this.generation;
      const value = await this.load();
      this.value = value;
      this.valueGeneration = generation;
      if (generation === this.generation || round >= MAX_ROUNDS) return value;
    }
  }

  /**
   * Follow change notifications on `channel` from every instance: each one (and a reconnect of the
   * listening connection) marks the copy stale and starts a reload in the background, so readers
   * rarely wait; `changed` runs too (state derived from the catalog). Resolves to the unsubscribe function.
   */
  follow(db: DatabasePort, channel: string, logger: Logger, changed?: () => void): Promise<() => Promise<void>> {
    const reload = () => {
      this.invalidate();
      changed?.();
      this.get().catch((error) => logger.error({ err: error, channel }, 'catalog reload failed; retried on the next read'));
    };
    return db.listen(channel, reload, () => {
      logger.warn({ channel }, 'catalog change listener reconnected; catalog reloaded');
      reload();
    });
  }
}
