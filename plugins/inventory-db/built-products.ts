import type { Product } from '../../core/ports/inventory.ts';
import { productWords, type ProductWords } from './brief.ts';

interface Built {
  product: Product;
  words?: ProductWords;
}

/**
 * The products of one catalog copy as answers give them, each built once from the compact rows
 * and shared by the answers that follow (read-only, like the rows' values), with the words
 * brief_relevance looks for. At most `max` are kept (the oldest built goes first), so a large
 * catalog's copy stays compact (lib/compact-rows.ts) however many products answers have named.
 */
export class BuiltProducts {
  private readonly built = new Map<number, Built>();

  constructor(
    private readonly build: (position: number) => Product,
    private readonly max = 4096,
  ) {}

  private entry(position: number): Built {
    let b = this.built.get(position);
    if (b === undefined) {
      if (this.built.size >= this.max) this.built.delete(this.built.keys().next().value!);
      b = { product: this.build(position) };
      this.built.set(position, b);
    }
    return b;
  }

  /** The product at `position`. */
  product(position: number): Product {
    return this.entry(position).product;
  }

  /** The words of the product at `position`. */
  words(position: number): ProductWords {
    const b = this.entry(position);
    return (b.words ??= productWords(b.product));
  }
}
