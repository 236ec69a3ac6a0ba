import { token } from '../token.ts';

/** One policy of a content standards configuration (governance/policy-entry.json, the members evaluation reads). */
export interface ContentPolicy {
  policy_id: string;
  enforcement: 'must' | 'should' | 'may';
  policy: string;
  policy_categories?: string[];
  channels?: string[];
  guidance?: string;
}

/** What is judged: a content artifact (content-standards/artifact.json) and where it ran, when known. */
export interface ContentSubject {
  artifact: Record<string, unknown>;
  channel?: string;
  country?: string;
}

/** Why a rule fired: which rule, which term, in which field of the artifact, around which text. */
export interface ContentMatch {
  rule: string;
  term: string;
  field: string;
  excerpt: string;
}

/** The outcome for one policy (a `features[]` entry of calibrate_content / validate_content_delivery). */
export interface ContentFeature {
  feature_id: string;
  policy_id: string;
  status: 'passed' | 'failed' | 'warning' | 'unevaluated';
  explanation: string;
  confidence?: number;
  /** The evidence behind a failed or warning status (empty otherwise). */
  matches: ContentMatch[];
}

export interface ContentEvaluation {
  /** fail when a `must` policy failed; should/may violations are warnings and do not fail. */
  verdict: 'pass' | 'fail';
  explanation: string;
  confidence?: number;
  features: ContentFeature[];
}

/**
 * Judges content against a standard's policies (calibrate_content, validate_content_delivery).
 * The governance-content plugin's default is a deterministic rules engine; a deployment binds this
 * port to plug another evaluator (a model-based one) without changing the tasks.
 */
export interface ContentEvaluatorPort {
  evaluate(policies: readonly ContentPolicy[], subject: ContentSubject): Promise<ContentEvaluation>;
}

export const ContentEvaluator = token<ContentEvaluatorPort>('core.content-evaluator');
