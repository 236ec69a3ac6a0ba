import { token } from '../token.ts';

/**
 * Which organization holds a brand's registry entry: the one that created its community entry (with
 * proof of control of the domain where the deployment requires it); a later crawled brand.json keeps
 * it. Adapter: registry-brands. Contract: null when the registry has no entry for the domain or the
 * entry has no holding organization (crawled brand.json or enrichment only).
 */
export interface BrandHoldersPort {
  holder(domain: string): Promise<string | null>;
}

export const BrandHolders = token<BrandHoldersPort>('registry.brand-holders');
