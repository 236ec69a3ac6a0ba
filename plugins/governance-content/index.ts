import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { ContentEvaluator } from '../../core/ports/content-evaluator.ts';
import { TestController } from '../../core/ports/test-controller.ts';
import { Auth } from '../../core/ports/auth.ts';
import { Http } from '../../core/http.ts';
import { Tasks } from '../../core/task.ts';
import type { ContentDeps } from './deps.ts';
import { createRulesEvaluator } from './rules-evaluator.ts';
import { createStandardsTask } from './create-standards.ts';
import { getStandardsTask } from './get-standards.ts';
import { updateStandardsTask } from './update-standards.ts';
import { listStandardsTask } from './list-standards.ts';
import { calibrateTask } from './calibrate.ts';
import { validateDeliveryTask } from './validate-delivery.ts';
import { mediaBuyArtifactsTask } from './media-buy-artifacts.ts';
import { contentScenarios } from './scenarios.ts';
import { artifactWebhookRoute } from './artifact-webhook.ts';

/**
 * Content standards of a governance agent: buyers keep, per account, the policies creative and
 * the content around it must meet; calibrate_content judges a sample before launch,
 * validate_content_delivery judges delivered artifacts after. Judging goes through the
 * ContentEvaluator port: a deployment that binds one (a model-based evaluator) replaces the
 * default deterministic rules engine.
 */
export default definePlugin({
  name: 'governance-content',
  deps: {
    db: Database,
    clock: Clock,
    ids: Ids,
    tasks: Tasks,
    http: Http,
    auth: optional(Auth),
    evaluator: optional(ContentEvaluator),
    controller: optional(TestController),
  },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, ids, tasks, http, auth, evaluator, controller }) {
    const deps: ContentDeps = { db, clock, ids, evaluator: evaluator ?? createRulesEvaluator() };
    tasks.add(
      createStandardsTask(deps),
      getStandardsTask(deps),
      updateStandardsTask(deps),
      listStandardsTask(deps),
      calibrateTask(deps),
      validateDeliveryTask(deps),
      mediaBuyArtifactsTask(deps),
    );
    // Buyers' SDKs gate the content standards tasks on media_buy.features.content_standards (the
    // feature map lives in the media_buy block in 3.0 and 3.1), even on a governance-only agent.
    tasks.declareCapability({ protocol: 'governance', specialisms: ['content-standards'], block: { media_buy: { features: { content_standards: true } } } });
    controller?.register(...contentScenarios(deps));
    // The artifact webhook (receive side): pushed artifacts feed get_media_buy_artifacts.
    http.add(artifactWebhookRoute(deps, auth));
  },
});
