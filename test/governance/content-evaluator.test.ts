import { describe, expect, test } from 'bun:test';
import type { ContentEvaluatorPort, ContentPolicy } from '../../core/ports/content-evaluator.ts';
import { createRulesEvaluator, keywordRules } from '../../plugins/governance-content/rules-evaluator.ts';

/**
 * The ContentEvaluator contract, run against the default rules engine: a must violation fails,
 * a should violation only warns, a policy it cannot judge is unevaluated and decides nothing, and
 * every failure names its rule, its term, the artifact field and the text around the match.
 * A model-based evaluator bound to the port should pass the same contract.
 */
export function contentEvaluatorContract(name: string, make: () => ContentEvaluatorPort) {
  const policies: ContentPolicy[] = [
    { policy_id: 'no_violence', enforcement: 'must', policy: 'No violent or controversial imagery' },
    { policy_id: 'no_stock', enforcement: 'should', policy: 'No stock photography' },
    { policy_id: 'alt_text', enforcement: 'must', policy: 'All images must have alt text' },
    { policy_id: 'colors', enforcement: 'must', policy: 'Brand colors must match palette within 5% tolerance' },
    { policy_id: 'ctv_only', enforcement: 'must', channels: ['ctv'], policy: 'No gambling' },
  ];
  const image = (alt?: string) => ({ type: 'image', url: 'https://cdn.example/creative.png', ...(alt ? { alt_text: alt } : {}) });
  const artifact = (over: Record<string, unknown>) => ({ property_rid: 'pub.example', artifact_id: 'a1', assets: [image('Hiking boots')], ...over });

  describe(`ContentEvaluator contract: ${name}`, () => {
    test('a clean artifact passes; policies it cannot judge are unevaluated and do not fail it', async () => {
      const e = await make().evaluate(policies, { artifact: artifact({ description: 'Hikers on a sunny trail' }), channel: 'display' });
      expect(e.verdict).toBe('pass');
      const status = Object.fromEntries(e.features.map((f) => [f.policy_id, f.status]));
      expect(status).toEqual({ no_violence: 'passed', no_stock: 'passed', alt_text: 'passed', colors: 'unevaluated', ctv_only: 'unevaluated' });
      expect(e.features.find((f) => f.policy_id === 'ctv_only')!.explanation).toContain('ctv');
    });

    test('a must violation fails, explained by rule, term, field and excerpt', async () => {
      const e = await make().evaluate(policies, { artifact: artifact({ description: 'Graphic hunting scene showing violence' }) });
      expect(e.verdict).toBe('fail');
      const f = e.features.find((x) => x.policy_id === 'no_violence')!;
      expect(f.status).toBe('failed');
      expect(f.matches[0]).toEqual({ rule: 'prohibits "violent"', term: 'violent', field: 'description', excerpt: 'Graphic hunting scene showing violence' });
      expect(f.explanation).toBe('Rule prohibits "violent" matched "violent" in description: "Graphic hunting scene showing violence"');
      expect(e.explanation).toContain('no_violence');
    });

    test('a should violation is a warning and the verdict still passes; text is read from assets and URL paths', async () => {
      const e = await make().evaluate(policies, {
        artifact: artifact({ assets: [{ ...image('Stock photography of a lake'), url: 'https://cdn.example/lake.png' }] }),
      });
      expect(e.verdict).toBe('pass');
      const f = e.features.find((x) => x.policy_id === 'no_stock')!;
      expect(f.status).toBe('warning');
      expect(f.matches[0]).toMatchObject({ term: 'stock photography', field: 'assets[0].alt_text' });
      const fromUrl = await make().evaluate(policies, {
        artifact: artifact({ assets: [{ type: 'image', url: 'https://cdn.example/violent-scene.png', alt_text: 'x' }] }),
      });
      expect(fromUrl.features.find((x) => x.policy_id === 'no_violence')!.matches[0]).toMatchObject({ field: 'assets[0].url' });
    });

    test('an image without alt text fails an alt-text must-policy, naming the asset', async () => {
      const e = await make().evaluate(policies, { artifact: artifact({ assets: [image('ok'), image()] }) });
      expect(e.verdict).toBe('fail');
      const f = e.features.find((x) => x.policy_id === 'alt_text')!;
      expect(f).toMatchObject({ status: 'failed', matches: [{ rule: 'image assets need alt_text', field: 'assets[1].alt_text' }] });
    });

    test('deterministic: the same input gives the same evaluation', async () => {
      const subject = { artifact: artifact({ description: 'controversial imagery', assets: [image()] }) };
      expect(await make().evaluate(policies, subject)).toEqual(await make().evaluate(policies, subject));
    });
  });
}

contentEvaluatorContract('rules engine', createRulesEvaluator);

describe('rules engine: keyword rules of a policy', () => {
  test('each alternative of a prohibition sentence is a rule; generic words are dropped; known categories add keywords', () => {
    expect(keywordRules({ policy_id: 'p', enforcement: 'must', policy: 'No alcohol, gambling, or tobacco content.' }).map((r) => r.terms)).toEqual([
      ['alcohol'],
      ['gambling'],
      ['tobacco'],
    ]);
    expect(
      keywordRules({ policy_id: 'p', enforcement: 'must', policy: 'Family-friendly content only. No political advertising.' }).map((r) => r.terms),
    ).toEqual([['political']]);
    expect(keywordRules({ policy_id: 'p', enforcement: 'must', policy: 'Minimum 72 DPI' })).toEqual([]);
    expect(keywordRules({ policy_id: 'p', enforcement: 'must', policy: 'Keep it clean', policy_categories: ['tobacco'] }).map((r) => r.rule)).toContain(
      'category tobacco: "cigarette"',
    );
  });
});
