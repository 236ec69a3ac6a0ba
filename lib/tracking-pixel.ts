/** The smallest transparent GIF: what tracking and conversion pixels answer. */
export const TRANSPARENT_GIF = Uint8Array.from(atob('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7'), (c) => c.charCodeAt(0));

/** Headers of a pixel answer: never cached (each hit counts), embeddable from any site. */
export const PIXEL_HEADERS = { 'content-type': 'image/gif', 'cache-control': 'no-store', 'cross-origin-resource-policy': 'cross-origin' } as const;
