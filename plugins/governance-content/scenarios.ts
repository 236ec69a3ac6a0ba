import * as v from 'valibot';
import { defineScenario, type TestScenario } from '../../core/ports/test-controller.ts';
import { owningAccount } from './accounts.ts';
import type { ContentDeps } from './deps.ts';
import { accountRef, artifact, dateTime, nonEmpty } from './schemas.ts';
import { upsertArtifact } from './store.ts';

const seeded = v.object({
  record_id: nonEmpty(256),
  artifact,
  delivered_at: v.optional(dateTime),
  package_id: v.optional(nonEmpty(256)),
  country: v.optional(nonEmpty(8)),
  channel: v.optional(nonEmpty(64)),
  local_verdict: v.optional(v.picklist(['pass', 'fail', 'unevaluated'])),
});

/** Sandbox scenario of content standards (comply_test_controller): record delivered artifacts of a media buy. */
export function contentScenarios(deps: ContentDeps): TestScenario[] {
  return [
    defineScenario({
      name: 'seed_media_buy_artifacts',
      protocol: 'governance',
      description:
        'Record content artifacts delivered under a media buy, for get_media_buy_artifacts: params {media_buy_id, artifacts: [{record_id, artifact, delivered_at?, package_id?, channel?, local_verdict?}], account?}',
      params: v.object({
        media_buy_id: nonEmpty(256),
        account: v.optional(accountRef),
        artifacts: v.pipe(v.array(seeded), v.minLength(1, 'must not be empty'), v.maxLength(1000)),
      }),
      async run({ params, principal, account }) {
        // params.account, else the request's account when it names one ({sandbox: true} alone names none).
        const fromRequest = account ? v.safeParse(accountRef, account) : undefined;
        const ref = params.account ?? (fromRequest?.success ? fromRequest.output : undefined);
        const now = deps.clock.now();
        await deps.db.transaction(async (tx) => {
          const accountId = ref ? await owningAccount(deps, tx, principal.orgId, ref) : null;
          for (const a of params.artifacts) {
            await upsertArtifact(tx, {
              owner: principal.orgId,
              account_id: accountId,
              media_buy_id: params.media_buy_id,
              record_id: a.record_id,
              package_id: a.package_id ?? null,
              delivered_at: a.delivered_at ? new Date(a.delivered_at) : now,
              country: a.country ?? null,
              channel: a.channel ?? null,
              artifact: a.artifact,
              local_verdict: a.local_verdict ?? null,
            });
          }
        });
        return { kind: 'seed', message: `${params.artifacts.length} artifact(s) recorded for media buy ${params.media_buy_id}` };
      },
    }),
  ];
}
