// The registry's web page: hash routes over the public REST API. Every value from the API is set as
// text (never parsed as HTML), so entries cannot inject markup.
'use strict';

const base = document.body.dataset.base || '';
const view = document.getElementById('view');
let feedTimer = null;
const agentCache = new Map();

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
const badge = (text, kind) => h('span', { class: `badge${kind ? ` ${kind}` : ''}` }, text);
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
const enc = encodeURIComponent;

/** A colour chip (set through the CSSOM: the page's CSP allows no inline style attributes). */
function swatch(hex) {
  const el = h('span', { class: 'swatch' });
  if (/^#[0-9a-fA-F]{3,8}$/.test(hex)) el.style.backgroundColor = hex;
  return el;
}

async function api(path, init) {
  const res = await fetch(base + path, init);
  const body = res.status === 204 ? null : await res.json().catch(() => null);
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

// ---- Views ---------------------------------------------------------------------------------

async function home() {
  const stats = await api('/api/registry/stats');
  show(
    'Registry',
    h(
      'div',
      { class: 'card' },
      h(
        'dl',
        {},
        h('dt', {}, 'Agents'),
        h('dd', {}, `${stats.agents.registered} in the catalog, ${stats.agents.discovered} discovered`),
        h('dt', {}, 'Publishers'),
        h('dd', {}, `${stats.publishers.total} (${stats.publishers.with_valid_adagents} with a valid adagents.json)`),
        h('dt', {}, 'Properties'),
        h('dd', {}, `${stats.properties.active} active, ${stats.properties.stale} stale`),
        h('dt', {}, 'Authorizations'),
        h('dd', {}, String(stats.authorizations)),
      ),
    ),
    h('p', { class: 'muted' }, 'Search above, or browse brands, publishers, properties and agents. The feed shows changes as they happen.'),
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

function history(h_, domain) {
  return [
    h('h2', {}, `Revision history (${h_.total})`),
    ...h_.revisions.map((rev) =>
      h(
        'div',
        { class: 'revision', 'data-revision': rev.revision_number },
        h('strong', {}, `Revision ${rev.revision_number}`),
        ' ',
        badge(rev.source),
        rev.is_rollback ? badge(`rollback to ${rev.rolled_back_to}`, 'warn') : null,
        h('div', {}, rev.edit_summary),
        h('div', { class: 'muted' }, `${rev.editor_name} · ${when(rev.created_at)}`),
      ),
    ),
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
    ...history(hist, domain),
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
    api(`/api/properties/resolve?domain=${enc(domain)}`).catch(() => null),
    api(`/api/properties/history?domain=${enc(domain)}&limit=100`).catch(() => null),
  ]);
  show(
    domain,
    h('h2', {}, 'Authorized agents'),
    list(lookup.authorized_agents, (a) => [link(`#/agent/${enc(a.url)}`, a.url), a.authorized_for && h('span', { class: 'muted' }, a.authorized_for)], 'No agent is authorized.'),
    h('h2', {}, 'Properties'),
    list(entry ? entry.properties : [], (p) => [h('strong', {}, p.name), h('span', { class: 'muted' }, `${p.type} · ${p.identifiers.map((i) => `${i.type}:${i.value}`).join(', ')}`)], 'No properties are registered.'),
    ...(hist ? history(hist, domain) : []),
  );
}

async function agentPage(cursor) {
  const r = await api(`/api/registry/agents?limit=50${cursor ? `&cursor=${enc(cursor)}` : ''}`);
  for (const a of r.agents) agentCache.set(a.url, a);
  const items = list(r.agents, (a) => [link(`#/agent/${enc(a.url)}`, a.name || a.url), h('span', { class: 'muted' }, a.url), a.type && badge(a.type), a.member && h('span', { class: 'muted' }, a.member.name)]);
  return { items, next: r.has_more ? r.cursor : null };
}

async function agents() {
  const first = await agentPage(null);
  const container = h('div', {}, first.items);
  const more = h('button', { class: 'secondary' }, 'More');
  let next = first.next;
  more.addEventListener('click', async () => {
    const page = await agentPage(next);
    container.append(page.items);
    next = page.next;
    if (!next) more.remove();
  });
  show('Agents', container, next ? h('div', { class: 'pager' }, more) : null);
}

async function agent(url) {
  let a = agentCache.get(url);
  for (let cursor = null, pages = 0; !a && pages < 20; pages++) {
    const r = await api(`/api/registry/agents?limit=500${cursor ? `&cursor=${enc(cursor)}` : ''}`);
    for (const x of r.agents) agentCache.set(x.url, x);
    a = agentCache.get(url);
    if (!r.has_more) break;
    cursor = r.cursor;
  }
  const domains = await api(`/api/registry/lookup/agent/${enc(url)}/domains`).catch(() => ({ domains: [] }));
  show(
    a ? a.name || url : url,
    a
      ? h(
          'div',
          { class: 'card' },
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
          ),
        )
      : h('p', { class: 'muted' }, 'This agent is not in the public catalog (it may only be named in a publisher file).'),
    h('h2', {}, 'Publishers authorizing it'),
    list(domains.domains, (d) => [link(`#/publisher/${enc(d)}`, d)], 'None yet.'),
  );
}

async function feed() {
  const keyInput = h('input', { type: 'password', placeholder: 'API key or access token (kept in this tab only)', 'aria-label': 'API key', value: sessionStorage.getItem('registry-key') || '' });
  const events = h('ul', { class: 'list', id: 'events' });
  const status = h('p', { class: 'muted' });
  let cursor = null;
  const poll = async () => {
    const key = sessionStorage.getItem('registry-key');
    if (!key) return void (status.textContent = 'The feed needs a credential: paste an API key.');
    try {
      for (let i = 0; i < 20; i++) {
        const r = await api(`/api/registry/feed?limit=100${cursor ? `&cursor=${enc(cursor)}` : ''}`, { headers: { authorization: `Bearer ${key}` } });
        for (const e of r.events) events.prepend(h('li', { 'data-event': e.event_type }, badge(e.event_type), h('code', {}, e.entity_id), h('span', { class: 'muted' }, `${e.actor} · ${when(e.created_at)}`)));
        cursor = r.cursor;
        if (!r.has_more) break;
      }
      status.textContent = `Live: polling every 5 s (${events.children.length} events shown).`;
    } catch (error) {
      status.textContent = error.status === 410 ? 'The cursor expired; reload to start again.' : error.message;
    }
  };
  const form = h(
    'form',
    {
      class: 'feed-key',
      onsubmit: (ev) => {
        ev.preventDefault();
        sessionStorage.setItem('registry-key', keyInput.value.trim());
        poll();
      },
    },
    keyInput,
    h('button', { type: 'submit' }, 'Follow'),
  );
  show('Change feed', form, status, events);
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
  [/^#\/agents$/, agents],
  [/^#\/agent\/(.+)$/, agent],
  [/^#\/feed$/, feed],
  [/^#\/api$/, reference],
];

async function route() {
  if (feedTimer) clearInterval(feedTimer);
  feedTimer = null;
  const hash = location.hash || '#/';
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', hash.startsWith(a.getAttribute('href')));
  for (const [pattern, render] of routes) {
    const m = pattern.exec(hash);
    if (!m) continue;
    view.setAttribute('aria-busy', 'true');
    try {
      await render(...m.slice(1).map((x) => (x === undefined ? x : decodeURIComponent(x))));
    } catch (error) {
      show(error.status === 404 ? 'Not found' : 'Something went wrong', failure(error));
    } finally {
      view.removeAttribute('aria-busy');
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
route();
