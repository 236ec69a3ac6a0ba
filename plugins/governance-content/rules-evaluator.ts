import type {
  ContentEvaluation,
  ContentEvaluatorPort,
  ContentFeature,
  ContentMatch,
  ContentPolicy,
  ContentSubject,
} from '../../core/ports/content-evaluator.ts';

/**
 * The default ContentEvaluator: a deterministic rules engine, so every verdict names the rule,
 * the term and the artifact text that decided it. It reads two kinds of policy:
 * - prohibitions ("No violent or controversial imagery", "Never show tobacco"): each alternative
 *   of the sentence ("violent" | "controversial") is a keyword rule that fires when all of its
 *   words occur in the artifact's text; a policy category with a known vocabulary (`violence`,
 *   `alcohol`...) adds its keywords;
 * - alt-text requirements ("All images must have alt text"): every image asset needs alt_text.
 * Other policies (colour tolerances, DPI) need pixels, not text: they are `unevaluated`, and do
 * not decide the verdict.
 */
export function createRulesEvaluator(): ContentEvaluatorPort {
  return { evaluate: async (policies, subject) => evaluateWithRules(policies, subject) };
}

/** Keywords of well-known policy categories (GARM-style); a policy naming one is checked for them. */
export const CATEGORY_KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  violence: ['violent', 'violence', 'gore', 'graphic injury', 'bloodshed', 'weapon'],
  weapons: ['weapon', 'firearm', 'gun', 'ammunition'],
  alcohol: ['alcohol', 'beer', 'wine', 'liquor', 'spirits'],
  gambling: ['gambling', 'casino', 'betting', 'lottery'],
  tobacco: ['tobacco', 'cigarette', 'vaping', 'nicotine'],
  adult: ['adult content', 'nudity', 'explicit', 'sexual'],
  drugs: ['drug', 'narcotic', 'cannabis'],
  hate_speech: ['hate speech', 'slur', 'racist'],
  profanity: ['profanity', 'obscene'],
  political: ['political', 'election', 'candidate'],
};

const STOPWORDS = new Set(
  'a an the of or and to in on at for with by from any all no not never do does must should may be is are was were this that these those only its their our your content contents imagery image images ad ads advertising advertisement advertisements creative creatives product products material materials featuring shown show showing use using allowed permitted prohibited references reference depictions depiction'.split(
    ' ',
  ),
);

/** A prohibition sentence: its negation lead, removed before reading the alternatives. */
const PROHIBITION = /^(?:no|never|avoid|do not (?:show|use|include|feature|depict)|must not (?:show|use|include|feature|depict|contain)|without)\s+(.+)$/i;
const ALT_TEXT = /\balt[\s-]?text\b/i;

const words = (s: string) => s.toLowerCase().match(/[a-z0-9]+/g) ?? [];
/** Prefix a word must start with to count as the term (violent ~ violence, gambling ~ gamble). */
const stem = (w: string) => (w.length <= 5 ? w : w.slice(0, Math.max(5, w.length - 3)));

/** The artifact's readable text, by field: description, title, text assets, alt texts, captions, transcripts, URL paths. */
export function artifactTexts(artifact: Record<string, unknown>): { field: string; text: string }[] {
  const out: { field: string; text: string }[] = [];
  const add = (field: string, value: unknown) => {
    if (typeof value === 'string' && value.trim()) out.push({ field, text: value });
  };
  add('description', artifact.description);
  add('title', artifact.title);
  add('url', urlWords(artifact.url));
  const meta = artifact.metadata as Record<string, unknown> | undefined;
  if (meta && typeof meta === 'object') add('metadata.keywords', meta.keywords);
  const assets = Array.isArray(artifact.assets) ? artifact.assets : [];
  assets.forEach((a: any, i: number) => {
    if (!a || typeof a !== 'object') return;
    add(`assets[${i}].content`, a.content);
    add(`assets[${i}].alt_text`, a.alt_text);
    add(`assets[${i}].caption`, a.caption);
    add(`assets[${i}].transcript`, a.transcript);
    add(`assets[${i}].url`, urlWords(a.url));
  });
  return out;
}

/** A URL's path as words ("/violent-hunting-scene.png" reads "violent hunting scene png"); hosts are not content. */
function urlWords(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  try {
    return decodeURIComponent(new URL(url).pathname).replace(/[^A-Za-z0-9]+/g, ' ');
  } catch {
    return undefined;
  }
}

/** The keyword rules a policy text yields: one per alternative of each prohibition sentence. */
export function keywordRules(policy: ContentPolicy): { rule: string; terms: string[] }[] {
  const rules: { rule: string; terms: string[] }[] = [];
  for (const sentence of policy.policy.split(/[.;!\n]+/)) {
    const m = PROHIBITION.exec(sentence.trim());
    if (!m) continue;
    for (const alternative of m[1]!.split(/,|\bor\b|\band\b|\//i)) {
      const terms = words(alternative).filter((w) => w.length > 2 && !STOPWORDS.has(w));
      if (terms.length) rules.push({ rule: `prohibits "${terms.join(' ')}"`, terms });
    }
  }
  for (const category of policy.policy_categories ?? []) {
    for (const keyword of CATEGORY_KEYWORDS[category.toLowerCase()] ?? []) rules.push({ rule: `category ${category}: "${keyword}"`, terms: words(keyword) });
  }
  return rules;
}

function findTerms(terms: string[], texts: { field: string; text: string }[]): ContentMatch | undefined {
  for (const { field, text } of texts) {
    const ws = words(text);
    const hits = terms.map((t) => ws.find((w) => w.startsWith(stem(t))));
    if (hits.every(Boolean)) {
      const first = text.toLowerCase().indexOf(hits[0]!);
      const excerpt = text.slice(Math.max(0, first - 40), first + 60).trim();
      return { rule: '', term: terms.join(' '), field, excerpt };
    }
  }
  return undefined;
}

function evaluatePolicy(policy: ContentPolicy, subject: ContentSubject, texts: { field: string; text: string }[]): ContentFeature {
  const base = { feature_id: policy.policy_id, policy_id: policy.policy_id };
  if (subject.channel && policy.channels?.length && !policy.channels.includes(subject.channel)) {
    return { ...base, status: 'unevaluated', explanation: `Applies to ${policy.channels.join(', ')}, not ${subject.channel}`, matches: [] };
  }
  const violated = policy.enforcement === 'must' ? 'failed' : 'warning';
  if (ALT_TEXT.test(policy.policy) && /\bmust|\brequire|\ball\b/i.test(policy.policy)) {
    const assets = Array.isArray(subject.artifact.assets) ? (subject.artifact.assets as any[]) : [];
    const missing: ContentMatch[] = [];
    assets.forEach((a, i) => {
      if (a?.type === 'image' && !(typeof a.alt_text === 'string' && a.alt_text.trim())) {
        missing.push({ rule: 'image assets need alt_text', term: 'alt_text', field: `assets[${i}].alt_text`, excerpt: String(a.url ?? '').slice(0, 200) });
      }
    });
    if (missing.length) {
      return {
        ...base,
        status: violated,
        confidence: 1,
        explanation: `${missing.length} image asset(s) without alt_text (${missing.map((m) => m.field).join(', ')})`,
        matches: missing,
      };
    }
    return { ...base, status: 'passed', confidence: 1, explanation: 'Every image asset has alt_text', matches: [] };
  }
  const rules = keywordRules(policy);
  if (!rules.length) {
    return { ...base, status: 'unevaluated', explanation: 'Not a prohibition or alt-text rule: the rules engine cannot judge it from text', matches: [] };
  }
  if (!texts.length) return { ...base, status: 'unevaluated', explanation: 'The artifact carries no text to check', matches: [] };
  const matches: ContentMatch[] = [];
  for (const r of rules) {
    const hit = findTerms(r.terms, texts);
    if (hit) matches.push({ ...hit, rule: r.rule });
  }
  if (matches.length) {
    const m = matches[0]!;
    return { ...base, status: violated, confidence: 1, explanation: `Rule ${m.rule} matched "${m.term}" in ${m.field}: "${m.excerpt}"`, matches };
  }
  return { ...base, status: 'passed', confidence: 1, explanation: `None of ${rules.length} keyword rule(s) matched the artifact's text`, matches: [] };
}

export function evaluateWithRules(policies: readonly ContentPolicy[], subject: ContentSubject): ContentEvaluation {
  const texts = artifactTexts(subject.artifact);
  const features = policies.map((p) => evaluatePolicy(p, subject, texts));
  const failed = features.filter((f) => f.status === 'failed');
  const warned = features.filter((f) => f.status === 'warning');
  const verdict = failed.length ? 'fail' : 'pass';
  const explanation = failed.length
    ? `Fails must-policy ${failed.map((f) => f.policy_id).join(', ')}: ${failed[0]!.explanation}`
    : warned.length
      ? `Passes every must-policy; advisory violation of ${warned.map((f) => f.policy_id).join(', ')}`
      : `Passes: no policy violation found (${features.filter((f) => f.status === 'unevaluated').length} policy(ies) not judged from text)`;
  return { verdict, explanation, confidence: 1, features };
}
