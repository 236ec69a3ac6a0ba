import { describe, expect, test } from 'bun:test';
import { declareJson, declareMembers, declaredMembers, JsonBuilder, JsonPiece, jsonOnce, prebuiltJson } from '../../lib/prebuilt-json.ts';

describe('prebuilt JSON', () => {
  test('declared members give JSON.stringify of the object and, escaped, JSON.stringify of that text', () => {
    const shared = { name: 'quote " backslash \\ line\nbreak — \u2028', list: [1, 'a'] };
    const piece = JsonPiece.of(shared);
    const value = declareMembers({ a: 1, skipped: undefined, shared, b: 'x"y', c: null }, { shared: [piece] });
    const built = prebuiltJson(value)!;
    expect(built.json).toBe(JSON.stringify(value));
    expect(`"${built.quoted}"`).toBe(JSON.stringify(JSON.stringify(value)));
  });

  test("pieces and this call's strings mix; an object without a declaration has none", () => {
    const value = declareJson({ k: [{ v: 'é' }] }, ['"k":[', JsonPiece.text('{"v":"é"}'), ']']);
    expect(prebuiltJson(value)).toEqual({ json: JSON.stringify(value), quoted: JSON.stringify(JSON.stringify(value)).slice(1, -1) });
    expect(declaredMembers({})).toBeUndefined();
    expect(prebuiltJson({ a: 1 })).toBeUndefined();
  });

  test('under bun test a declaration that does not match its object fails loudly', () => {
    const value = declareJson({ a: 1 }, ['"a":2']);
    expect(() => prebuiltJson(value)).toThrow(/differs/);
  });
});

test('jsonOnce serializes an undeclared object once and declares it; a declared one keeps its declaration', () => {
  const body = { status: 'completed', text: 'a "quoted" line\n\u2028', list: [1, { x: null }] };
  const json = jsonOnce(body);
  expect(json).toBe(JSON.stringify(body));
  expect(prebuiltJson(body)).toEqual({ json, quoted: JSON.stringify(json).slice(1, -1) });
  const declared = declareJson({ a: 1 }, ['"a":1']);
  expect(jsonOnce(declared)).toBe('{"a":1}');
  expect(jsonOnce({})).toBe('{}');
});

test('JsonBuilder: constant pieces, escaped text of the call and verbatim text give the JSON and its escaped form', () => {
  const value = { id: 'abc_-1.z', note: 'a "b" \\ \n', list: [{ url: 'http://x/p/AZaz09-_' }] };
  const open = JsonPiece.text('"http://x/p/');
  const b = new JsonBuilder().piece(JsonPiece.text('"id":"')).verbatim('abc_-1.z').piece(JsonPiece.text('","note":'));
  b.text(JSON.stringify(value.note)).piece(JsonPiece.text(',"list":[{"url":')).piece(open).verbatim('AZaz09-_').piece(JsonPiece.text('"}]'));
  declareJson(value, [b.done()]);
  expect(prebuiltJson(value)).toEqual({ json: JSON.stringify(value), quoted: JSON.stringify(JSON.stringify(value)).slice(1, -1) });
  // Text that needs escaping is never taken verbatim (checked under bun test).
  expect(() => new JsonBuilder().verbatim('a"b')).toThrow(/verbatim/);
});
