/** The body is not JSON, or an object in it repeats a key (at any depth, inside arrays too). */
export class StrictJsonError extends Error {}

/**
 * Parse JSON (RFC 8259) refusing duplicate object keys, so the verifier and the code that acts on
 * the payload cannot read different values (last-wins vs first-wins parser differentials).
 * Keys are compared after unescaping (`"a"` and `"\u0061"` are the same key).
 */
export function parseStrictJson(text: string): unknown {
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const fail = (what: string): never => {
    throw new StrictJsonError(`${what} at offset ${i}`);
  };
  const string = (): string => {
    const start = i;
    i++; // opening quote
    let hasEscape = false;
    while (i < text.length && text[i] !== '"') {
      const code = text.charCodeAt(i);
      if (code < 0x20) fail('control character in string');
      if (text[i] === '\\') {
        hasEscape = true;
        i++;
        const e = text[i];
        if (e === 'u') {
          if (!/^[0-9A-Fa-f]{4}$/.test(text.slice(i + 1, i + 5))) fail('bad \\u escape');
          i += 4;
        } else if (!e || !'"\\/bfnrt'.includes(e)) fail('bad escape');
      }
      i++;
    }
    if (i >= text.length) fail('unterminated string');
    i++;
    const raw = text.slice(start, i);
    return hasEscape ? JSON.parse(raw) : raw.slice(1, -1);
  };
  const number = (): number => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) fail('bad number');
    i += m![0].length;
    return Number(m![0]);
  };
  const value = (depth: number): unknown => {
    if (depth > 512) fail('nesting too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: Record<string, unknown> = {};
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const key = string();
        if (seen.has(key)) throw new StrictJsonError(`duplicate key ${JSON.stringify(key.slice(0, 32))}`);
        seen.add(key);
        ws();
        if (text[i] !== ':') fail('expected ":"');
        i++;
        const v = value(depth + 1);
        Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return out;
        }
        fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value(depth + 1));
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return out;
        }
        fail('expected "," or "]"');
      }
    }
    if (c === '"') return string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    return fail('unexpected token');
  };
  const result = value(0);
  ws();
  if (i !== text.length) fail('trailing characters');
  return result;
}

/** Strict parse of raw bytes (must be UTF-8). */
export function parseStrictJsonBytes(body: Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new StrictJsonError('body is not UTF-8');
  }
  return parseStrictJson(text);
}
