import type { ConversationReply, SiProduct } from '../../../core/ports/conversation.ts';

type Json = Record<string, unknown>;

/**
 * The reply as the host renders it: an A2UI surface (a Column of Text and a ProductCard per product) and the
 * older `ui_elements` list (text, product_card, action_button) for hosts that predate surfaces.
 */
export function renderReply(reply: ConversationReply, surfaceId: string): { message: string; surface: Json; ui_elements: Json[] } {
  const products: readonly SiProduct[] = reply.products ?? [];
  const components: Json[] = [{ id: 'root', component: { Column: { children: ['message', ...products.map((_, i) => `card-${i}`)] } } }];
  components.push({ id: 'message', parentId: 'root', component: { Text: { text: { literalString: reply.message }, variant: 'body' } } });
  const elements: Json[] = [{ type: 'text', data: { message: reply.message } }];
  products.forEach((p, i) => {
    const lit = (value: string) => ({ literalString: value });
    const card: Json = {
      title: lit(p.name),
      price: lit(p.price ?? 'Price on request'),
      ctaLabel: lit('Buy'),
      action: { name: 'checkout', context: { product_id: lit(p.product_id) } },
    };
    if (p.image_url) card.image = lit(p.image_url);
    if (p.description) card.description = lit(p.description);
    components.push({ id: `card-${i}`, parentId: 'root', component: { ProductCard: card } });
    // A product card shows a price string (required by the element); the offering may not give one.
    const data: Json = { title: p.name, price: p.price ?? 'Price on request', cta: { label: 'Buy', action: 'checkout' } };
    if (p.description) data.description = p.description;
    if (p.image_url) data.image_url = p.image_url;
    elements.push({ type: 'product_card', data });
    elements.push({ type: 'action_button', data: { label: `Buy ${p.name}`, action: 'checkout', payload: { product_id: p.product_id } } });
  });
  return { message: reply.message, surface: { surfaceId, catalogId: 'standard', rootId: 'root', components }, ui_elements: elements };
}
