import { sql } from '../../../core/sql.ts';
import type { Queryable } from '../../../core/ports/database.ts';

export type SessionStatus = 'active' | 'pending_handoff' | 'complete' | 'terminated';

export interface SessionRow {
  id: string;
  principal_id: string;
  brand_domain: string;
  offering_id: string;
  status: SessionStatus;
  intent: string;
  consent: boolean;
  user_name: string | null;
  user_locale: string | null;
  turns: number;
  created_at: Date;
  last_turn_at: Date;
  expires_at: Date;
  ended_at: Date | null;
  end_reason: string | null;
}

const COLUMNS = sql`id::text, principal_id, brand_domain, offering_id, status, intent, consent, user_name, user_locale, turns, created_at, last_turn_at, expires_at, ended_at, end_reason`;

export async function insertSession(
  q: Queryable,
  s: Omit<SessionRow, 'turns' | 'ended_at' | 'end_reason' | 'last_turn_at' | 'status'> & { placement?: string; media_buy_id?: string },
): Promise<void> {
  await q.query(sql`
    INSERT INTO si_sessions (id, principal_id, brand_domain, offering_id, status, intent, placement, media_buy_id, consent, user_name, user_locale, created_at, last_turn_at, expires_at)
    VALUES (${s.id}::uuid, ${s.principal_id}::text, ${s.brand_domain}::text, ${s.offering_id}::text, 'active', ${s.intent}::text, ${s.placement ?? null}::text,
      ${s.media_buy_id ?? null}::text, ${s.consent}::boolean, ${s.user_name}::text, ${s.user_locale}::text, ${s.created_at}::timestamptz,
      ${s.created_at}::timestamptz, ${s.expires_at}::timestamptz)`);
}

/** The caller's session (another caller's is not found); `lock` inside a transaction that records a turn. */
export async function findSession(q: Queryable, id: string, principalId: string, lock = false): Promise<SessionRow | null> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
  const [row] = await q.query<SessionRow>(
    sql`SELECT ${COLUMNS} FROM si_sessions WHERE id = ${id}::uuid AND principal_id = ${principalId}::text ${lock ? sql`FOR UPDATE` : sql``}`,
  );
  return row ? { ...row, created_at: new Date(row.created_at), last_turn_at: new Date(row.last_turn_at), expires_at: new Date(row.expires_at) } : null;
}

type Turn = { role: 'user' | 'brand'; text: string };

export async function transcript(q: Queryable, id: string): Promise<Turn[]> {
  return q.query(sql`SELECT role, text FROM si_turns WHERE session_id = ${id}::uuid ORDER BY seq`);
}

/** The transcripts of several sessions in one query, by session id. */
export async function transcripts(q: Queryable, ids: readonly string[]): Promise<Map<string, Turn[]>> {
  const out = new Map<string, Turn[]>(ids.map((id) => [id, []]));
  if (!ids.length) return out;
  const rows = await q.query<Turn & { session_id: string }>(
    sql`SELECT session_id::text, role, text FROM si_turns WHERE session_id = ANY(${[...ids]}::uuid[]) ORDER BY session_id, seq`,
  );
  for (const { session_id, role, text } of rows) out.get(session_id)?.push({ role, text });
  return out;
}

/** Append turns and move the session on (status, last turn, new expiry). */
export async function recordTurns(
  q: Queryable,
  s: Pick<SessionRow, 'id' | 'turns'>,
  turns: ReadonlyArray<{ role: 'user' | 'brand'; text: string; detail?: unknown }>,
  next: { status: SessionStatus; at: Date; expiresAt: Date },
): Promise<void> {
  for (const [i, t] of turns.entries()) {
    await q.query(sql`
      INSERT INTO si_turns (session_id, seq, role, text, detail, created_at)
      VALUES (${s.id}::uuid, ${s.turns + i + 1}::int, ${t.role}::text, ${t.text}::text, ${t.detail ?? null}::jsonb, ${next.at}::timestamptz)`);
  }
  await q.query(sql`
    UPDATE si_sessions SET status = ${next.status}::text, turns = turns + ${turns.length}::int, last_turn_at = ${next.at}::timestamptz,
      expires_at = ${next.expiresAt}::timestamptz, ended_at = CASE WHEN ${next.status}::text IN ('complete', 'terminated') THEN ${next.at}::timestamptz END
    WHERE id = ${s.id}::uuid`);
}

export async function endSession(q: Queryable, id: string, status: 'complete' | 'terminated', reason: string, at: Date): Promise<void> {
  await q.query(sql`UPDATE si_sessions SET status = ${status}::text, ended_at = ${at}::timestamptz, end_reason = ${reason}::text WHERE id = ${id}::uuid`);
}

/** The caller's sessions, newest first, keyset-paged on (created_at, id). */
export async function listSessions(q: Queryable, principalId: string, limit: number, after?: { at: string; id: string }): Promise<SessionRow[]> {
  return q.query<SessionRow>(sql`
    SELECT ${COLUMNS} FROM si_sessions WHERE principal_id = ${principalId}::text
      ${after ? sql`AND (created_at, id) < (${after.at}::timestamptz, ${after.id}::uuid)` : sql``}
    ORDER BY created_at DESC, id DESC LIMIT ${limit}::int`);
}

/** What the brand showed last in a session: the `response` (message, surface, ui_elements) of its latest turn. */
export async function latestResponse(q: Queryable, id: string): Promise<Record<string, unknown> | null> {
  const [row] = await q.query<{ detail: Record<string, unknown> | null }>(
    sql`SELECT detail FROM si_turns WHERE session_id = ${id}::uuid AND role = 'brand' AND detail IS NOT NULL ORDER BY seq DESC LIMIT 1`,
  );
  return row?.detail ?? null;
}
