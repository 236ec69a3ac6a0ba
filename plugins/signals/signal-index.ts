import { TextIndex, type TextField } from '../../lib/text-index.ts';
import type { SignalRow } from './catalog.ts';

/** What a spec is matched against, and how much each counts: the name most, then tags, then the description. */
export const SIGNAL_FIELDS: TextField<Pick<SignalRow, 'name' | 'tags' | 'description'>>[] = [
  { name: 'name', boost: 3, text: (s) => s.name },
  { name: 'tags', boost: 2, text: (s) => s.tags.join(' ') },
  { name: 'description', boost: 1, text: (s) => s.description },
];

/** The index of a catalog copy's signals (by position in the copy). */
export const signalIndex = (count: number, signal: (position: number) => Pick<SignalRow, 'name' | 'tags' | 'description'>) =>
  new TextIndex(count, signal, SIGNAL_FIELDS);
