import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { IdsPort } from '../../core/ports/ids.ts';

export interface IdsSubject {
  port: IdsPort;
  close(): Promise<void>;
}

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The ids port contract (core/ports/ids.ts). */
export function idsContract(name: string, make: () => Promise<IdsSubject>): void {
  describe(`ids contract: ${name}`, () => {
    let s: IdsSubject;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(async () => {
      await s?.close();
    });

    test('uuid7: lower-case RFC 9562 version 7, strictly increasing within the process, even within one millisecond', () => {
      const ids = Array.from({ length: 20_000 }, () => s.port.uuid7());
      for (const id of ids) expect(id).toMatch(V7);
      for (let i = 1; i < ids.length; i++) if (!(ids[i]! > ids[i - 1]!)) throw new Error(`uuid7 not increasing at ${i}: ${ids[i - 1]} then ${ids[i]}`);
      expect(new Set(ids.map((id) => id.slice(0, 13))).size).toBeLessThan(ids.length);
    });

    test('uuid7 carries the current time in its first 48 bits', () => {
      const before = Date.now();
      const ms = parseInt(s.port.uuid7().replace(/-/g, '').slice(0, 12), 16);
      expect(ms).toBeGreaterThanOrEqual(before - 1);
      expect(ms).toBeLessThanOrEqual(Date.now() + 1);
    });

    test('uuid4: lower-case RFC 9562 version 4, unique', () => {
      const ids = Array.from({ length: 1000 }, () => s.port.uuid4());
      for (const id of ids) expect(id).toMatch(V4);
      expect(new Set(ids).size).toBe(ids.length);
    });
  });
}
