import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Judged } from './ndcg.ts';

/** A labelled set of test/fixtures/relevance/ (signals.json: signal specs; products.json: briefs). */
export function labelledSet(name: 'signals' | 'products'): Judged[] {
  return JSON.parse(readFileSync(join(import.meta.dir, '../fixtures/relevance', `${name}.json`), 'utf8')).queries;
}
