import { ProtocolError } from '../../../core/errors.ts';
import { protocolErrorResponse, type HttpRoute } from '../../../core/http.ts';
import { authenticateRequest, type AuthPort } from '../../../core/ports/auth.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import { findSession, latestResponse } from './store.ts';
import { SURFACE_HTML_HEADERS, surfaceHtml } from './surface-html.ts';

/**
 * `GET {mount}/si/preview/{session_id}` (the test agent's `/brand/si/preview/...`): the latest answer of one of
 * the caller's SI sessions drawn as HTML (surface-html.ts), for a host or operator to look at what its users are
 * shown. Authenticated like the si_* tasks; another caller's session is not found.
 */
export function siPreviewRoute(db: Queryable, auth: AuthPort | undefined, mount = ''): HttpRoute {
  return {
    method: 'GET',
    path: `${mount}/si/preview/{session_id}`,
    async handle(request, { params }) {
      try {
        const principalId = (await authenticateRequest(auth, request.headers.get('authorization'), 'required'))!.id;
        const id = params.session_id ?? '';
        const session = await findSession(db, id, principalId);
        const response = session && (await latestResponse(db, session.id));
        if (!response) throw new ProtocolError('SESSION_NOT_FOUND', `No session ${id.slice(0, 64)} of yours`, { status: 404 });
        return new Response(surfaceHtml(response.surface, `Session ${session.id}`), { headers: SURFACE_HTML_HEADERS });
      } catch (e) {
        if (!(e instanceof ProtocolError)) throw e;
        return protocolErrorResponse(e);
      }
    },
  };
}
