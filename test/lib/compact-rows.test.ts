import { expect, test } from 'bun:test';
import { CompactRows, valueAt } from '../../lib/compact-rows.ts';

interface Row {
  id: string;
  name: string;
  tags: string[];
  price: { cpm: number; currency: string } | null;
  owner: string | null;
  daily: number;
}

const rows: Row[] = Array.from({ length: 300 }, (_, i) => ({
  id: `row_${String(i).padStart(3, '0')}`,
  // Text beyond Latin-1 and ASCII: emoji, accents, CJK.
  name: i % 3 === 0 ? `Café ${i} 東京 🎧` : `Name ${i}`,
  tags: i % 2 ? ['sports', 'live'] : ['news'],
  price: i % 5 ? { cpm: 2.5, currency: 'USD' } : null,
  owner: i % 7 ? null : 'org-a',
  daily: i,
}));

/** The rows as a catalog reads them: tags and price as their JSON text. */
const raw = rows.map((r) => ({ ...r, tags: JSON.stringify(r.tags), price: r.price && JSON.stringify(r.price) }));

test('rows come back as they were, fields in their order; a repeated value is one instance, a JSON text parsed once', () => {
  const compact = new CompactRows<Row, 'tags' | 'price'>(raw, { texts: ['id', 'name'], unique: ['id'], json: ['tags', 'price'] });
  expect(compact.size).toBe(300);
  for (let i = 0; i < rows.length; i++) {
    expect(compact.row(i)).toEqual(rows[i]!);
    expect(Object.keys(compact.row(i))).toEqual(Object.keys(rows[i]!));
    expect(compact.text(i, 'name')).toBe(rows[i]!.name);
  }
  expect(compact.row(1).tags).toBe(compact.row(3).tags);
  expect(compact.row(1).price).toBe(compact.row(2).price);
  // Each field's values once (SQL NULL as null); codes as narrow as the number of distinct values allows.
  expect(compact.column('price').values).toEqual([null, { cpm: 2.5, currency: 'USD' }]);
  expect(compact.column('tags').codes).toBeInstanceOf(Uint8Array);
  expect(compact.column('daily').codes).toBeInstanceOf(Uint16Array);
  expect(valueAt(compact.column('owner'), 7)).toBe('org-a');
  expect(valueAt(compact.column('owner'), 8)).toBeNull();
});

test('find: a row by its unique text field, whatever the rows order; none for an unknown value', () => {
  const shuffled = [...rows].reverse();
  const compact = new CompactRows(shuffled, { texts: ['id', 'name'], unique: ['id', 'name'] });
  for (const id of ['row_000', 'row_150', 'row_299']) expect(compact.text(compact.find('id', id)!, 'id')).toBe(id);
  expect(compact.find('name', 'Café 3 東京 🎧')).toBe(296);
  expect(compact.find('id', 'row_300')).toBeUndefined();
  expect(compact.find('id', '')).toBeUndefined();
  expect(compact.find('id', 'zzz')).toBeUndefined();
});

test('no rows: an empty copy', () => {
  const compact = new CompactRows<Row>([], { texts: ['id', 'name'], unique: ['id'] });
  expect(compact.size).toBe(0);
  expect(compact.find('id', 'row_000')).toBeUndefined();
  expect(compact.column('tags').values).toEqual([]);
});
