/**
 * JSON built ahead of time. An answer made of parts many answers share (a catalog's products, its
 * formats) declares its JSON text beside the object, assembled from those parts' texts serialized
 * once, so a host writes it without serializing the object, nor escaping it again for MCP's text
 * content (JSON string escaping works character by character: the escaped whole is the escaped parts).
 * The object stays complete (other hosts, tests and replays read it) and must not change once declared.
 */

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
    return new JsonPiece(json, JSON.stringify(json).slice(1, -1));
  }
}

/** A piece serialized once, or JSON text of this call only (escaped when asked for). */
export type JsonPart = JsonPiece | string;

/** Objects whose JSON is `{` + these parts + `}`. */
const declared = new WeakMap<object, readonly JsonPart[]>();

/** Under bun test every declared JSON is compared with JSON.stringify of its object when used: a drifted declaration fails loudly. */
const VERIFY = process.env.NODE_ENV === 'test';

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

const quote = (json: string) => JSON.stringify(json).slice(1, -1);

/** `value`'s JSON text and its escaped form, from its declaration; undefined when it has none. */
export function prebuiltJson(value: unknown): { json: string; quoted: string } | undefined {
  const members = declaredMembers(value);
  if (!members) return undefined;
  let json = '{';
  let quoted = '{';
  for (const p of members) {
    if (typeof p === 'string') {
      json += p;
      quoted += quote(p);
    } else {
      json += p.json;
      quoted += p.quoted;
    }
  }
  json += '}';
  quoted += '}';
  if (VERIFY && json !== JSON.stringify(value)) throw new Error(`declared JSON differs from the object's:\n${json}\n${JSON.stringify(value)}`);
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
