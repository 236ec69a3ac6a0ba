/** The raw-SQL baseline of a write: its recorded statements, replayed with the call's new ids (UUIDs, dashed or not) replaced by fresh ones; ids in `keep` (existing rows) stay. */
export const ID = /[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}/g;
export type Statement = { text: string; values: unknown[] };
export function renew(statements: Statement[], keep: Set<string>): Statement[] {
  const map = new Map<string, string>();
  const swap = (s: string) =>
    s.replace(ID, (id) => {
      const plain = id.replaceAll('-', '');
      if (keep.has(plain)) return id;
      let next = map.get(plain);
      if (!next) map.set(plain, (next = crypto.randomUUID().replaceAll('-', '')));
      return id.includes('-') ? `${next.slice(0, 8)}-${next.slice(8, 12)}-${next.slice(12, 16)}-${next.slice(16, 20)}-${next.slice(20)}` : next;
    });
  const walk = (v: unknown): unknown =>
    typeof v === 'string'
      ? swap(v)
      : Array.isArray(v)
        ? v.map(walk)
        : v && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
          : v;
  return statements.map((s) => ({ text: s.text, values: s.values.map(walk) }));
}
