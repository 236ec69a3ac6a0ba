import type { Json } from '../../core/task.ts';
import type { Product } from '../../core/ports/inventory.ts';
import type { SalesDeps } from './deps.ts';
import { applyAsk, draftRow, finalize, findProposal, planProposal, renderProposal, saveProposal, type ProposalRow } from './proposals.ts';

/** What get_products answers about proposals: the proposals, their products, and per refine entry the outcome. */
export interface ProposalAnswer {
  proposals: Json[];
  productIds: string[];
  /** refinement_applied entries by position of the refine array (proposal entries only). */
  applied: (Json | undefined)[];
}

type RefineEntry =
  | { scope: 'request'; ask: string }
  | { scope: 'product'; product_id: string }
  | { scope: 'proposal'; proposal_id: string; action?: 'include' | 'omit' | 'finalize'; ask?: string };

const answer = (rows: ProposalRow[], applied: (Json | undefined)[] = []): ProposalAnswer => ({
  proposals: rows.map(renderProposal),
  productIds: [...new Set(rows.flatMap((r) => r.allocations.map((a) => a.product_id)))],
  applied,
});

/** A brief's plan: drafted from the ranked products, stored for refine / finalize / create_media_buy. */
export async function proposalAnswers(
  deps: SalesDeps,
  owner: string,
  accountKey: string,
  products: readonly Product[],
  brief: string | undefined,
  start: Date | undefined,
): Promise<ProposalAnswer> {
  const plan = planProposal(products, brief, start);
  if (!plan) return answer([]);
  const row = draftRow(plan, owner, accountKey, deps.clock.now());
  await saveProposal(deps.db, row);
  return answer([row]);
}

/**
 * The proposal entries of a refine call: `include` (with an optional ask) returns the proposal
 * revised as a draft, `omit` leaves it out, `finalize` commits it with an inventory hold. An
 * unknown or lapsed proposal is `unable` for that entry only.
 */
export async function refineProposals(deps: SalesDeps, owner: string, accountKey: string, refine: readonly RefineEntry[]): Promise<ProposalAnswer> {
  const now = deps.clock.now();
  const shown: ProposalRow[] = [];
  const applied: (Json | undefined)[] = [];
  for (const r of refine) {
    if (r.scope !== 'proposal') {
      applied.push(undefined);
      continue;
    }
    const entry = { scope: 'proposal', proposal_id: r.proposal_id };
    const found = await findProposal(deps.db, owner, accountKey, r.proposal_id);
    const lapsed = found && found.status === 'committed' && new Date(found.expires_at) <= now;
    if (!found || (lapsed && r.action !== 'finalize')) {
      applied.push({
        ...entry,
        status: 'unable',
        notes: found ? 'Its hold lapsed: finalize it again' : 'No such proposal for this account: send a brief first',
      });
      continue;
    }
    const action = r.action ?? 'include';
    if (action === 'omit') {
      applied.push({ ...entry, status: 'applied' });
      continue;
    }
    if (action === 'finalize') {
      const committed = finalize(found, now);
      await saveProposal(deps.db, committed);
      shown.push(committed);
      applied.push({ ...entry, status: 'applied', notes: `Firm pricing; inventory held until ${committed.expires_at.toISOString()}` });
      continue;
    }
    if (!r.ask) {
      shown.push(found);
      applied.push({ ...entry, status: 'applied' });
      continue;
    }
    const revised = applyAsk(found, r.ask, now);
    if (revised.status !== 'unable') await saveProposal(deps.db, revised.proposal);
    shown.push(revised.proposal);
    applied.push({ ...entry, status: revised.status, notes: revised.notes });
  }
  return answer(shown, applied);
}
