/**
 * Sponsored intelligence on the brand agent: offerings, sessions, turns through the Conversation port
 * (the built-in catalog conversation, and a plugged-in one), handoffs, termination, the transcript,
 * consent, expiry and ownership; answers valid against both AdCP versions, over a real server.
 */
import { expect, test } from 'bun:test';
import { Database } from '../../core/ports/database.ts';
import { sql } from '../../core/sql.ts';
import { ManualClock } from '../../core/ports/clock.ts';
import { Conversation, type ConversationPort } from '../../core/ports/conversation.ts';
import { definePlugin } from '../../core/plugin.ts';
import { forEachDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { identity, key, OFFERING, OTHER, siServer, TOKEN, valid, VOLTA } from './si-fixture.ts';

forEachDatabase(
  'sponsored intelligence',
  (adapter, schema) => siServer(adapter, schema),
  (s) => s.close(),
  (get) => {
    const c = () => restClient(get(), TOKEN);

    test('si_get_offering: a configured offering with its products, a default one per brand, unknown ones unavailable', async () => {
      const known = await c().call('si_get_offering', { offering_id: 'nova_volta', intent: 'road trips', include_products: true, product_limit: 1 });
      valid('si-get-offering-response.json', known.body);
      expect(known.body).toMatchObject({ available: true, offering_id: 'nova_volta', offering: { title: OFFERING.title }, total_matching: 2 });
      expect((known.body.matching_products as unknown[]).length).toBe(1);
      const unknown = await c().call('si_get_offering', { offering_id: 'nope' });
      valid('si-get-offering-response.json', unknown.body);
      expect(unknown.body).toMatchObject({ available: false, unavailable_reason: 'not_found' });
      expect(unknown.body.alternative_offering_ids).toEqual(['nova_volta', 'plain_conversational_v1']);
    });

    test('a session: opening answer with product cards, a question, a purchase handoff, termination, the transcript', async () => {
      const opened = await c().call('si_initiate_session', { idempotency_key: key(), intent: 'wants to talk to Nova about electric road trips', identity });
      expect(opened.ok).toBe(true);
      valid('si-initiate-session-response.json', opened.body);
      const session = opened.body.session_id as string;
      expect(opened.body.session_status).toBe('active');
      const response = opened.body.response as any;
      // The name was in the consent scope: the brand may use it.
      expect(response.message).toStartWith('Hi Dana!');
      expect(response.surface.components.find((x: any) => x.component.ProductCard)).toBeTruthy();
      expect(response.ui_elements.filter((e: any) => e.type === 'product_card').map((e: any) => e.data.title)).toContain(VOLTA.name);

      const asked = await c().call('si_send_message', { idempotency_key: key(), session_id: session, message: 'How far does the Long Range go?' });
      valid('si-send-message-response.json', asked.body);
      expect(asked.body.session_status).toBe('active');
      expect((asked.body.response as any).message).toContain('320 miles');

      const bought = await c().call('si_send_message', {
        idempotency_key: key(),
        session_id: session,
        action_response: { action: 'checkout', payload: { product_id: 'volta_lr' } },
      });
      valid('si-send-message-response.json', bought.body);
      expect(bought.body).toMatchObject({
        session_status: 'pending_handoff',
        handoff: { type: 'transaction', intent: { product: { product_id: 'volta_lr' } } },
      });

      const after = await c().call('si_send_message', { idempotency_key: key(), session_id: session, message: 'And the colours?' });
      expect(after.body.code).toBe('SESSION_TERMINATED');

      const ended = await c().call('si_terminate_session', { session_id: session, reason: 'handoff_transaction' });
      valid('si-terminate-session-response.json', ended.body);
      expect(ended.body).toMatchObject({ terminated: true, session_status: 'complete', acp_handoff: { checkout_url: OFFERING.landing_url } });
      // Ending an ended session answers its final state again.
      expect((await c().call('si_terminate_session', { session_id: session, reason: 'user_exit' })).body).toMatchObject({
        terminated: true,
        session_status: 'complete',
      });

      const listed = await c().call('list_si_sessions', { include_transcript: true });
      const mine = (listed.body.sessions as any[]).find((x) => x.session_id === session);
      expect(mine).toMatchObject({ session_status: 'complete', turns: 6, end_reason: 'handoff_transaction' });
      expect(mine.transcript.map((t: any) => t.role)).toEqual(['user', 'brand', 'user', 'brand', 'user', 'brand']);
      expect(mine.transcript[2].text).toBe('How far does the Long Range go?');
    });

    test('consent: without it nothing of the user is kept; another host cannot see or use the session', async () => {
      const opened = await c().call('si_initiate_session', {
        idempotency_key: key(),
        intent: 'electric SUV for daily driving',
        identity: { consent_granted: false, user: { name: 'Eve' } },
        offering_id: 'nova_volta',
      });
      expect((opened.body.response as any).message).toStartWith('Hi! ');
      const [row] = await get()
        .deployment.get(Database)
        .query<{ user_name: string | null; consent: boolean }>(
          sql`SELECT user_name, consent FROM si_sessions WHERE id = ${opened.body.session_id as string}::uuid`,
        );
      expect(row).toEqual({ user_name: null, consent: false });
      const other = restClient(get(), OTHER);
      const stolen = await other.call('si_send_message', { idempotency_key: key(), session_id: opened.body.session_id, message: 'hello' });
      expect(stolen.body.code).toBe('SESSION_NOT_FOUND');
      expect(((await other.call('list_si_sessions', {})).body.sessions as unknown[]).length).toBe(0);
    });

    test('bad input is a clear 4xx; a replayed turn is not answered twice', async () => {
      const none = await c().call('si_send_message', { idempotency_key: key(), session_id: '01900000-0000-7000-8000-000000000001' });
      expect(none.body.code).toBe('INVALID_REQUEST');
      expect(String(none.body.message)).toContain('message');
      const badReason = await c().call('si_terminate_session', { session_id: '01900000-0000-7000-8000-000000000001', reason: 'bored' });
      expect(badReason.body.code).toBe('INVALID_REQUEST');
      const unknownOffering = await c().call('si_initiate_session', { idempotency_key: key(), intent: 'x', identity, offering_id: 'nope' });
      expect(unknownOffering.body.code).toBe('REFERENCE_NOT_FOUND');

      const opened = await c().call('si_initiate_session', { idempotency_key: key(), intent: 'Nova road trips', identity });
      const turn = { idempotency_key: key(), session_id: opened.body.session_id, message: 'Tell me about the Standard' };
      const first = await c().call('si_send_message', turn);
      const again = await c().call('si_send_message', turn);
      expect(again.body.replayed).toBe(true);
      expect((again.body.response as any).message).toBe((first.body.response as any).message);
      const listed = await c().call('list_si_sessions', { include_transcript: true });
      expect((listed.body.sessions as any[]).find((x) => x.session_id === opened.body.session_id).turns).toBe(4);
    });
  },
);

forEachDatabase(
  'sponsored intelligence with a plugged-in conversation and a clock',
  async (adapter, schema) => {
    const clock = new ManualClock(new Date('2030-01-01T00:00:00Z'));
    const replies: string[] = [];
    const model: ConversationPort = {
      name: 'scripted',
      async reply(turn) {
        replies.push(turn.message ?? turn.intent);
        return { message: `scripted answer ${replies.length}` };
      },
    };
    const plugged = definePlugin({ name: 'scripted-conversation', provides: [Conversation], init: (_d, k) => k.provide(Conversation, model) });
    return { s: await siServer(adapter, schema, [plugged()], clock), clock, replies };
  },
  ({ s }) => s.close(),
  (get) => {
    test('a Conversation plugin answers the turns; a session idle past its time ends as timed out', async () => {
      const { s, clock, replies } = get();
      const c = restClient(s, TOKEN);
      const opened = await c.call('si_initiate_session', { idempotency_key: key(), intent: 'talk to Nova', identity });
      expect((opened.body.response as any).message).toBe('scripted answer 1');
      const asked = await c.call('si_send_message', { idempotency_key: key(), session_id: opened.body.session_id, message: 'hi' });
      expect((asked.body.response as any).message).toBe('scripted answer 2');
      expect(replies).toEqual(['talk to Nova', 'hi']);
      clock.advance(601_000);
      const late = await c.call('si_send_message', { idempotency_key: key(), session_id: opened.body.session_id, message: 'still there?' });
      expect(late.body.code).toBe('SESSION_TERMINATED');
      const listed = await c.call('list_si_sessions', {});
      expect((listed.body.sessions as any[])[0]).toMatchObject({ session_status: 'terminated', end_reason: 'session_timeout' });
    });
  },
);
