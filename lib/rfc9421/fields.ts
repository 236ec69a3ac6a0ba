import { parseDictionary, serializeDictionary, serializeInnerList, type Dictionary, type InnerList, type Item, type Parameters } from 'structured-headers';
import { normalizeBinaryDictionary, toBase64Url } from './binary.ts';

export const LABEL = 'sig1';
/** The five components every webhook signature covers, in the order the signer writes them. */
export const REQUIRED_COMPONENTS = ['@method', '@target-uri', '@authority', 'content-type', 'content-digest'] as const;

export interface SignatureParams {
  created?: number;
  expires?: number;
  nonce?: string;
  keyid?: string;
  alg?: string;
  tag?: string;
}

export interface ParsedSignature {
  components: string[];
  params: SignatureParams;
  /** The `@signature-params` value (the serialized inner list). */
  paramsValue: string;
  signature: Uint8Array;
}

export class HeaderMalformed extends Error {}

const KNOWN = ['created', 'expires', 'nonce', 'keyid', 'alg', 'tag'] as const;

/**
 * Member keys of an RFC 8941 dictionary, in order and with repeats (the parser keeps only the last
 * of a repeated key; a verifier must refuse the ambiguity instead). Commas inside strings or inner
 * lists do not separate members.
 */
export function dictionaryKeys(header: string): string[] {
  const keys: string[] = [];
  let member = '';
  let quoted = false;
  let depth = 0;
  const flush = () => {
    const key = member.trim().split(/[=;]/, 1)[0]!.trim();
    if (key) keys.push(key);
    member = '';
  };
  for (let i = 0; i < header.length; i++) {
    const c = header[i]!;
    if (quoted) {
      if (c === '\\')
        i++; // an escaped character never ends the string
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      flush();
      continue;
    }
    member += c;
  }
  flush();
  return keys;
}

/** True when a dictionary header names one key twice. */
export function hasDuplicateKeys(header: string): boolean {
  const keys = dictionaryKeys(header);
  return new Set(keys).size !== keys.length;
}

/**
 * Parse the `sig1` member of `Signature-Input` and `Signature` (RFC 8941 dictionaries). Other labels
 * are ignored; the pair must be complete, no label may repeat, and a known parameter of the wrong
 * type (`keyid=foo`, a token, not a string) is malformed rather than absent.
 */
export function parseSignatureHeaders(signatureInput: string | null, signature: string | null): ParsedSignature {
  if (!signatureInput || !signature) throw new HeaderMalformed('Signature and Signature-Input must both be present');
  if (hasDuplicateKeys(signatureInput) || hasDuplicateKeys(signature)) throw new HeaderMalformed('a signature label is repeated');
  let inputDict: Dictionary;
  let sigDict: Dictionary;
  try {
    inputDict = parseDictionary(signatureInput);
    const normalized = normalizeBinaryDictionary(signature);
    if (!normalized) throw new HeaderMalformed('Signature byte sequence is not base64url (or mixes alphabets)');
    sigDict = parseDictionary(normalized);
  } catch (error) {
    if (error instanceof HeaderMalformed) throw error;
    throw new HeaderMalformed(`unparseable structured field: ${(error as Error).message}`);
  }
  const input = inputDict.get(LABEL);
  const sig = sigDict.get(LABEL);
  if (!input || !sig) throw new HeaderMalformed(`label ${LABEL} missing from Signature-Input or Signature`);
  if (!Array.isArray(input[0])) throw new HeaderMalformed('Signature-Input sig1 is not an inner list');
  if (!(sig[0] instanceof ArrayBuffer)) throw new HeaderMalformed('Signature sig1 is not a byte sequence');
  const components: string[] = [];
  for (const [value, params] of input[0] as Item[]) {
    if (typeof value !== 'string') throw new HeaderMalformed('a covered component is not a string');
    if (params.size > 0) throw new HeaderMalformed('component parameters are not supported by this profile');
    components.push(value);
  }
  const raw = input[1];
  const params: SignatureParams = {};
  for (const name of KNOWN) {
    if (!raw.has(name)) continue;
    const value = raw.get(name);
    if (name === 'created' || name === 'expires') {
      if (typeof value !== 'number' || !Number.isInteger(value)) throw new HeaderMalformed(`parameter ${name} must be an integer`);
      params[name] = value;
    } else {
      if (typeof value !== 'string') throw new HeaderMalformed(`parameter ${name} must be a quoted string`);
      params[name] = value;
    }
  }
  return { components, params, paramsValue: serializeInnerList(input as InnerList), signature: new Uint8Array(sig[0]) };
}

/** The `@signature-params` inner list the signer writes (same order as the profile lists them). */
export function signatureParamsList(components: readonly string[], params: Required<SignatureParams>): InnerList {
  const p: Parameters = new Map<string, any>([
    ['created', params.created],
    ['expires', params.expires],
    ['nonce', params.nonce],
    ['keyid', params.keyid],
    ['alg', params.alg],
    ['tag', params.tag],
  ]);
  return [components.map((c) => [c, new Map()] as Item), p];
}

export function serializeSignatureInput(list: InnerList): string {
  return serializeDictionary(new Map([[LABEL, list]]));
}

/** `sig1=:<base64url>:` — the profile's binary encoding (see binary.ts). */
export function serializeSignature(signature: Uint8Array): string {
  return `${LABEL}=:${toBase64Url(signature)}:`;
}

export { serializeInnerList };
