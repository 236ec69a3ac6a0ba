import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, keptWithin, type Json } from '../../core/task.ts';
import type { AssignablePackage, PreparedCreative } from '../../core/ports/seller-creatives.ts';
import { accountRef, creative, versionFields } from '../../lib/adcp/request-fields.ts';
import { fitsFormats } from '../../lib/adcp/format-ids.ts';
import { BoundedSet } from '../../lib/bounded-set.ts';
import type { CreativesDeps } from './deps.ts';
import { isUniqueViolation } from '../../core/ports/database.ts';
import { formatKeys, insertNewCreatives, prepareCreatives, writeCreatives } from './library.ts';

const assignmentInput = v.strictObject({
  creative_id: v.pipe(v.string('is required'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$')),
  package_id: v.pipe(v.string('is required'), v.minLength(1), v.maxLength(128)),
  weight: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100))),
  placement_ids: v.optional(v.array(v.string())),
});

/** What sync_creatives looks up before its transaction. */
interface Prepared {
  account: Awaited<ReturnType<CreativesDeps['accounts']['resolve']>>;
  creatives: PreparedCreative[];
}

/** Library creatives (account, creative id) seen to exist, at most this many (then all forgotten): their sync upserts at once. */
const KNOWN_MAX = 10_000;

export function syncCreativesTask(deps: CreativesDeps) {
  // A creative seen in the library is synced with the upsert; one not seen is first tried as new (a forgotten
  // or removed one only costs its sync a failed first attempt).
  const seen = new BoundedSet(KNOWN_MAX);
  return defineTask({
    name: 'sync_creatives',
    description:
      'Upload creatives to the account library (format ids validated with the creative agent that defines them) and assign them to packages; a buy waiting for creatives moves to pending_start when every package has one.',
    protocol: 'media_buy',
    // The library is the creative agent's too (CreativeStore): its mounts serve it.
    servedWith: ['creative'],
    mutating: true,
    input: v.object({
      ...versionFields,
      account: accountRef,
      creatives: v.pipe(
        v.array(creative, 'must be an array of creatives'),
        v.minLength(1, 'must not be empty'),
        v.maxLength(100, 'accepts at most 100 creatives'),
      ),
      assignments: v.optional(v.pipe(v.array(assignmentInput), v.minLength(1, 'must not be empty'), v.maxLength(500))),
      creative_ids: v.optional(v.array(v.string())),
      delete_missing: v.optional(v.boolean()),
      dry_run: v.optional(v.boolean()),
      validation_mode: v.optional(v.picklist(['strict', 'lenient'], 'must be strict or lenient')),
    }),
    // Database only once the formats are known: the library, the assignments and the idempotency
    // record commit in one transaction of the handler's own (keepWithin). The formats (a remote creative
    // agent may be asked) and the account are looked up before it opens.
    recordsKeyWithin: true,
    async prepare({ input, principal }): Promise<Prepared> {
      if (input.delete_missing) throw new ProtocolError('UNSUPPORTED_FEATURE', 'delete_missing is not supported by this seller', { field: 'delete_missing' });
      const account = await deps.accounts.resolve(deps.db, principal.orgId, input.account);
      return { account, creatives: await prepareCreatives(deps, input.creatives, 'creatives') };
    },
    async handler({ input, principal, clock, protocols, prepared: ready, idempotency }) {
      const owner = principal.orgId;
      const { account, creatives: prepared } = ready as Prepared;
      const byId = new Map(prepared.map((p) => [p.input.creative_id, p]));
      // A creative agent's path (no media buys served there) keeps the library only: each assignment is
      // answered per creative in assignment_errors, since the packages are the seller's.
      const sellsHere = !protocols || protocols.includes('media_buy');
      const elsewhere = sellsHere ? [] : (input.assignments ?? []);
      const assignments = sellsHere ? (input.assignments ?? []) : [];
      const packagesSide = deps.packages();
      if (assignments.length && !packagesSide)
        throw new ProtocolError('UNSUPPORTED_FEATURE', 'assignments: this deployment sells no packages to assign creatives to', { field: 'assignments' });
      const now = clock.now();
      const actor = principal.orgName;
      const answer = (actions: Map<string, 'created' | 'updated' | 'unchanged'>): Json => {
        const results: Json[] = prepared.map((p) => {
          const out: Json = { creative_id: p.input.creative_id, action: actions.get(p.input.creative_id), status: 'approved' };
          const to = assignments.filter((a) => a.creative_id === p.input.creative_id).map((a) => a.package_id);
          if (assignments.length) out.assigned_to = to;
          const refused = elsewhere.filter((a) => a.creative_id === p.input.creative_id);
          if (refused.length) {
            out.assigned_to = [];
            out.assignment_errors = Object.fromEntries(
              refused.map((a) => [a.package_id, 'This creative agent serves no packages: assign the creative on the seller that sold the package']),
            );
          }
          return out;
        });
        const body: Json = { creatives: results };
        if (input.dry_run) body.dry_run = true;
        if (deps.options.sandbox || account.sandbox) body.sandbox = true;
        return body;
      };
      const keys = prepared.map((p) => `${account.account_id}\n${p.input.creative_id}`);
      // What a dry run answers, and a sync of creatives all new to the library.
      const allCreated = new Map(prepared.map((p) => [p.input.creative_id, 'created' as const]));
      // Creatives none of which was seen in the library, and no assignment: inserted as new (each one's action
      // `created`), in a statement a creative already there fails. The answer is known before it runs, so it, the
      // idempotency record and COMMIT go without waiting; should one exist after all (or the key be taken), the
      // transaction rolls back and the upsert below runs.
      if (!input.dry_run && !assignments.length && !keys.some((k) => seen.has(k))) {
        try {
          const body = await deps.db.transaction(async (tx) => {
            insertNewCreatives(tx, owner, account.account_id, prepared, now).catch(() => {});
            return keptWithin(idempotency, tx, answer(allCreated));
          });
          seen.add(keys);
          return body;
        } catch (error) {
          if (!isUniqueViolation(error)) throw error;
        }
      }
      const body = await deps.db.transaction(async (tx) => {
        // Packages named by assignments: the caller's, of this account, in a state that takes creatives.
        const packages = packagesSide
          ? await packagesSide.find(tx, owner, account.account_id, [...new Set(assignments.map((a) => a.package_id))])
          : new Map<string, AssignablePackage>();
        const library = await formatKeys(
          tx,
          account.account_id,
          assignments.map((a) => a.creative_id),
        );
        for (const [i, a] of assignments.entries()) {
          const field = `assignments[${i}]`;
          const pkg = packages.get(a.package_id);
          if (!pkg)
            throw new ProtocolError('PACKAGE_NOT_FOUND', `No package ${a.package_id.slice(0, 128)} in this account's media buys`, {
              status: 404,
              field: `${field}.package_id`,
            });
          const key = byId.get(a.creative_id)?.key ?? library.get(a.creative_id);
          if (!key)
            throw new ProtocolError('CREATIVE_NOT_FOUND', `Creative ${a.creative_id} is neither in this request nor in the account library`, {
              status: 404,
              field: `${field}.creative_id`,
            });
          if (!fitsFormats(pkg.format_ids, key)) {
            throw new ProtocolError('FORMAT_NOT_SUPPORTED', `Package ${pkg.package_id} does not accept the format of creative ${a.creative_id}`, {
              field: `${field}.creative_id`,
              suggestion: `Formats accepted: ${pkg.format_ids.map((f) => f.id).join(', ')}`,
            });
          }
        }
        if (packagesSide) await packagesSide.checkAssignable(tx, owner, [...new Set([...packages.values()].map((p) => p.media_buy_id))]);
        if (input.dry_run) return keptWithin(idempotency, tx, answer(allCreated));
        const actions = await writeCreatives(tx, owner, account.account_id, prepared, now);
        if (packagesSide && assignments.length) await packagesSide.assign(tx, account.account_id, assignments, actor, now);
        return keptWithin(idempotency, tx, answer(actions));
      });
      if (!input.dry_run) seen.add(keys);
      return body;
    },
  });
}
