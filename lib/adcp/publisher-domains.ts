import type { Product } from '../../core/ports/inventory.ts';

/** The publishers whose inventory a product sells (lowercase, distinct): what a property list's domains are matched against. */
export function publisherDomains(product: Pick<Product, 'publisher_properties'>): string[] {
  return [...new Set(product.publisher_properties.map((pp) => String((pp as { publisher_domain?: unknown }).publisher_domain ?? '').toLowerCase()))];
}
