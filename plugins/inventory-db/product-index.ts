import { TextIndex, type TextField } from '../../lib/text-index.ts';
import type { Product } from '../../core/ports/inventory.ts';

type Indexed = Pick<Product, 'name' | 'channels' | 'tags' | 'description'>;

/** What a brief is matched against, and how much each counts: the name most, then channels and tags, then the description. */
export const PRODUCT_FIELDS: TextField<Indexed>[] = [
  { name: 'name', boost: 3, text: (p) => p.name },
  { name: 'keywords', boost: 2, text: (p) => [...p.channels.map((c) => c.replace(/_/g, ' ')), ...p.tags].join(' ') },
  { name: 'description', boost: 1, text: (p) => p.description },
];

/** The index of a catalog copy's products (by position in the copy). */
export const productIndex = (count: number, product: (position: number) => Indexed) => new TextIndex(count, product, PRODUCT_FIELDS);
