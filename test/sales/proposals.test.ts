import { expect, test } from 'bun:test';
import { applyAsk, splitPercent, type ProposalRow } from '../../plugins/sales/proposals.ts';

const now = new Date('2026-03-02T00:00:00Z');
const plan = (lines: [string, number][]): ProposalRow => ({
  owner: 'o',
  account_key: '',
  proposal_id: 'balanced_reach_q2',
  name: 'Balanced Reach Plan',
  description: '',
  brief: null,
  allocations: lines.map(([channel, pct]) => ({ product_id: `p_${channel}`, pricing_option_id: 'po', allocation_percentage: pct, channel, rationale: '' })),
  status: 'committed',
  expires_at: now,
  created_at: now,
  updated_at: now,
});
const shares = (p: ProposalRow) => p.allocations.map((a) => `${a.channel}:${a.allocation_percentage}`);

test('splitPercent: whole percentages adding up to 100, even when every weight is zero', () => {
  expect(splitPercent([1, 1, 1])).toEqual([34, 33, 33]);
  expect(splitPercent([60, 20])).toEqual([75, 25]);
  expect(splitPercent([0, 0])).toEqual([50, 50]);
  expect(splitPercent([])).toEqual([]);
});

test('applyAsk: the storyboard ask (60% to CTV, drop display, its budget to video) and asks it does not understand', () => {
  const p = plan([
    ['display', 34],
    ['olv', 33],
    ['ctv', 33],
  ]);
  const revised = applyAsk(p, 'Shift 60% of budget to CTV. Drop the display product and redistribute that budget to video.', now);
  expect(revised.status).toBe('applied');
  expect(shares(revised.proposal)).toEqual(['ctv:60', 'olv:40']);
  // A revision is a draft again.
  expect(revised.proposal.status).toBe('draft');
  const none = applyAsk(p, 'Make it pop', now);
  expect(none.status).toBe('unable');
  expect(none.proposal).toBe(p);
  const partial = applyAsk(p, 'Drop the display line. Add more sparkle', now);
  expect(partial.status).toBe('partial');
  // Everything to CTV, then CTV dropped: the rest is split evenly rather than lost.
  const emptied = applyAsk(p, 'Shift 100% of budget to CTV. Drop the CTV product', now);
  expect(emptied.proposal.allocations.reduce((s, a) => s + a.allocation_percentage, 0)).toBe(100);
});
