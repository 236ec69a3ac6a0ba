/**
 * Synthetic registry generator (`bun run seed-demo`, and the agent-search benchmark): publishers
 * with properties and valid adagents.json documents, agents (some enrolled by demo organizations,
 * most discovered), authorizations, operators' brand.json declarations and inventory profiles,
 * queued for the search index (the SearchSync port applies them). Deterministic for a given seed;
 * rows are written in bulk (jsonb_to_recordset).
 */
import { sql } from '../../core/sql.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { AgentProfileDocument, Visibility } from '../../core/ports/search.ts';
import { enqueueAllProfiles } from './store/search-outbox.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { ClockPort } from '../../core/ports/clock.ts';

const CHANNELS_BY_TYPE: Record<string, string[]> = {
  website: ['display', 'olv', 'social', 'search', 'retail_media'],
  mobile_app: ['display', 'olv', 'gaming', 'social'],
  ctv_app: ['ctv', 'olv'],
  dooh: ['dooh'],
  podcast: ['podcast', 'streaming_audio'],
  radio: ['radio', 'streaming_audio'],
  streaming_audio: ['streaming_audio'],
  linear_tv: ['linear_tv', 'ctv'],
};
const PROPERTY_TYPES = Object.keys(CHANNELS_BY_TYPE);
const MARKETS = [
  'US',
  'CA',
  'MX',
  'BR',
  'AR',
  'GB',
  'IE',
  'FR',
  'DE',
  'ES',
  'IT',
  'NL',
  'BE',
  'SE',
  'NO',
  'DK',
  'FI',
  'PL',
  'AT',
  'CH',
  'JP',
  'KR',
  'CN',
  'IN',
  'SG',
  'AU',
  'NZ',
  'ZA',
  'NG',
  'AE',
];
const CATEGORIES = Array.from({ length: 26 }, (_, i) => `IAB${i + 1}`);
const TAGS = [
  'premium',
  'news',
  'sports',
  'entertainment',
  'kids_safe',
  'brand_safe',
  'local',
  'finance',
  'lifestyle',
  'tech',
  'auto',
  'travel',
  'food',
  'health',
  'gaming',
];
const DELIVERY = ['guaranteed', 'non_guaranteed'];
const AGENT_TYPES = ['sales', 'sales', 'sales', 'sales', 'signals', 'creative', 'buying', 'measurement', 'governance', 'brand', 'rights'];
const WORDS = [
  'daily',
  'metro',
  'global',
  'river',
  'summit',
  'harbor',
  'pixel',
  'signal',
  'nova',
  'atlas',
  'orbit',
  'prime',
  'urban',
  'coastal',
  'alpine',
  'vivid',
  'echo',
  'lumen',
  'north',
  'bright',
];
const NOUNS = ['news', 'media', 'times', 'post', 'radio', 'stream', 'play', 'sports', 'herald', 'view', 'tv', 'audio', 'press', 'journal', 'network'];

/** Small deterministic PRNG (mulberry32). */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]) => xs[int(xs.length)]!;
  // Skewed pick: popular values (low indexes) are chosen more often, as in real inventory.
  const skewed = <T>(xs: readonly T[]) => xs[Math.floor(next() ** 2 * xs.length)]!;
  const some = <T>(xs: readonly T[], min: number, max: number, skew = false) => {
    const n = min + int(max - min + 1);
    const out = new Set<T>();
    for (let i = 0; i < n * 3 && out.size < n; i++) out.add(skew ? skewed(xs) : pick(xs));
    return [...out];
  };
  return { next, int, pick, some };
}

export interface DemoOptions {
  agents: number;
  seed?: number;
  /** Demo organizations owning enrolled agents (uuid); defaults to fixed ids. */
  orgIds?: string[];
  log?: (message: string) => void;
  /** The deployment's clock and ids (the rows' timestamps and uuid7 keys). */
  clock: ClockPort;
  ids: IdsPort;
}

export interface DemoSummary {
  agents: number;
  enrolled: number;
  publishers: number;
  properties: number;
  authorizations: number;
  operators: number;
  profiles: number;
}

async function bulk(q: Queryable, rows: unknown[], statement: (batch: unknown[]) => ReturnType<typeof sql>, size = 5000): Promise<void> {
  for (let i = 0; i < rows.length; i += size) await q.query(statement(rows.slice(i, i + size)));
}

/** How many agents the registry holds. */
export async function countAgents(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM registry_agents`);
  return row?.n ?? 0;
}

/**
 * Delete every discovery row so a demo can be reseeded. The search index still holds the old
 * agents: the watermark is reset, so the next drain (or SearchSync.reindex) rebuilds it.
 */
export async function resetDiscovery(db: DatabasePort): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(sql`TRUNCATE registry_authorizations, registry_publisher_agents, registry_property_identifiers, registry_properties,
      registry_publishers, registry_agent_profiles, registry_agent_capabilities, registry_agents, registry_operator_properties,
      registry_operator_agents, registry_operators, registry_search_outbox`);
    await tx.query(sql`UPDATE registry_search_watermark SET generation = NULL, applied_version = 0 WHERE id = 1`);
  });
}

export async function seedDemo(db: DatabasePort, options: DemoOptions): Promise<DemoSummary> {
  const r = rng(options.seed ?? 42);
  const log = options.log ?? (() => {});
  const now = options.clock.now();
  const orgs = options.orgIds ?? ['01900000-0000-7000-8000-00000000d001', '01900000-0000-7000-8000-00000000d002', '01900000-0000-7000-8000-00000000d003'];
  const orgNames = ['Demo Media Group', 'Demo Ad Tech', 'Demo Measurement Co'];
  const nAgents = options.agents;
  const nPublishers = Math.max(5, Math.ceil(nAgents / 8));

  // ---- Publishers and properties.
  interface Prop {
    id: string;
    publisher: number;
    key: string;
    type: string;
    name: string;
    identifiers: Array<{ type: string; value: string }>;
    tags: string[];
    channels: string[];
  }
  const publishers = Array.from({ length: nPublishers }, (_, i) => ({ id: options.ids.uuid7(), domain: `${r.pick(WORDS)}${r.pick(NOUNS)}${i}.example` }));
  const props: Prop[] = [];
  const propsOf: Prop[][] = publishers.map(() => []);
  publishers.forEach((p, pi) => {
    const count = 1 + r.int(6);
    for (let k = 0; k < count; k++) {
      const type = k === 0 ? 'website' : r.pick(PROPERTY_TYPES);
      const idType = type === 'website' ? 'domain' : type === 'mobile_app' || type === 'ctv_app' ? 'bundle_id' : type === 'podcast' ? 'rss_url' : 'venue_id';
      const base = p.domain.replace(/\.example$/, '');
      const value =
        idType === 'domain'
          ? k === 0
            ? p.domain
            : `${r.pick(NOUNS)}${k}.${p.domain}`
          : idType === 'bundle_id'
            ? `com.${base}.app${k}`
            : idType === 'rss_url'
              ? `https://${p.domain}/feed${k}.xml`
              : `${base}-venue-${k}`;
      const prop: Prop = {
        id: options.ids.uuid7(),
        publisher: pi,
        key: `p${k}`,
        type,
        name: `${base} ${type.replace('_', ' ')} ${k}`,
        identifiers: [{ type: idType, value }],
        tags: r.some(TAGS, 1, 3, true),
        channels: r.some(CHANNELS_BY_TYPE[type]!, 1, 2),
      };
      props.push(prop);
      propsOf[pi]!.push(prop);
    }
  });

  // ---- Agents, their links to publishers, and authorizations.
  interface Agent {
    id: string;
    url: string;
    type: string;
    enrolled: number | null;
    visibility: Visibility;
    declared: Record<string, unknown>;
    operator: string | null;
  }
  const agents: Agent[] = [];
  const auths: Array<{ agent_id: string; property_id: string; publisher_id: string; delegation_type: string; countries: string[]; authorized_for: string }> =
    [];
  const links = new Map<string, { publisher_id: string; agent_id: string; delegation: string }>();
  const profiles: Array<AgentProfileDocument & { agent_id: string }> = [];
  for (let i = 0; i < nAgents; i++) {
    const type = r.pick(AGENT_TYPES);
    const enrolled = r.next() < 0.3 ? r.int(orgs.length) : null;
    const visibility: Visibility = enrolled === null ? 'public' : r.next() < 0.8 ? 'public' : r.next() < 0.5 ? 'members_only' : 'private';
    const host = `${r.pick(WORDS)}-${r.pick(['ads', 'sell', 'signals', 'creative', 'buy', 'measure'])}-${i}.example`;
    const url = `https://${host}${r.next() < 0.6 ? '/mcp' : '/a2a'}`;
    const agent: Agent = {
      id: options.ids.uuid7(),
      url,
      type,
      enrolled,
      visibility,
      operator: enrolled !== null || r.next() < 0.5 ? host.replace(/^[^-]+-[^-]+-/, 'operator-') : null,
      declared: {
        categories: r.some(CATEGORIES, 0, 4, true),
        delivery_types: r.some(DELIVERY, 1, 2),
        has_tmp: r.next() < 0.2,
        category_taxonomy: r.next() < 0.7 ? 'iab_content_3.0' : null,
        format_ids: [{ agent_url: 'https://creative.example', id: r.pick(['display_300x250_image', 'video_16x9_30s', 'native_in_feed', 'audio_30s']) }],
      },
    };
    agents.push(agent);
    // Sales-type agents carry most inventory; a few "networks" carry a lot.
    // Every agent is named by at least one publisher, so every agent has an inventory profile.
    const nPubs = type === 'sales' ? (r.next() < 0.05 ? 5 + r.int(20) : 1 + r.int(3)) : 1;
    const seenProps = new Set<string>();
    const pubs = new Set<number>();
    const markets = new Set<string>(r.some(MARKETS, 1, 3, true));
    for (let k = 0; k < nPubs; k++) {
      const pi = r.int(nPublishers);
      pubs.add(pi);
      const delegation = r.pick(['direct', 'delegated', 'ad_network']);
      links.set(`${pi}|${agent.id}`, { publisher_id: publishers[pi]!.id, agent_id: agent.id, delegation });
      const countries = r.some(MARKETS, 0, 2, true);
      for (const c of countries) markets.add(c);
      for (const prop of propsOf[pi]!) {
        if (seenProps.has(prop.id) || r.next() < 0.3) continue;
        seenProps.add(prop.id);
        auths.push({
          agent_id: agent.id,
          property_id: prop.id,
          publisher_id: publishers[pi]!.id,
          delegation_type: delegation,
          countries,
          authorized_for: `${type} inventory`,
        });
      }
    }
    const covered = props.filter((p) => seenProps.has(p.id));
    if (enrolled === null && pubs.size === 0) continue; // neither enrolled nor named by any publisher: no profile
    const d = agent.declared as { categories: string[]; delivery_types: string[]; has_tmp: boolean; category_taxonomy: string | null; format_ids: unknown[] };
    profiles.push({
      agent_id: agent.id,
      agent_url: url,
      channels: [...new Set(covered.flatMap((p) => p.channels))].sort(),
      property_types: [...new Set(covered.map((p) => p.type))].sort(),
      markets: [...markets].sort(),
      categories: [...d.categories].sort(),
      tags: [...new Set(covered.flatMap((p) => p.tags))].sort(),
      delivery_types: [...d.delivery_types].sort(),
      format_ids: d.format_ids,
      property_count: covered.length,
      publisher_count: pubs.size,
      has_tmp: d.has_tmp,
      category_taxonomy: d.category_taxonomy,
      updated_at: now.toISOString(),
      visibility: agent.visibility,
      owner_org_id: enrolled === null ? null : orgs[enrolled]!,
    });
  }
  log(`generated ${agents.length} agents, ${publishers.length} publishers, ${props.length} properties, ${auths.length} authorizations`);

  const urlById = new Map(agents.map((a) => [a.id, a.url]));
  const linksByPublisher = new Map<string, Array<{ agent_id: string; delegation: string }>>();
  for (const l of links.values()) linksByPublisher.set(l.publisher_id, [...(linksByPublisher.get(l.publisher_id) ?? []), l]);

  await db.transaction(async (tx) => {
    await bulk(
      tx,
      agents.map((a) => ({
        id: a.id,
        url: a.url,
        name: a.enrolled === null ? null : `${a.url.split('/')[2]!.split('.')[0]} agent`,
        type: a.enrolled === null ? null : a.type,
        protocol: a.url.endsWith('/a2a') ? 'a2a' : 'mcp',
        visibility: a.visibility,
        operator_domain: a.operator,
        owner_org_id: a.enrolled === null ? null : orgs[a.enrolled],
        owner_org_name: a.enrolled === null ? null : orgNames[a.enrolled % orgNames.length],
        declared_inventory: a.enrolled === null ? {} : a.declared,
        description: a.enrolled === null ? null : `Synthetic ${a.type} agent`,
      })),
      (b) => sql`
      INSERT INTO registry_agents (id, url, name, type, protocol, visibility, operator_domain, owner_org_id, owner_org_name, declared_inventory, description, enrolled_at, discovered_at, created_at, updated_at)
      SELECT id, url, name, type, protocol, visibility, operator_domain, owner_org_id, owner_org_name, declared_inventory, description,
        CASE WHEN owner_org_id IS NULL THEN NULL ELSE ${now}::timestamptz END, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
      FROM jsonb_to_recordset(${b}::jsonb) AS x(id uuid, url text, name text, type text, protocol text, visibility text, operator_domain text,
        owner_org_id uuid, owner_org_name text, declared_inventory jsonb, description text)`,
    );
    const measurement = agents.filter((a) => a.enrolled !== null && a.type === 'measurement');
    await bulk(
      tx,
      measurement.map((a, i) => ({
        agent_id: a.id,
        metrics: [
          { metric_id: 'viewability', accreditations: i % 2 ? [{ accrediting_body: 'MRC' }] : [] },
          { metric_id: r.pick(['attention_score', 'brand_lift', 'reach', 'completion_rate']), accreditations: i % 3 ? [] : [{ accrediting_body: 'JIC' }] },
        ],
      })),
      (b) => sql`
      INSERT INTO registry_agent_capabilities (agent_id, metrics, metric_ids, accrediting_bodies, crawled_at)
      SELECT agent_id, metrics,
        array(SELECT m->>'metric_id' FROM jsonb_array_elements(metrics) m),
        array(SELECT DISTINCT a->>'accrediting_body' FROM jsonb_array_elements(metrics) m, jsonb_array_elements(m->'accreditations') a),
        ${now}::timestamptz
      FROM jsonb_to_recordset(${b}::jsonb) AS x(agent_id uuid, metrics jsonb)`,
    );
    log('agents written');

    await bulk(
      tx,
      publishers.map((p, pi) => ({
        id: p.id,
        domain: p.domain,
        adagents: {
          contact: { name: `${p.domain} ad ops` },
          properties: propsOf[pi]!.map((x) => ({
            property_id: x.key,
            property_type: x.type,
            name: x.name,
            identifiers: x.identifiers,
            tags: x.tags,
            supported_channels: x.channels,
          })),
          authorized_agents: (linksByPublisher.get(p.id) ?? []).slice(0, 200).map((l) => ({
            url: urlById.get(l.agent_id),
            authorized_for: 'Demo inventory',
            authorization_type: 'property_tags',
            property_tags: TAGS.slice(0, 5),
            delegation_type: l.delegation,
          })),
        },
      })),
      (b) => sql`
      INSERT INTO registry_publishers (id, domain, source, has_adagents, adagents_valid, adagents, contact, last_validated, created_at, updated_at)
      SELECT id, domain, 'adagents_json', true, true, adagents, adagents->'contact', ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
      FROM jsonb_to_recordset(${b}::jsonb) AS x(id uuid, domain text, adagents jsonb)`,
      nAgents > 20000 ? 200 : 1000,
    );
    await bulk(
      tx,
      props.map((p) => ({
        id: p.id,
        publisher_id: publishers[p.publisher]!.id,
        key: p.key,
        type: p.type,
        name: p.name,
        identifiers: p.identifiers,
        tags: p.tags,
        channels: p.channels,
      })),
      (b) => sql`
      INSERT INTO registry_properties (id, publisher_id, property_key, property_id, property_type, name, identifiers, tags, channels, status, created_at, updated_at)
      SELECT id, publisher_id, key, key, type, name, identifiers, tags, channels, 'active', ${now}::timestamptz, ${now}::timestamptz
      FROM jsonb_to_recordset(${b}::jsonb) AS x(id uuid, publisher_id uuid, key text, type text, name text, identifiers jsonb, tags text[], channels text[])`,
    );
    await bulk(
      tx,
      props.map((p) => ({ id: p.id, type: p.identifiers[0]!.type, value: p.identifiers[0]!.value })),
      (b) => sql`
      INSERT INTO registry_property_identifiers (property_id, type, value)
      SELECT id, type, value FROM jsonb_to_recordset(${b}::jsonb) AS x(id uuid, type text, value text)`,
    );
    log('publishers and properties written');

    await bulk(
      tx,
      [...links.values()],
      (b) => sql`
      INSERT INTO registry_publisher_agents (publisher_id, agent_id, authorized_for, authorization_types, delegation_types)
      SELECT publisher_id, agent_id, 'Demo inventory', ARRAY['property_tags'], ARRAY[delegation]
      FROM jsonb_to_recordset(${b}::jsonb) AS x(publisher_id uuid, agent_id uuid, delegation text)`,
    );
    await bulk(
      tx,
      auths,
      (b) => sql`
      INSERT INTO registry_authorizations (agent_id, property_id, publisher_id, authorization_type, delegation_type, authorized_for, countries)
      SELECT agent_id, property_id, publisher_id, 'property_tags', delegation_type, authorized_for, countries
      FROM jsonb_to_recordset(${b}::jsonb) AS x(agent_id uuid, property_id uuid, publisher_id uuid, delegation_type text, authorized_for text, countries text[])`,
    );
    log('authorizations written');

    // Operators: every distinct operator domain publishes a brand.json declaring its agents and
    // the properties it sells with the relationship matching the publisher's delegation_type.
    const byOperator = new Map<string, Agent[]>();
    for (const a of agents) if (a.operator) byOperator.set(a.operator, [...(byOperator.get(a.operator) ?? []), a]);
    const opRows: unknown[] = [];
    const opProps: Array<{ operator_domain: string; property_type: string; identifier: string; relationship: string }> = [];
    const opAgents: Array<{ operator_domain: string; agent_url: string; agent_type: string }> = [];
    const authByAgent = new Map<string, typeof auths>();
    for (const z of auths) authByAgent.set(z.agent_id, [...(authByAgent.get(z.agent_id) ?? []), z]);
    const propById = new Map(props.map((p) => [p.id, p]));
    for (const [domain, list] of byOperator) {
      opRows.push({ domain, house_name: domain.replace(/^operator-/, '').replace(/\.example$/, ''), names: [domain] });
      const declared = new Map<string, { operator_domain: string; property_type: string; identifier: string; relationship: string }>();
      for (const a of list) {
        opAgents.push({ operator_domain: domain, agent_url: a.url, agent_type: a.type });
        for (const z of authByAgent.get(a.id) ?? []) {
          if (r.next() < 0.1) continue; // some operators forget a property: the operator side fails there
          const p = propById.get(z.property_id)!;
          declared.set(`${p.type}|${p.identifiers[0]!.value}`, {
            operator_domain: domain,
            property_type: p.type,
            identifier: p.identifiers[0]!.value,
            relationship: z.delegation_type,
          });
        }
      }
      opProps.push(...declared.values());
    }
    await bulk(
      tx,
      opRows,
      (b) => sql`
      INSERT INTO registry_operators (domain, brand_json, brand_json_valid, house_name, brand_names, updated_at)
      SELECT domain, jsonb_build_object('house', jsonb_build_object('domain', domain, 'name', house_name)), true, house_name, names, ${now}::timestamptz
      FROM jsonb_to_recordset(${b}::jsonb) AS x(domain text, house_name text, names text[])`,
    );
    await bulk(
      tx,
      opProps,
      (b) => sql`
      INSERT INTO registry_operator_properties (operator_domain, property_type, identifier, relationship)
      SELECT operator_domain, property_type, identifier, relationship FROM jsonb_to_recordset(${b}::jsonb) AS x(operator_domain text, property_type text, identifier text, relationship text)
      ON CONFLICT DO NOTHING`,
    );
    await bulk(
      tx,
      opAgents,
      (b) => sql`
      INSERT INTO registry_operator_agents (operator_domain, agent_url, agent_type)
      SELECT operator_domain, agent_url, agent_type FROM jsonb_to_recordset(${b}::jsonb) AS x(operator_domain text, agent_url text, agent_type text)
      ON CONFLICT DO NOTHING`,
    );
    log(`operators written (${opRows.length})`);

    await bulk(
      tx,
      profiles,
      (b) => sql`
      INSERT INTO registry_agent_profiles (agent_id, channels, property_types, markets, categories, tags, delivery_types, format_ids,
        property_count, publisher_count, has_tmp, category_taxonomy, updated_at)
      SELECT agent_id, channels, property_types, markets, categories, tags, delivery_types, format_ids, property_count, publisher_count,
        has_tmp, category_taxonomy, updated_at
      FROM jsonb_to_recordset(${b}::jsonb) AS x(agent_id uuid, channels text[], property_types text[], markets text[], categories text[],
        tags text[], delivery_types text[], format_ids jsonb, property_count int, publisher_count int, has_tmp boolean, category_taxonomy text, updated_at timestamptz)`,
    );
    await enqueueAllProfiles(tx, now);
    log('profiles written and queued for the search index');
  });

  return {
    agents: agents.length,
    enrolled: agents.filter((a) => a.enrolled !== null).length,
    publishers: publishers.length,
    properties: props.length,
    authorizations: auths.length,
    operators: new Set(agents.map((a) => a.operator).filter(Boolean)).size,
    profiles: profiles.length,
  };
}
