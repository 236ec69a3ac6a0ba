/**
 * JSON built ahead of time. An answer made of parts many answers share (a catalog's products, its
 * formats) declares its JSON text beside the object, assembled from those parts' texts serialized
 * once, so a host writes it without serializing the object, nor escaping it again for MCP's text
 * content (JSON string escaping works character by character: the escaped whole is the escaped parts).
 * The object stays complete (other hosts, tests and replays read it) and must not change once declared.
 */

/** Under bun test every declared JSON is compared with JSON.stringify of its object when used: a drifted declaration fails loudly. */
const VERIFY = process.env.NODE_ENV === 'test';

/** Characters JSON string escaping may change (any surrogate: only a lone one is, JSON.stringify decides). */
const ESCAPABLE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * The escaped form of a JSON text: what JSON.stringify puts between the quotes. A text without a character
 * to escape (`{`, `,`, digits) is its own escaped form: JSON.stringify of a string costs ~0.35 us however short.
 */
const quote = (json: string) => (ESCAPABLE.test(json) ? JSON.stringify(json).slice(1, -1) : json);

/** A JSON text serialized once, with its escaped form (the content of a JSON string holding it). */
export class JsonPiece {
  private constructor(
    readonly json: string,
    readonly quoted: string,
  ) {}

  /** `value` serialized (as JSON.stringify does) and escaped, once. */
  static of(value: unknown): JsonPiece {
    return JsonPiece.text(JSON.stringify(value));
  }

  /** A JSON text (or a fragment of one) escaped once. */
  static text(json: string): JsonPiece {
    return new JsonPiece(json, quote(json));
  }

  /** A JSON text and its escaped form made side by side (JsonBuilder); checked under bun test. */
  static pair(json: string, quoted: string): JsonPiece {
    if (VERIFY && JSON.stringify(json) !== `"${quoted}"`) throw new Error(`not the escaped form of ${json}: ${quoted}`);
    return new JsonPiece(json, quoted);
  }
}

/** A piece serialized once, or JSON text of this call only (escaped when asked for). */
export type JsonPart = JsonPiece | string;

/**
 * A JSON text and its escaped form built side by side, for an answer of a fixed shape whose long
 * texts are known to escape to themselves (sealed links): constants come as pieces escaped once,
 * this call's short texts are escaped as added, the long ones are taken as is, never scanned.
 * (Declaring each nested object instead costs more than JSON.stringify saves: many small
 * serializations, each with its overhead.)
 */
export class JsonBuilder {
  // Ropes (O(1) appends), flattened once when the answer is written.
  private json = '';
  private quoted = '';

  piece(p: JsonPiece): this {
    this.json += p.json;
    this.quoted += p.quoted;
    return this;
  }

  /** JSON text of this call, escaped now. */
  text(json: string): this {
    this.json += json;
    this.quoted += quote(json);
    return this;
  }

  /** JSON text the caller knows escapes to itself (no `"`, `\\`, control characters or lone surrogates: base64url, UUIDs), taken as is, never scanned; checked under bun test. */
  verbatim(json: string): this {
    if (VERIFY && JSON.stringify(json) !== `"${json}"`) throw new Error(`not verbatim JSON text: ${json}`);
    this.json += json;
    this.quoted += json;
    return this;
  }

  done(): JsonPiece {
    return JsonPiece.pair(this.json, this.quoted);
  }
}

/** Objects whose JSON is `{` + these parts + `}`. */
const declared = new WeakMap<object, readonly JsonPart[]>();

/** Declare `value`'s JSON: `{` + `members` + `}` (a value that is not a plain object with exactly those members must not be declared). */
export function declareJson<T extends object>(value: T, members: readonly JsonPart[]): T {
  declared.set(value, members);
  return value;
}

/**
 * Declare a plain object's JSON from its own members in order: those named in `given` from their
 * parts, the others serialized now (undefined ones left out, as JSON.stringify does).
 */
export function declareMembers<T extends Record<string, unknown>>(value: T, given: Readonly<Record<string, readonly JsonPart[]>>): T {
  const parts: JsonPart[] = [];
  for (const key of Object.keys(value)) {
    const member = value[key];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    parts.push(`${parts.length ? ',' : ''}${JSON.stringify(key)}:`);
    const pre = given[key];
    if (pre) for (const p of pre) parts.push(p);
    else parts.push(JSON.stringify(member));
  }
  return declareJson(value, parts);
}

/** The declared members of `value` (what goes between its braces), if any. */
export const declaredMembers = (value: unknown): readonly JsonPart[] | undefined =>
  value !== null && typeof value === 'object' ? declared.get(value) : undefined;

/** `value`'s JSON text and its escaped form, from its declaration; undefined when it has none. */
export function prebuiltJson(value: unknown): { json: string; quoted: string } | undefined {
  const members = declaredMembers(value);
  if (!members) return undefined;
  // Ropes (O(1) appends), flattened once by whoever writes the answer.
  let json = '{';
  let quoted = '';
  // Text of this call between pieces, escaped in one go: parts are often many short strings.
  let run = '{';
  for (const p of members) {
    if (typeof p === 'string') {
      json += p;
      run += p;
    } else {
      json += p.json;
      if (run) quoted += quote(run);
      quoted += p.quoted;
      run = '';
    }
  }
  json += '}';
  quoted += quote(`${run}}`);
  if (VERIFY && json !== JSON.stringify(value)) throw new Error(`declared JSON differs from the object's:\n${json}\n${JSON.stringify(value)}`);
  if (VERIFY && quoted !== quote(json)) throw new Error(`declared JSON's escaped form differs:\n${quoted}\n${quote(json)}`);
  return { json, quoted };
}

/**
 * `value`'s JSON text, declared on it when it had no declaration (its text and escaped form made
 * once): a response stored for replays as JSON text is not serialized again by the host answering it.
 */
export function jsonOnce(value: Record<string, unknown>): string {
  const prebuilt = prebuiltJson(value);
  if (prebuilt) return prebuilt.json;
  const json = JSON.stringify(value);
  declareJson(value, [JsonPiece.text(json.slice(1, -1))]);
  return json;
}
