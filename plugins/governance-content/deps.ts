import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { ContentEvaluatorPort } from '../../core/ports/content-evaluator.ts';

/** What the content standards tasks use. */
export interface ContentDeps {
  db: DatabasePort;
  clock: ClockPort;
  ids: IdsPort;
  /** Judges artifacts against policies: the bound ContentEvaluator, else the rules engine. */
  evaluator: ContentEvaluatorPort;
}
