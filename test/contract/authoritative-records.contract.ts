import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { AuthoritativeRecordsPort } from '../../core/ports/authoritative-records.ts';

export interface AuthoritativeRecordsSubject {
  port: AuthoritativeRecordsPort;
  db: DatabasePort;
  /** A valid authoritative file of `domain` naming its entry `name`. */
  document(domain: string, name: string): Record<string, unknown>;
  /** What the resolution endpoint serves: the entry's name and whether it is authoritative; null when unknown. */
  resolve(domain: string): Promise<{ name: string; authoritative: boolean } | null>;
  /** A community edit of the domain through the save endpoint; answers the HTTP status. */
  communitySave(domain: string, name: string): Promise<number>;
  close(): Promise<void>;
}

let n = 0;
const domain = (label: string) => `${label}-${process.pid}-${n++}.example`;

/** The authoritative records contract (core/ports/authoritative-records.ts), per registry that records files. */
export function authoritativeRecordsContract(name: string, make: () => Promise<AuthoritativeRecordsSubject>): void {
  describe(`authoritative records contract: ${name}`, () => {
    let s: AuthoritativeRecordsSubject;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(async () => {
      await s?.close();
    });
    const record = (d: string, entryName: string) => s.db.transaction((tx) => s.port.record(tx, d, s.document(d, entryName)));

    test('recorded in a committed transaction: resolution serves it as authoritative', async () => {
      const d = domain('recorded');
      expect(await s.resolve(d)).toBeNull();
      await record(d, 'Recorded Name');
      expect(await s.resolve(d)).toEqual({ name: 'Recorded Name', authoritative: true });
    });

    test('recorded in a rolled-back transaction: nothing is served', async () => {
      const d = domain('rolled-back');
      const boom = new Error('crawl step failed');
      await expect(
        s.db.transaction(async (tx) => {
          await s.port.record(tx, d, s.document(d, 'Never'));
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await s.resolve(d)).toBeNull();
      expect(await s.communitySave(d, 'Community')).toBe(200);
    });

    test('community edits of a recorded domain answer 409; other domains are unaffected', async () => {
      const d = domain('locked');
      await record(d, 'Authoritative');
      expect(await s.communitySave(d, 'Hijack')).toBe(409);
      expect(await s.resolve(d)).toEqual({ name: 'Authoritative', authoritative: true });
      expect(await s.communitySave(domain('free'), 'Free')).toBe(200);
    });

    test('a community entry becomes authoritative when its file is recorded, and stays so', async () => {
      const d = domain('taken-over');
      expect(await s.communitySave(d, 'Community Name')).toBe(200);
      expect(await s.resolve(d)).toEqual({ name: 'Community Name', authoritative: false });
      await record(d, 'Published Name');
      expect(await s.resolve(d)).toEqual({ name: 'Published Name', authoritative: true });
      expect(await s.communitySave(d, 'Community Again')).toBe(409);
    });

    test('recording again replaces the served record', async () => {
      const d = domain('re-recorded');
      await record(d, 'First');
      await record(d, 'Second');
      expect(await s.resolve(d)).toEqual({ name: 'Second', authoritative: true });
    });
  });
}
