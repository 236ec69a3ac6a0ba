import * as v from 'valibot';
import { ProtocolError } from '../../../core/errors.ts';
import { defineTask, type Json } from '../../../core/task.ts';
import type { DatabasePort } from '../../../core/ports/database.ts';
import type { ConversationPort, ConversationReply, SiOffering } from '../../../core/ports/conversation.ts';
import type { Offerings } from './offerings.ts';
import { renderReply } from './surface.ts';
import { endSession, findSession, insertSession, listSessions, recordTurns, transcript, transcripts, type SessionStatus } from './store.ts';

export interface SiDeps {
  db: DatabasePort;
  offerings: Offerings;
  conversation: ConversationPort;
  sessionTtlSeconds: number;
}

const PROTOCOL = 'sponsored_intelligence';
const text = (max: number) => v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(max, `must be at most ${max} characters`));
const envelope = {
  adcp_major_version: v.optional(v.number()),
  ext: v.optional(v.record(v.string(), v.unknown())),
};
/** What si_initiate_session and si_send_message say they support; negotiated as is (the host's list is not narrowed further). */
const CAPABILITIES = { modalities: { conversational: true }, components: { standard: ['text', 'product_card', 'action_button'] } };

const sessionNotFound = (id: string) =>
  new ProtocolError('SESSION_NOT_FOUND', `No session ${id.slice(0, 64)} of yours`, {
    status: 404,
    field: 'session_id',
    suggestion: 'Start one with si_initiate_session',
  });

function offeringBody(o: SiOffering): Json {
  const body: Json = { offering_id: o.offering_id, title: o.title };
  for (const key of ['summary', 'tagline', 'price_hint', 'image_url', 'landing_url'] as const) if (o[key]) body[key] = o[key];
  return body;
}

/** An offering token carries what si_get_offering was asked, so si_initiate_session can continue from it. */
const encodeToken = (offeringId: string, intent?: string) =>
  Buffer.from(JSON.stringify({ o: offeringId, ...(intent ? { i: intent.slice(0, 500) } : {}) })).toString('base64url');
function decodeToken(token: string): string | null {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { o?: unknown };
    return typeof parsed.o === 'string' ? parsed.o : null;
  } catch {
    return null;
  }
}

const words = (s: string) => new Set(s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);

/** The offering a session opens with: the one named (id or token), else the one whose brand the intent names, else the first. */
async function chooseOffering(d: SiDeps, input: { offering_id?: string; offering_token?: string; intent: string }) {
  const named = input.offering_id ?? (input.offering_token ? decodeToken(input.offering_token) : null);
  if (named) {
    const found = await d.offerings.find(named);
    if (!found)
      throw new ProtocolError('REFERENCE_NOT_FOUND', `No offering ${named.slice(0, 128)}`, {
        status: 404,
        field: input.offering_id ? 'offering_id' : 'offering_token',
        suggestion: `Offerings: ${d.offerings.ids().join(', ')}`,
      });
    return found;
  }
  const intent = words(input.intent);
  const all = d.offerings.all();
  const mentioned = all.find((o) => [...words(`${o.title} ${o.brand_domain.split('.')[0]}`)].some((w) => w.length > 3 && intent.has(w)));
  for (const o of mentioned ? [mentioned, ...all] : all) {
    const found = await d.offerings.find(o.offering_id);
    if (found) return found;
  }
  throw new ProtocolError('REFERENCE_NOT_FOUND', 'This agent has no offering whose brand the registry knows', { status: 404, field: 'offering_id' });
}

function statusAfter(reply: ConversationReply): SessionStatus {
  if (reply.handoff?.type === 'transaction') return 'pending_handoff';
  if (reply.handoff?.type === 'complete') return 'complete';
  return 'active';
}

function answerBody(session: string, reply: ConversationReply, status: SessionStatus, seq: number): Json {
  const body: Json = { session_id: session, session_status: status, response: renderReply(reply, `${session}-${seq}`) };
  if (reply.handoff?.type === 'transaction') {
    const p = reply.handoff.product;
    body.handoff = {
      type: 'transaction',
      intent: { action: 'purchase', product: { product_id: p.product_id, name: p.name, ...(p.price ? { price: p.price } : {}) } },
    };
  } else if (reply.handoff) body.handoff = { type: 'complete' };
  return body;
}

export function siTasks(d: SiDeps) {
  const getOffering = defineTask({
    name: 'si_get_offering',
    description:
      'Describe a sponsored-intelligence offering (what the brand can talk about, its products) before a session; unknown offerings answer available: false.',
    protocol: PROTOCOL,
    auth: 'optional',
    requestSchema: 'sponsored-intelligence/si-get-offering-request.json',
    input: v.looseObject({
      offering_id: text(128),
      intent: v.optional(text(2000)),
      include_products: v.optional(v.boolean(), false),
      product_limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50)), 5),
      ...envelope,
    }),
    async handler({ input, clock }) {
      const found = await d.offerings.find(input.offering_id);
      const checked_at = clock.now().toISOString();
      if (!found) return { available: false, unavailable_reason: 'not_found', alternative_offering_ids: d.offerings.ids(), checked_at };
      const { offering } = found;
      // `offering_id` beside `offering` too: buyers read it from the top level (the official storyboards do).
      const body: Json = {
        available: true,
        offering_id: offering.offering_id,
        offering: offeringBody(offering),
        offering_token: encodeToken(offering.offering_id, input.intent),
        ttl_seconds: 3600,
        checked_at,
      };
      if (input.include_products) {
        const intent = input.intent ? words(input.intent) : null;
        const ranked = intent
          ? [...offering.products].sort((a, b) => Number([...words(b.name)].some((w) => intent.has(w))) - Number([...words(a.name)].some((w) => intent.has(w))))
          : offering.products;
        body.matching_products = ranked.slice(0, input.product_limit).map((p) => ({
          product_id: p.product_id,
          name: p.name,
          ...(p.price ? { price: p.price } : {}),
          ...(p.image_url ? { image_url: p.image_url } : {}),
        }));
        body.total_matching = offering.products.length;
      }
      return body;
    },
  });

  const identity = v.looseObject({
    consent_granted: v.boolean('must be true or false'),
    consent_scope: v.optional(v.array(v.picklist(['name', 'email', 'shipping_address', 'phone', 'locale']))),
    user: v.optional(v.looseObject({ name: v.optional(v.pipe(v.string(), v.maxLength(200))), locale: v.optional(v.pipe(v.string(), v.maxLength(35))) })),
  });

  const initiate = defineTask({
    name: 'si_initiate_session',
    description:
      "Start a sponsored-intelligence conversation with a represented brand from the host's intent; the brand's first answer comes back with the session id.",
    protocol: PROTOCOL,
    mutating: true,
    requestSchema: 'sponsored-intelligence/si-initiate-session-request.json',
    input: v.looseObject({
      intent: text(4000),
      identity,
      offering_id: v.optional(text(128)),
      offering_token: v.optional(text(4096)),
      placement: v.optional(text(200)),
      media_buy_id: v.optional(text(255)),
      supported_capabilities: v.optional(v.record(v.string(), v.unknown())),
      ...envelope,
    }),
    async handler({ input, principal, clock, ids }) {
      const { offering, brand } = await chooseOffering(d, input);
      // Identity is kept only as far as the user consented: the locale, and the name when its scope says so.
      const scope = input.identity.consent_scope;
      const consent = input.identity.consent_granted;
      const user = {
        name: consent && scope?.includes('name') ? input.identity.user?.name : undefined,
        locale: consent && (!scope || scope.includes('locale')) ? input.identity.user?.locale : undefined,
      };
      const reply = await d.conversation.reply({ brand, offering, intent: input.intent, transcript: [], user });
      const now = clock.now();
      const id = ids.uuid7();
      const expiresAt = new Date(now.getTime() + d.sessionTtlSeconds * 1000);
      const status = statusAfter(reply);
      const body = answerBody(id, reply, status, 2);
      await d.db.transaction(async (tx) => {
        await insertSession(tx, {
          id,
          principal_id: principal.id,
          brand_domain: brand.domain,
          offering_id: offering.offering_id,
          intent: input.intent,
          placement: input.placement,
          media_buy_id: input.media_buy_id,
          consent,
          user_name: user.name ?? null,
          user_locale: user.locale ?? null,
          created_at: now,
          expires_at: expiresAt,
        });
        await recordTurns(
          tx,
          { id, turns: 0 },
          [
            { role: 'user', text: input.intent },
            { role: 'brand', text: reply.message, detail: body.response },
          ],
          { status, at: now, expiresAt },
        );
      });
      return { ...body, negotiated_capabilities: CAPABILITIES, session_ttl_seconds: d.sessionTtlSeconds };
    },
  });

  const send = defineTask({
    name: 'si_send_message',
    description:
      "Send the user's next message (or a pressed action button) in a session; the brand answers with text, product cards and actions, or a checkout handoff.",
    protocol: PROTOCOL,
    mutating: true,
    requestSchema: 'sponsored-intelligence/si-send-message-request.json',
    input: v.pipe(
      v.looseObject({
        session_id: text(64),
        message: v.optional(text(4000)),
        action_response: v.optional(v.looseObject({ action: text(200), payload: v.optional(v.record(v.string(), v.unknown())) })),
        ...envelope,
      }),
      v.check((i) => i.message !== undefined || i.action_response !== undefined, 'message: send a message or an action_response'),
    ),
    async handler({ input, principal, clock }) {
      const now = clock.now();
      const read = await findSession(d.db, input.session_id, principal.id);
      if (!read) throw sessionNotFound(input.session_id);
      if (read.status !== 'active' || read.expires_at.getTime() <= now.getTime()) {
        if (read.status === 'active') await endSession(d.db, read.id, 'terminated', 'session_timeout', now);
        throw new ProtocolError('SESSION_TERMINATED', `Session ${read.id} has ended (${read.status === 'active' ? 'timed out' : read.status})`, {
          status: 409,
          field: 'session_id',
          suggestion: 'Start a new session with si_initiate_session',
        });
      }
      const found = await d.offerings.find(read.offering_id);
      if (!found)
        throw new ProtocolError('SERVICE_UNAVAILABLE', 'The brand of this session cannot be read from the registry now; retry', {
          status: 503,
          recovery: 'transient',
        });
      const reply = await d.conversation.reply({
        brand: found.brand,
        offering: found.offering,
        intent: read.intent,
        transcript: await transcript(d.db, read.id),
        message: input.message,
        action: input.action_response,
        user: { name: read.user_name ?? undefined, locale: read.user_locale ?? undefined },
      });
      const status = statusAfter(reply);
      const seq = read.turns + 2;
      const body = answerBody(read.id, reply, status, seq);
      // The answer was written outside the transaction (a model may be slow); it is recorded only if no other turn got in first.
      await d.db.transaction(async (tx) => {
        const locked = await findSession(tx, read.id, principal.id, true);
        if (!locked || locked.turns !== read.turns || locked.status !== 'active') {
          throw new ProtocolError('CONFLICT', 'Another message of this session was answered at the same time; send yours again', {
            status: 409,
            recovery: 'transient',
          });
        }
        const userTurn = input.message ?? `[${input.action_response!.action}]`;
        await recordTurns(
          tx,
          locked,
          [
            { role: 'user', text: userTurn, detail: input.action_response ?? null },
            { role: 'brand', text: reply.message, detail: body.response },
          ],
          { status, at: now, expiresAt: new Date(now.getTime() + d.sessionTtlSeconds * 1000) },
        );
      });
      return body;
    },
  });

  const terminate = defineTask({
    name: 'si_terminate_session',
    description: 'End a session (handoff done, user left, timeout, host decision); ending an ended session answers its final state again.',
    protocol: PROTOCOL,
    requestSchema: 'sponsored-intelligence/si-terminate-session-request.json',
    input: v.looseObject({
      session_id: text(64),
      reason: v.picklist(
        ['handoff_transaction', 'handoff_complete', 'user_exit', 'session_timeout', 'host_terminated'],
        'must be handoff_transaction, handoff_complete, user_exit, session_timeout or host_terminated',
      ),
      termination_context: v.optional(v.record(v.string(), v.unknown())),
      ...envelope,
    }),
    async handler({ input, principal, clock }) {
      const s = await findSession(d.db, input.session_id, principal.id);
      if (!s) throw sessionNotFound(input.session_id);
      const ended = s.status === 'complete' || s.status === 'terminated';
      const status: SessionStatus = ended ? s.status : input.reason.startsWith('handoff_') ? 'complete' : 'terminated';
      if (!ended) await endSession(d.db, s.id, status as 'complete' | 'terminated', input.reason, clock.now());
      const body: Json = { session_id: s.id, terminated: true, session_status: status };
      if (input.reason === 'handoff_transaction') {
        const found = await d.offerings.find(s.offering_id);
        if (found?.offering.landing_url) body.acp_handoff = { checkout_url: found.offering.landing_url, checkout_token: s.id };
      }
      return body;
    },
  });

  const list = defineTask({
    name: 'list_si_sessions',
    description: "The caller's sponsored-intelligence sessions, newest first, with their transcripts on request.",
    protocol: PROTOCOL,
    input: v.looseObject({
      include_transcript: v.optional(v.boolean(), false),
      pagination: v.optional(
        v.object({ max_results: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)), 20), cursor: v.optional(text(512)) }),
      ),
      ...envelope,
    }),
    async handler({ input, principal }) {
      const limit = input.pagination?.max_results ?? 20;
      let after: { at: string; id: string } | undefined;
      if (input.pagination?.cursor) {
        try {
          after = JSON.parse(Buffer.from(input.pagination.cursor, 'base64url').toString('utf8'));
          if (typeof after?.at !== 'string' || !/^[0-9a-f-]{36}$/.test(after.id)) throw new Error('shape');
        } catch {
          throw new ProtocolError('INVALID_REQUEST', 'pagination.cursor: not a cursor of this task', { field: 'pagination.cursor' });
        }
      }
      const rows = await listSessions(d.db, principal.id, limit + 1, after);
      const page = rows.slice(0, limit);
      const turns = input.include_transcript
        ? await transcripts(
            d.db,
            page.map((r) => r.id),
          )
        : null;
      const sessions: Json[] = [];
      for (const r of page) {
        const s: Json = {
          session_id: r.id,
          offering_id: r.offering_id,
          brand_domain: r.brand_domain,
          session_status: r.status,
          turns: r.turns,
          created_at: r.created_at.toISOString(),
          last_turn_at: r.last_turn_at.toISOString(),
        };
        if (r.end_reason) s.end_reason = r.end_reason;
        if (turns) s.transcript = turns.get(r.id) ?? [];
        sessions.push(s);
      }
      const last = page.at(-1);
      const more = rows.length > limit && last;
      return {
        sessions,
        pagination: {
          has_more: !!more,
          ...(more ? { cursor: Buffer.from(JSON.stringify({ at: last.created_at.toISOString(), id: last.id })).toString('base64url') } : {}),
        },
      };
    },
  });

  return [getOffering, initiate, send, terminate, list];
}
