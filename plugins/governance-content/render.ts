import type { Json } from '../../core/task.ts';
import type { StandardsRow } from './store.ts';

/** content-standards/content-standards.json of a stored configuration (scope members flattened, as the schema has them). */
export function renderStandards(r: StandardsRow): Json {
  const { countries_all, channels_any, languages_any } = r.scope;
  return {
    standards_id: r.standards_id,
    ...(r.name ? { name: r.name } : {}),
    ...(countries_all ? { countries_all } : {}),
    ...(channels_any ? { channels_any } : {}),
    ...(languages_any ? { languages_any } : {}),
    policies: r.policies,
    ...(r.calibration_exemplars ? { calibration_exemplars: r.calibration_exemplars } : {}),
  };
}
