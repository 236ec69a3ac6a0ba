import type { ContentEvaluation, ContentPolicy } from '../../core/ports/content-evaluator.ts';
import type { Json } from '../../core/task.ts';
import type { StandardsRow } from './store.ts';

/** The policies the evaluator reads, from a stored configuration. */
export const policiesOf = (r: StandardsRow): ContentPolicy[] =>
  r.policies.map((p) => ({
    policy_id: p.policy_id,
    enforcement: p.enforcement,
    policy: p.policy,
    ...(p.policy_categories ? { policy_categories: p.policy_categories } : {}),
    ...(p.channels ? { channels: p.channels } : {}),
    ...(p.guidance ? { guidance: p.guidance } : {}),
  }));

/** `features[]` of calibrate-content / validate-content-delivery responses (the evidence is in each explanation). */
export const renderFeatures = (e: ContentEvaluation): Json[] =>
  e.features.map((f) => ({
    feature_id: f.feature_id,
    status: f.status,
    policy_id: f.policy_id,
    explanation: f.explanation,
    ...(f.confidence === undefined ? {} : { confidence: f.confidence }),
  }));
