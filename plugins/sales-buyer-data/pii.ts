/**
 * Plaintext personal data a buyer must never send (sync_audiences, log_event): identifiers travel
 * as SHA-256 digests of the normalized value. These checks catch the common mistakes (an email
 * address or a formatted phone number in any field); they cannot prove a value is not personal.
 */
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;
/** A phone number as people write it: an international prefix or separators around 7 to 15 digits. */
const FORMATTED_PHONE = /^\+?[\d\s().-]{7,24}$/;
const PHONE_KEYS = /phone|mobile|tel|msisdn/i;

export const SHA256_HEX = /^[a-f0-9]{64}$/;

export function looksLikeEmail(value: string): boolean {
  return EMAIL.test(value.trim());
}

export function looksLikePhone(value: string, key = ''): boolean {
  const digits = value.replace(/\D/g, '').length;
  if (digits < 7 || digits > 15) return false;
  if (PHONE_KEYS.test(key) && /^[\d\s().+-]+$/.test(value)) return true;
  return FORMATTED_PHONE.test(value.trim()) && (value.trim().startsWith('+') || /[\s().-]/.test(value.trim()));
}

/**
 * The path (relative to `value`) of the first plaintext email or phone number in `value`,
 * skipping the members that must hold digests (checked by their own pattern); null when clean.
 */
export function findPlaintextPii(value: unknown, path = '', key = ''): string | null {
  if (typeof value === 'string') return looksLikeEmail(value) || looksLikePhone(value, key) ? path : null;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const hit = findPlaintextPii(item, `${path}[${i}]`, key);
      if (hit !== null) return hit;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [k, item] of Object.entries(value)) {
      if (k === 'hashed_email' || k === 'hashed_phone') continue;
      const hit = findPlaintextPii(item, path ? `${path}.${k}` : k, k);
      if (hit !== null) return hit;
    }
  }
  return null;
}
