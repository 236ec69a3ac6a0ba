// The registry's web page: hash routes over the public REST API. Every value from the API is set as
// text (never parsed as HTML), so entries cannot inject markup.
'use strict';

const base = document.body.dataset.base || '';
const view = document.getElementById('view');
let feedTimer = null;
const agentCache = new Map();
/** The catalog's agent types, in the order the filter shows them. */
const AGENT_TYPES = ['sales', 'signals', 'creative', 'governance', 'brand', 'buying', 'measurement', 'rights'];

/** Create an element: attributes, then children (strings become text nodes). */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

const link = (href, text) => h('a', { href }, text);
const badge = (text, kind, title) => h('span', { class: `badge${kind ? ` ${kind}` : ''}`, title }, text);
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
const enc = encodeURIComponent;

/** A colour chip (set through the CSSOM: the page's CSP allows no inline style attributes). */
function swatch(hex) {
  const el = h('span', { class: 'swatch' });
  if (/^#[0-9a-fA-F]{3,8}$/.test(hex)) el.style.backgroundColor = hex;
  return el;
}

// ---- Sign-in: OAuth 2.1 authorization code + PKCE against the registry's own authorization server ----
// Tokens live in sessionStorage (this tab only) and are never written to the console or the URL.

const SESSION = 'registry-session';
const PENDING = 'registry-sign-in';
const CLIENT = 'registry-client';

function readJson(key) {
  try {
    return JSON.parse(sessionStorage.getItem(key) || 'null');
  } catch {
    return null;
  }
}
const currentSession = () => readJson(SESSION);
const redirectUri = () => `${location.origin}${base}/`;
const b64url = (bytes) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
const randomToken = () => b64url(crypto.getRandomValues(new Uint8Array(32)));

/** The REST API's protected-resource metadata and its authorization server's metadata; null when the page cannot sign in (no OAuth, or an issuer on another origin). */
async function discoverOAuth() {
  const res = await fetch(`${base}/.well-known/oauth-protected-resource/api`);
  if (!res.ok) return null;
  const resource = await res.json();
  const issuer = resource.authorization_servers && resource.authorization_servers[0];
  if (!issuer || new URL(issuer).origin !== location.origin) return null;
  const meta = await fetch(`${base}/.well-known/oauth-authorization-server`);
  if (!meta.ok) return null;
  const server = await meta.json();
  return server.issuer === issuer ? { resource: resource.resource, server } : null;
}

/** A public client (no secret) registered for this page's redirect URI, once per tab. */
async function pageClient(server) {
  const known = readJson(CLIENT);
  if (known && known.redirect_uri === redirectUri() && known.issuer === server.issuer) return known.client_id;
  const res = await fetch(server.registration_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: `${document.querySelector('.brand').textContent} web page`,
      redirect_uris: [redirectUri()],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error_description || `Client registration failed (HTTP ${res.status})`);
  sessionStorage.setItem(CLIENT, JSON.stringify({ client_id: body.client_id, redirect_uri: redirectUri(), issuer: server.issuer }));
  return body.client_id;
}

async function signIn() {
  const oauth = await discoverOAuth();
  if (!oauth) throw new Error('This registry has no sign-in the page can use.');
  const clientId = await pageClient(oauth.server);
  const verifier = randomToken();
  const state = randomToken();
  const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, clientId, issuer: oauth.server.issuer, resource: oauth.resource, back: location.hash || '#/' }));
  const url = new URL(oauth.server.authorization_endpoint);
  for (const [k, v] of [
    ['response_type', 'code'],
    ['client_id', clientId],
    ['redirect_uri', redirectUri()],
    ['code_challenge', challenge],
    ['code_challenge_method', 'S256'],
    ['state', state],
    ['resource', oauth.resource],
  ])
    url.searchParams.set(k, v);
  location.assign(url.toString());
}

async function tokenRequest(fields) {
  const oauth = await discoverOAuth();
  if (!oauth) throw new Error('Sign-in is not available.');
  const res = await fetch(oauth.server.token_endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw Object.assign(new Error(body.error_description || `Sign-in failed (HTTP ${res.status})`), { status: res.status });
  return body;
}

function keepTokens(t, clientId, resource) {
  sessionStorage.setItem(SESSION, JSON.stringify({ access_token: t.access_token, refresh_token: t.refresh_token || null, client_id: clientId, resource }));
}

/** Back from the authorization server: check state and issuer, trade the code (with the PKCE verifier) for tokens, and clean the URL. */
async function completeSignIn() {
  const params = new URLSearchParams(location.search);
  if (!params.has('code') && !params.has('error')) return null;
  const pending = readJson(PENDING);
  sessionStorage.removeItem(PENDING);
  history.replaceState(null, '', `${location.pathname}${pending ? pending.back : '#/'}`);
  if (!pending || params.get('state') !== pending.state) return 'The sign-in answer does not match a sign-in started here; try again.';
  if (params.get('iss') && params.get('iss') !== pending.issuer) return 'The sign-in answer came from another issuer.';
  if (params.has('error')) return params.get('error') === 'access_denied' ? 'Sign-in was cancelled.' : params.get('error_description') || params.get('error');
  const tokens = await tokenRequest({
    grant_type: 'authorization_code',
    code: params.get('code'),
    redirect_uri: redirectUri(),
    client_id: pending.clientId,
    code_verifier: pending.verifier,
    resource: pending.resource,
  });
  keepTokens(tokens, pending.clientId, pending.resource);
  return null;
}

/** A fresh access token from the refresh token (rotated); false when the grant is gone. */
async function refresh() {
  const s = currentSession();
  if (!s || !s.refresh_token) return false;
  try {
    keepTokens(await tokenRequest({ grant_type: 'refresh_token', refresh_token: s.refresh_token, client_id: s.client_id, resource: s.resource }), s.client_id, s.resource);
    return true;
  } catch {
    sessionStorage.removeItem(SESSION);
    return false;
  }
}

async function signOut() {
  const s = currentSession();
  sessionStorage.removeItem(SESSION);
  if (s && s.refresh_token) {
    const oauth = await discoverOAuth().catch(() => null);
    if (oauth && oauth.server.revocation_endpoint) {
      await fetch(oauth.server.revocation_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: s.refresh_token, token_type_hint: 'refresh_token', client_id: s.client_id }),
      }).catch(() => null);
    }
  }
  renderAccount();
  route();
}

function signInButton(label = 'Sign in') {
  return h('button', { type: 'button', class: 'sign-in', onclick: () => signIn().catch((e) => show('Sign-in failed', failure(e))) }, label);
}

function renderAccount() {
  const slot = document.getElementById('account');
  slot.replaceChildren(
    currentSession() ? h('span', { class: 'signed-in' }, h('span', { class: 'muted' }, 'Signed in'), ' ', h('button', { type: 'button', class: 'secondary', onclick: signOut }, 'Sign out')) : signInButton(),
  );
}

/** Page views started so far: an answer that arrives after the reader moved on belongs to no page. */
let navigation = 0;
/** Thrown by `api` for a page the reader has left, so its late answer never replaces the current page. */
class Superseded extends Error {}

/** A `.catch` for an optional read: its fallback, unless the reader has left the page (that still stops the page). */
const otherwise = (fallback) => (error) => {
  if (error instanceof Superseded) throw error;
  return fallback;
};

/** Call the API; signed in, with the access token (refreshed once on 401; anonymous again when that fails). */
async function api(path, init = {}) {
  const started = navigation;
  const attempt = () => {
    const s = currentSession();
    const headers = new Headers(init.headers);
    if (s) headers.set('authorization', `Bearer ${s.access_token}`);
    return fetch(base + path, { ...init, headers });
  };
  let res = await attempt();
  if (res.status === 401 && currentSession()) {
    await refresh();
    renderAccount();
    res = await attempt();
  }
  const body = res.status === 204 ? null : await res.json().catch(() => null);
  if (started !== navigation) throw new Superseded();
  if (!res.ok) throw Object.assign(new Error((body && body.message) || `HTTP ${res.status}`), { status: res.status });
  return body;
}

function show(title, ...content) {
  view.replaceChildren(h('h1', {}, title), ...content.flat(2).filter((c) => c !== null && c !== undefined && c !== false));
  document.title = `${title} · ${document.querySelector('.brand').textContent}`;
}

function failure(error) {
  return h('p', { class: 'error', role: 'alert' }, error.message);
}

function list(items, render, empty = 'Nothing yet.') {
  return items.length ? h('ul', { class: 'list' }, items.map((x) => h('li', {}, ...render(x)))) : h('p', { class: 'muted' }, empty);
}

// ---- Feed events in words ------------------------------------------------------------------

const host = (url) => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

/** Who did it, without internal ids: the crawler, the health probe, or a member. */
function actorName(actor) {
  if (actor === 'crawler') return 'crawler';
  if (actor === 'registry:health') return 'health probe';
  if (actor === 'system') return 'registry';
  return 'a member';
}

/** What an event is about: a name and the page that shows it (from the payload, never the raw entity id). */
function eventSubject(e) {
  const p = e.payload || {};
  const agentName = (url) => (agentCache.get(url) && agentCache.get(url).name) || host(url);
  const ids = Array.isArray(p.identifiers) ? p.identifiers : [];
  switch (e.entity_type) {
    case 'brand':
      return p.domain ? [link(`#/brand/${enc(p.domain)}`, p.brand_name || p.domain), h('span', { class: 'muted' }, p.domain)] : null;
    case 'publisher':
      return p.domain ? [link(`#/publisher/${enc(p.domain)}`, p.domain)] : null;
    case 'agent':
      return p.agent_url
        ? [link(`#/agent/${enc(p.agent_url)}`, agentName(p.agent_url)), p.publisher_domain ? h('span', { class: 'muted' }, `via ${p.publisher_domain}`) : null]
        : null;
    case 'authorization':
      return p.agent_url && p.publisher_domain
        ? [link(`#/agent/${enc(p.agent_url)}`, agentName(p.agent_url)), h('span', { class: 'muted' }, 'for'), link(`#/publisher/${enc(p.publisher_domain)}`, p.publisher_domain)]
        : null;
    case 'property':
    case 'collection': {
      const name = p.name || (ids[0] && ids[0].value) || p.property_type || p.classification;
      if (p.publisher_domain) return [link(`#/publisher/${enc(p.publisher_domain)}`, name || p.publisher_domain), h('span', { class: 'muted' }, p.publisher_domain)];
      const domainId = ids.find((i) => i.type === 'domain');
      return name ? [domainId ? link(`#/search/${enc(domainId.value)}`, name) : h('strong', {}, name), p.classification ? h('span', { class: 'muted' }, p.classification) : null] : null;
    }
    default:
      return null;
  }
}

/** Agent names for event rows (events name agents by URL): one catalog page the caller may see, read only when a row needs a name not known yet. */
let agentNamesRead = false;
async function rememberAgentNames(events) {
  if (agentNamesRead || !events.some((e) => e.payload && e.payload.agent_url && !agentCache.has(e.payload.agent_url))) return;
  agentNamesRead = true;
  await api('/api/registry/agents?limit=500')
    .then((r) => r.agents.forEach((a) => agentCache.has(a.url) || agentCache.set(a.url, a)))
    .catch(() => null);
}

function eventRow(e) {
  const [noun, verb = ''] = e.event_type.split('.');
  const subject = eventSubject(e) || [h('span', {}, noun)];
  return h(
    'li',
    { 'data-event': e.event_type },
    badge(`${noun} ${verb.replace(/_/g, ' ')}`, verb === 'removed' || verb === 'revoked' || verb === 'stale' ? 'warn' : ''),
    ...subject,
    e.payload && e.payload.revision_number ? h('span', { class: 'muted' }, `revision ${e.payload.revision_number}`) : null,
    h('span', { class: 'muted' }, `${actorName(e.actor)} · ${when(e.created_at)}`),
  );
}

// ---- Views ---------------------------------------------------------------------------------

function stat(label, value, href, detail) {
  return h('a', { class: 'stat', href, 'data-stat': label.toLowerCase() }, h('strong', {}, String(value)), h('span', {}, label), detail ? h('small', { class: 'muted' }, detail) : null);
}

async function home() {
  const [stats, brandList, hosted, recent] = await Promise.all([
    api('/api/registry/stats'),
    api('/api/brands/registry?limit=1'),
    api('/api/properties/registry?limit=1&source=hosted'),
    // Recent changes come from the feed, which needs a signed-in reader.
    currentSession() ? api('/api/registry/feed/recent?limit=10').catch(otherwise({ events: [] })) : null,

  ]);
  if (recent) await rememberAgentNames(recent.events);
  show(
    'Registry',
    h(
      'div',
      { class: 'stats' },
      stat('Agents', stats.agents.registered, '#/agents', `${stats.agents.discovered} more discovered`),
      stat('Brands', brandList.total, '#/brands'),
      stat('Publishers', stats.publishers.total + hosted.total, '#/publishers', `${stats.publishers.with_valid_adagents} with adagents.json, ${hosted.total} hosted`),
      stat('Properties', stats.properties.active + hosted.stats.properties, '#/properties', `${stats.authorizations} authorizations`),
    ),
    h('h2', {}, 'Recent changes'),
    !recent
      ? h('p', { class: 'muted', id: 'recent-signin' }, ['Sign in to see the latest changes and follow them in the ', link('#/feed', 'feed'), '.'])
      : recent.events.length
        ? h('ul', { class: 'list', id: 'recent' }, recent.events.map(eventRow))
        : h('p', { class: 'muted' }, 'Nothing has changed yet.'),
    recent ? h('p', { class: 'muted' }, link('#/feed', 'Follow every change live in the feed.')) : null,
  );
}

async function search(q) {
  document.getElementById('q').value = q;
  const r = await api(`/api/search?q=${enc(q)}&limit=20`);
  show(
    `Results for “${q}”`,
    h('h2', {}, 'Agents'),
    list(r.agents || [], (a) => [link(`#/agent/${enc(a.url)}`, a.name || a.url), h('span', { class: 'muted' }, a.url), a.type && badge(a.type)], 'No agent matches.'),
    h('h2', {}, 'Brands'),
    list(r.brands, (b) => [link(`#/brand/${enc(b.domain)}`, b.name || b.domain), h('span', { class: 'muted' }, b.domain), badge(b.source)], 'No brand matches.'),
    h('h2', {}, 'Publishers'),
    list(r.publishers, (p) => [link(`#/publisher/${enc(p.domain)}`, p.domain), p.has_valid_adagents ? badge('adagents.json', 'ok') : badge('no valid adagents.json', 'warn')], 'No publisher matches.'),
    h('h2', {}, 'Properties'),
    list(r.properties, (p) => [link(`#/publisher/${enc(p.publisher_domain)}`, p.name), h('span', { class: 'muted' }, `${p.type} · ${p.publisher_domain}`), badge(p.source)], 'No property matches.'),
  );
}

function pager(offset, limit, total, route) {
  return h(
    'div',
    { class: 'pager' },
    offset > 0 && h('button', { class: 'secondary', onclick: () => (location.hash = `${route}/${Math.max(0, offset - limit)}`) }, 'Previous'),
    offset + limit < total && h('button', { class: 'secondary', onclick: () => (location.hash = `${route}/${offset + limit}`) }, 'Next'),
    h('span', { class: 'muted' }, total ? `${offset + 1}–${Math.min(total, offset + limit)} of ${total}` : ''),
  );
}

async function brands(offset = 0) {
  const r = await api(`/api/brands/registry?limit=50&offset=${offset}`);
  show('Brands', list(r.brands, (b) => [link(`#/brand/${enc(b.domain)}`, b.brand_name), h('span', { class: 'muted' }, b.domain), badge(b.source, b.verified ? 'ok' : '')]), pager(offset, 50, r.total, '#/brands'));
}

/** A value in a diff cell: strings as they are, anything else as JSON; colours get a chip. */
function diffValue(x) {
  if (x === undefined) return '';
  const text = typeof x === 'string' ? x : JSON.stringify(x);
  return typeof x === 'string' && /^#[0-9a-fA-F]{3,8}$/.test(x) ? [swatch(x), text] : text;
}

/** The field-by-field changes a revision made (against the one before it). */
async function revisionChanges(resource, domain, revision) {
  const d = await api(`/api/${resource}/diff?domain=${enc(domain)}&to=${revision}`);
  if (!d.changes.length) return h('p', { class: 'muted diff-empty' }, `No field changed from revision ${d.from}.`);
  return h(
    'table',
    { class: 'diff', 'aria-label': `Changes from revision ${d.from} to ${d.to}` },
    h('thead', {}, h('tr', {}, h('th', {}, 'Field'), h('th', {}, d.from ? `Revision ${d.from}` : 'Before'), h('th', {}, `Revision ${d.to}`))),
    h(
      'tbody',
      {},
      d.changes.map((c) =>
        h(
          'tr',
          { class: `change ${c.change}`, 'data-path': c.path },
          h('td', {}, h('code', {}, c.path), ' ', badge(c.change, c.change === 'added' ? 'ok' : c.change === 'removed' ? 'bad' : 'warn')),
          h('td', {}, c.before === undefined ? h('span', { class: 'muted' }, '—') : h('del', {}, diffValue(c.before))),
          h('td', {}, c.after === undefined ? h('span', { class: 'muted' }, '—') : h('ins', {}, diffValue(c.after))),
        ),
      ),
    ),
    d.truncated ? h('caption', {}, `First ${d.changes.length} of ${d.total_changes} changes`) : null,
  );
}

/** Revisions, newest first, each with its changes on demand and (signed in) a restore button. */
function revisionHistory(h_, domain, resource) {
  const current = h_.revisions.length ? h_.revisions[0].revision_number : 0;
  return [
    h('h2', {}, `Revision history (${h_.total})`),
    ...h_.revisions.map((rev) => {
      const changes = h('div', { class: 'changes' });
      const toggle = h('button', { type: 'button', class: 'secondary small', 'aria-expanded': 'false' }, 'Show changes');
      toggle.addEventListener('click', async () => {
        if (toggle.getAttribute('aria-expanded') === 'true') {
          changes.replaceChildren();
          toggle.setAttribute('aria-expanded', 'false');
          toggle.textContent = 'Show changes';
          return;
        }
        try {
          changes.replaceChildren(await revisionChanges(resource, domain, rev.revision_number));
        } catch (error) {
          changes.replaceChildren(failure(error));
        }
        toggle.setAttribute('aria-expanded', 'true');
        toggle.textContent = 'Hide changes';
      });
      const restore =
        currentSession() && rev.revision_number !== current
          ? h(
              'button',
              {
                type: 'button',
                class: 'secondary small',
                onclick: async () => {
                  try {
                    await api(`/api/${resource}/${enc(domain)}/rollback`, {
                      method: 'POST',
                      headers: { 'content-type': 'application/json' },
                      body: JSON.stringify({ to_revision: rev.revision_number }),
                    });
                    route();
                  } catch (error) {
                    changes.replaceChildren(failure(error));
                  }
                },
              },
              `Restore revision ${rev.revision_number}`,
            )
          : null;
      return h(
        'div',
        { class: 'revision', 'data-revision': rev.revision_number },
        h('strong', {}, `Revision ${rev.revision_number}`),
        ' ',
        badge(rev.source),
        rev.is_rollback ? badge(`rollback to ${rev.rolled_back_to}`, 'warn') : null,
        h('div', {}, rev.edit_summary),
        h('div', { class: 'muted' }, `${rev.editor_name} · ${when(rev.created_at)}`),
        h('div', { class: 'actions' }, toggle, restore),
        changes,
      );
    }),
    h_.revisions.length ? null : h('p', { class: 'muted' }, `${domain} has no revisions (its data comes from a crawled file).`),
  ];
}

async function brand(domain) {
  const [b, hist] = await Promise.all([api(`/api/brands/resolve?domain=${enc(domain)}`), api(`/api/brands/history?domain=${enc(domain)}&limit=100`)]);
  const m = b.brand_manifest || {};
  show(
    b.brand_name,
    h(
      'div',
      { class: 'card' },
      h(
        'dl',
        {},
        h('dt', {}, 'Domain'),
        h('dd', {}, b.canonical_domain),
        h('dt', {}, 'Source'),
        h('dd', {}, badge(b.source, b.source === 'brand_json' ? 'ok' : '')),
        h('dt', {}, 'House'),
        h('dd', {}, `${b.house_domain} (${b.keller_type})`),
        m.description ? [h('dt', {}, 'Description'), h('dd', {}, m.description)] : null,
        m.colors ? [h('dt', {}, 'Colours'), h('dd', {}, m.colors.map((c) => h('span', {}, swatch(c.hex), `${c.hex} `)))] : null,
        m.logos ? [h('dt', {}, 'Logos'), h('dd', {}, m.logos.slice(0, 4).map((l) => (/^https:\/\//.test(l.url) ? h('img', { class: 'logo', src: l.url, alt: (l.tags || []).join(' '), referrerpolicy: 'no-referrer' }) : null)))] : null,
      ),
    ),
    ...revisionHistory(hist, domain, 'brands'),
  );
}

async function publishers(offset = 0) {
  const r = await api(`/api/registry/publishers?limit=50&offset=${offset}`);
  const hosted = await api(`/api/properties/registry?limit=50&source=hosted`);
  show(
    'Publishers',
    list(r.publishers, (p) => [link(`#/publisher/${enc(p.domain)}`, p.domain), h('span', { class: 'muted' }, `${p.property_count} properties · ${p.agent_count} agents`), p.has_valid_adagents ? badge('adagents.json', 'ok') : badge('invalid', 'warn')]),
    pager(offset, 50, r.count, '#/publishers'),
    h('h2', {}, 'Hosted publishers'),
    list(hosted.properties, (p) => [link(`#/publisher/${enc(p.publisher_domain)}`, p.publisher_domain), h('span', { class: 'muted' }, `${p.property_count} properties · ${p.agent_count} agents`), badge('hosted')]),
  );
}

async function properties(offset = 0) {
  const r = await api(`/api/properties/registry?limit=50&offset=${offset}`);
  show('Properties', list(r.properties, (p) => [link(`#/publisher/${enc(p.publisher_domain)}`, p.publisher_domain), h('span', { class: 'muted' }, `${p.property_count} properties · ${p.agent_count} agents`), badge(p.source, p.verified ? 'ok' : '')]), pager(offset, 50, r.total, '#/properties'));
}

async function publisher(domain) {
  const [lookup, entry, hist] = await Promise.all([
    api(`/api/registry/lookup/domain/${enc(domain)}`),
    api(`/api/properties/resolve?domain=${enc(domain)}`).catch(otherwise(null)),
    api(`/api/properties/history?domain=${enc(domain)}&limit=100`).catch(otherwise(null)),
  ]);
  show(
    domain,
    h('h2', {}, 'Authorized agents'),
    list(lookup.authorized_agents, (a) => [link(`#/agent/${enc(a.url)}`, a.url), a.authorized_for && h('span', { class: 'muted' }, a.authorized_for)], 'No agent is authorized.'),
    h('h2', {}, 'Properties'),
    list(entry ? entry.properties : [], (p) => [h('strong', {}, p.name), h('span', { class: 'muted' }, `${p.type} · ${p.identifiers.map((i) => `${i.type}:${i.value}`).join(', ')}`)], 'No properties are registered.'),
    ...(hist ? revisionHistory(hist, domain, 'properties') : []),
  );
}

const HEALTH = { healthy: 'ok', degraded: 'warn', unreachable: 'bad' };
const COMPLIANCE = { compliant: 'ok', non_compliant: 'bad' };

/** Health, compliance and verification as badges (probe results; unknown before the first probe). */
function agentBadges(a) {
  const out = [];
  if (a.health) {
    const uptime = a.health.uptime_24h === null ? '' : `, ${Math.round(a.health.uptime_24h * 100)}% up in 24 h`;
    out.push(h('span', { class: `badge ${HEALTH[a.health.status] || ''}`, 'data-badge': 'health', title: `Last checked ${when(a.health.last_checked_at)}${uptime}` }, a.health.status === 'unknown' ? 'health unknown' : a.health.status));
  }
  if (a.compliance) {
    const issues = a.compliance.issues.map((i) => i.message).join('; ');
    out.push(
      h('span', { class: `badge ${COMPLIANCE[a.compliance.status] || ''}`, 'data-badge': 'compliance', title: issues || undefined }, a.compliance.status === 'unknown' ? 'compliance unknown' : a.compliance.status.replace('_', '-')),
    );
  }
  if (a.verification && a.verification.verified) out.push(h('span', { class: 'badge verified', 'data-badge': 'verified', title: `Verified since ${when(a.verification.since)}` }, '✓ verified'));
  return out;
}

const PROBES = 'health=true&compliance=true&verification=true';

async function agentPage(type, cursor) {
  const r = await api(`/api/registry/agents?limit=50&${PROBES}${type ? `&type=${enc(type)}` : ''}${cursor ? `&cursor=${enc(cursor)}` : ''}`);
  for (const a of r.agents) agentCache.set(a.url, a);
  const items = list(
    r.agents,
    (a) => [link(`#/agent/${enc(a.url)}`, a.name || a.url), h('span', { class: 'muted' }, a.url), a.type && badge(a.type, 'type'), ...agentBadges(a), a.member && h('span', { class: 'muted' }, a.member.name)],
    type ? `No ${type} agent is in the catalog.` : 'No agent is in the catalog.',
  );
  return { items, next: r.has_more ? r.cursor : null };
}

async function agents(type) {
  const filter = h(
    'nav',
    { class: 'filter', 'aria-label': 'Agent type' },
    [null, ...AGENT_TYPES].map((t) => h('a', { href: t ? `#/agents/${t}` : '#/agents', class: (t || null) === (type || null) ? 'chip active' : 'chip', 'aria-current': (t || null) === (type || null) ? 'page' : undefined }, t || 'all')),
  );
  const first = await agentPage(type, null);
  const container = h('div', {}, first.items);
  const more = h('button', { class: 'secondary' }, 'More');
  let next = first.next;
  more.addEventListener('click', async () => {
    const page = await agentPage(type, next);
    container.append(page.items);
    next = page.next;
    if (!next) more.remove();
  });
  show(type ? `Agents: ${type}` : 'Agents', filter, container, next ? h('div', { class: 'pager' }, more) : null);
}

async function agent(url) {
  let a = agentCache.get(url);
  if (!a || !a.health) a = undefined;
  for (let cursor = null, pages = 0; !a && pages < 20; pages++) {
    const r = await api(`/api/registry/agents?limit=500&${PROBES}${cursor ? `&cursor=${enc(cursor)}` : ''}`);
    for (const x of r.agents) agentCache.set(x.url, x);
    a = agentCache.get(url);
    if (!r.has_more) break;
    cursor = r.cursor;
  }
  const domains = await api(`/api/registry/lookup/agent/${enc(url)}/domains`).catch(otherwise({ domains: [] }));
  show(
    a ? a.name || url : url,
    a
      ? h(
          'div',
          { class: 'card' },
          h('p', { class: 'badges' }, a.type && badge(a.type, 'type'), ...agentBadges(a)),
          h(
            'dl',
            {},
            h('dt', {}, 'URL'),
            h('dd', {}, h('code', {}, a.url)),
            h('dt', {}, 'Type'),
            h('dd', {}, a.type || '—'),
            h('dt', {}, 'Protocol'),
            h('dd', {}, a.protocol || '—'),
            h('dt', {}, 'Member'),
            h('dd', {}, a.member ? a.member.name : '—'),
            h('dt', {}, 'Description'),
            h('dd', {}, a.description || '—'),
            h('dt', {}, 'Inventory'),
            h('dd', {}, `${a.property_summary.property_count} properties from ${a.property_summary.publisher_count} publishers`),
            a.health ? [h('dt', {}, 'Health'), h('dd', {}, `${a.health.status}; last checked ${when(a.health.last_checked_at)}${a.health.latency_ms === null ? '' : `, ${a.health.latency_ms} ms`}`)] : null,
            a.compliance && a.compliance.issues.length ? [h('dt', {}, 'Compliance issues'), h('dd', {}, h('ul', {}, a.compliance.issues.map((i) => h('li', {}, i.path ? `${i.path}: ${i.message}` : i.message))))] : null,
          ),
        )
      : h('p', { class: 'muted' }, 'This agent is not in the public catalog (it may only be named in a publisher file).'),
    h('h2', {}, 'Publishers authorizing it'),
    list(domains.domains, (d) => [link(`#/publisher/${enc(d)}`, d)], 'None yet.'),
  );
}

async function feed() {
  if (!currentSession()) {
    show('Change feed', h('p', {}, 'The live feed is for signed-in members: sign in with your registry account to follow it.'), signInButton('Sign in to follow the feed'));
    return;
  }
  const events = h('ul', { class: 'list', id: 'events' });
  const status = h('p', { class: 'muted' });
  let cursor = null;
  const poll = async () => {
    if (!currentSession()) return void (status.textContent = 'Signed out.');
    try {
      for (let i = 0; i < 20; i++) {
        const r = await api(`/api/registry/feed?limit=100${cursor ? `&cursor=${enc(cursor)}` : ''}`);
        await rememberAgentNames(r.events);
        for (const e of r.events) events.prepend(eventRow(e));
        cursor = r.cursor;
        if (!r.has_more) break;
      }
      status.textContent = `Live: polling every 5 s (${events.children.length} events shown).`;
    } catch (error) {
      status.textContent = error.status === 410 ? 'The cursor expired; reload to start again.' : error.message;
    }
  };
  show('Change feed', status, events);
  await poll();
  feedTimer = setInterval(poll, 5000);
}

async function reference() {
  const doc = await api('/openapi/registry.json');
  const byTag = new Map();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const tag = (op.tags && op.tags[0]) || 'Other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push({ path, method, op });
    }
  }
  show(
    `${doc.info.title} ${doc.info.version}`,
    h('p', {}, doc.info.description || '', ' ', link(`${base}/openapi/registry.yaml`, 'Download the OpenAPI document.')),
    ...[...byTag].map(([tag, ops]) => [
      h('h2', {}, tag),
      h(
        'ul',
        { class: 'list' },
        ops.map(({ path, method, op }) =>
          h(
            'li',
            { class: 'op' },
            h('span', { class: 'method' }, method.toUpperCase()),
            h('code', {}, path),
            h('span', {}, op.summary || ''),
            op.security && op.security.length && !op.security.some((s) => Object.keys(s).length === 0) ? badge('credential') : null,
          ),
        ),
      ),
    ]),
  );
}

// ---- Router ---------------------------------------------------------------------------------

const routes = [
  [/^#?\/?$/, home],
  [/^#\/search\/(.+)$/, (q) => search(q)],
  [/^#\/brands(?:\/(\d+))?$/, (o) => brands(Number(o || 0))],
  [/^#\/brand\/(.+)$/, brand],
  [/^#\/publishers(?:\/(\d+))?$/, (o) => publishers(Number(o || 0))],
  [/^#\/publisher\/(.+)$/, publisher],
  [/^#\/properties(?:\/(\d+))?$/, (o) => properties(Number(o || 0))],
  [/^#\/agents(?:\/([a-z]+))?$/, (t) => agents(AGENT_TYPES.includes(t) ? t : undefined)],
  [/^#\/agent\/(.+)$/, agent],
  [/^#\/feed$/, feed],
  [/^#\/api$/, reference],
];

async function route() {
  const current = ++navigation;
  if (feedTimer) clearInterval(feedTimer);
  feedTimer = null;
  const hash = location.hash || '#/';
  for (const a of document.querySelectorAll('header nav a')) a.classList.toggle('active', hash.startsWith(a.getAttribute('href')));
  for (const [pattern, render] of routes) {
    const m = pattern.exec(hash);
    if (!m) continue;
    view.setAttribute('aria-busy', 'true');
    try {
      await render(...m.slice(1).map((x) => (x === undefined ? x : decodeURIComponent(x))));
    } catch (error) {
      // A slower page the reader left (home's counts, say) must not replace the one they went to.
      if (error instanceof Superseded || current !== navigation) return;
      show(error.status === 404 ? 'Not found' : 'Something went wrong', failure(error));
    } finally {
      if (current === navigation) view.removeAttribute('aria-busy');
    }
    return;
  }
  show('Not found', h('p', {}, 'No such page.'));
}

document.getElementById('search').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const q = document.getElementById('q').value.trim();
  if (q.length >= 2) location.hash = `#/search/${enc(q)}`;
});
window.addEventListener('hashchange', route);

completeSignIn()
  .catch((error) => error.message)
  .then((problem) => {
    renderAccount();
    if (problem) show('Sign-in failed', failure(new Error(problem)));
    else route();
  });
