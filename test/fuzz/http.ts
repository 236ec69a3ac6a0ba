/** One fuzz request as sent, kept printable for the failure report. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** JSON text; `oversize` sends a body past the cap instead. */
  body?: string;
  oversize?: 'declared' | 'chunked';
}

/** Bytes past the default 1 MB body cap. */
const OVERSIZE = 1024 * 1024 + 4096;

/**
 * Send one request; a request that gets no answer within `ms` is a hang and throws.
 * Returns the status and body text.
 */
export async function send(base: string, r: FuzzRequest, ms = 15_000): Promise<{ status: number; text: string; type: string }> {
  let body: BodyInit | undefined = r.body;
  if (r.oversize === 'declared') body = `{"x":"${'y'.repeat(OVERSIZE)}"}`;
  if (r.oversize === 'chunked') body = new Blob([`{"x":"${'y'.repeat(OVERSIZE)}"}`]).stream();
  let res: Response;
  try {
    res = await fetch(base + r.path, { method: r.method, headers: r.headers, body, signal: AbortSignal.timeout(ms) });
  } catch (error) {
    throw new Error(`no answer (${(error as Error).name}) to ${describe(r)}`);
  }
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') ?? '' };
}

export function describe(r: FuzzRequest): string {
  const body = r.oversize
    ? `<${r.oversize} oversize body>`
    : r.body === undefined
      ? ''
      : ` ${JSON.stringify(r.body.length > 300 ? `${r.body.slice(0, 300)}…(${r.body.length})` : r.body)}`;
  return `${r.method} ${r.path.length > 300 ? `${r.path.slice(0, 300)}…` : r.path} ${JSON.stringify(r.headers)}${body}`;
}
