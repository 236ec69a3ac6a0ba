/**
 * The creative agent that defines AdCP's reference formats (display_300x250, video_30s...): format
 * ids that name no agent of their own mean this one, and a creative agent seeded with the reference
 * catalog answers for it.
 */
export const REFERENCE_CREATIVE_AGENT = 'https://creative.adcontextprotocol.org/';
