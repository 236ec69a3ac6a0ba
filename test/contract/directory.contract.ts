import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { DirectoryPort } from '../../core/ports/directory.ts';

export interface DirectorySubject<T> {
  port: DirectoryPort<T>;
  /** Create an entry of `domain` named `name` the way users do. */
  seed(domain: string, name: string): Promise<void>;
  /** The domain a match belongs to. */
  domainOf(match: T): string;
  close(): Promise<void>;
}

let runs = 0;

/** The site-search directory contract (core/ports/directory.ts), per registry that provides one. */
export function directoryContract<T>(name: string, make: () => Promise<DirectorySubject<T>>): void {
  describe(`directory contract: ${name}`, () => {
    let s: DirectorySubject<T>;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(async () => {
      await s?.close();
    });
    /** A word no other test's entries contain. */
    const word = () => `qz${process.pid}x${runs++}`;
    let d = 0;
    const domain = () => `entry-${process.pid}-${d++}.example`;
    const domains = async (term: string, limit = 50) => (await s.port.search(term, limit)).map(s.domainOf);

    test('a case-insensitive substring of the name finds the entry, and only matching entries', async () => {
      const w = word();
      const [hit, miss] = [domain(), domain()];
      await s.seed(hit, `The ${w.toUpperCase()} Gazette`);
      await s.seed(miss, 'Unrelated Title');
      expect(await domains(w)).toEqual([hit]);
      expect(await domains(`${w} gaz`)).toEqual([hit]);
      expect(await domains(`${w}zzz`)).toEqual([]);
    });

    test('the term is literal: % and _ are characters, not wildcards', async () => {
      const w = word();
      const [percent, digits, underscore, letter] = [domain(), domain(), domain(), domain()];
      await s.seed(percent, `${w} 100% Daily`);
      await s.seed(digits, `${w} 1000 Daily`);
      await s.seed(underscore, `${w} a_b Weekly`);
      await s.seed(letter, `${w} axb Weekly`);
      expect(await domains(`${w} 100%`)).toEqual([percent]);
      expect(await domains(`${w} a_b`)).toEqual([underscore]);
      expect(await domains('%%')).toEqual([]);
    });

    test('at most `limit` results, in a stable order: a smaller limit answers a prefix of a larger one', async () => {
      const w = word();
      for (let i = 0; i < 6; i++) await s.seed(domain(), `${w} Edition ${String.fromCharCode(102 - i)}`);
      const all = await domains(w, 50);
      expect(all).toHaveLength(6);
      expect(await domains(w, 50)).toEqual(all);
      expect(await domains(w, 4)).toEqual(all.slice(0, 4));
      expect(await domains(w, 1)).toEqual(all.slice(0, 1));
    });
  });
}
