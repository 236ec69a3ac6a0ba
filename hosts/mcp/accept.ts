/**
 * Whether an `Accept` header admits a media type (RFC 9110 section 12.5.1): the most specific
 * matching range decides, `q=0` refuses. With `explicit`, only the type itself or `type/*` count
 * (not `*\/*` or a missing header): a stream is sent only to clients that ask for one.
 */
export function accepts(header: string | null, type: string, explicit = false): boolean {
  if (header === null || header.trim() === '') return !explicit;
  // Clients send the same few headers on every request: answers are kept per type and header (no key built per call).
  const byType = explicit ? explicitAnswers : answers;
  let known = byType.get(type);
  if (!known) byType.set(type, (known = new Map()));
  let answer = known.get(header);
  if (answer === undefined) {
    if (known.size >= 256) known.clear();
    known.set(header, (answer = decide(header, type, explicit)));
  }
  return answer;
}
const answers = new Map<string, Map<string, boolean>>();
const explicitAnswers = new Map<string, Map<string, boolean>>();

function decide(header: string, type: string, explicit: boolean): boolean {
  const [major] = type.split('/');
  let weight: number | null = null;
  let specificity = -1;
  for (const part of header.split(',')) {
    const [range, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const rank = range === type ? 2 : range === `${major}/*` ? 1 : range === '*/*' && !explicit ? 0 : -1;
    if (rank < 0 || rank < specificity) continue;
    const q = params.find((p) => p.startsWith('q='));
    const value = q ? Number(q.slice(2)) : 1;
    specificity = rank;
    weight = Number.isFinite(value) ? value : 1;
  }
  return weight !== null && weight > 0;
}
