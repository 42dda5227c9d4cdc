import { describe, expect, it } from 'vitest';
import type { CompareOut } from '@/api/client';
import { comparisonDetail, comparisonTone, isComparison, type Column } from '@/lib/table';
import { buildRunComparison, compareStats } from './compareModel';
import { jmhRun } from '../../../test/testRuns';

const p75: Column = { key: 'cmp', label: 'P75 latency', role: 'comparison', unit: 'ms', direction: 'lower' };

function item(scenario: string, low: number, high: number, pAdjusted: number | null): CompareOut['items'][number] {
  return {
    cell: { scenario, load_key: 'threads:10', load_label: '10 threads', mode: '' },
    metric: 'latency_p75',
    a_variant: 'agent',
    b_variant: 'agent',
    a_cell_id: 1,
    b_cell_id: 2,
    p_adjusted: pAdjusted,
    result: {
      statistic: 'p75', reference: 10, variant: 10 + (low + high) / 2, abs_diff: (low + high) / 2, rel_diff: null,
      ci_low: low, ci_high: high, ci_low_rel: null, ci_high_rel: null, mw_p: null, cliffs_delta: null,
      verdict: low > 0 ? 'small' : 'no difference', worse: low > 0 ? true : null, mde: 0.5, mde_rel: null,
      n_ref: 5, n_var: 5, method: 't-repetitions',
    },
  } as CompareOut['items'][number];
}

describe('compareStats', () => {
  it('says when a cell\'s verdict does not hold once every compared cell is counted', () => {
    const out = { a: 'a', b: 'b', metric: 'latency_p75', items: [
      item('GET /a', 0.1, 0.9, 0.12), item('GET /b', 0.4, 1.2, 0.003), item('GET /c', -0.3, 0.2, 0.71),
    ] } as CompareOut;
    const stats = compareStats(out);
    const detail = (scenario: string, ref: number, variant: number): string =>
      comparisonDetail(p75, { kind: 'comparison', reference: ref, variant, diff: variant - ref, pct: ((variant - ref) / ref) * 100,
        ratio: null, stats: stats.get(['agent', scenario, 'threads:10', ''].join('\u0000')) ?? null });
    // Worse in its own cell (interval above 0) but adjusted p 0.12 over the three cells.
    expect(detail('GET /a', 10, 10.5)).toBe('+5.0% · +0.500 [+0.100, +0.900] · small, not significant over 3 cells (adjusted p 0.12)');
    // Adjusted p 0.003: the verdict holds.
    expect(detail('GET /b', 10, 10.8)).toBe('+8.0% · +0.800 [+0.400, +1.20] · small');
    // No change in its own cell: nothing to take back.
    expect(detail('GET /c', 10, 10)).toBe('0% · -0.050 [-0.300, +0.200] · no difference');
  });
});

describe('buildRunComparison', () => {
  it('says the unit of each JMH score, which is its mode\'s', () => {
    const a = jmhRun();
    const b = { ...jmhRun(), slug: 'jmh2' };
    const model = buildRunComparison(a, b, 'score');
    const rows = model.rows.filter((r) => r.values.variant === 'no-instrumentation');
    expect(rows.map((r) => [r.values.scenario, r.values.load])).toEqual([
      ['SqlBenchmark.sqlQuery', 'thrpt (ops/ms)'],
      ['SqlBenchmark.sqlQuery', 'sample (ms/op)'],
      ['ServletBenchmark.serviceRequest', 'sample (ms/op)'],
    ]);
    // A difference whose interval excludes 0 but which the API calls negligible ("no difference", no `worse`)
    // is toned by its own mode: more ms/op is worse, more ops/ms better (the column, "Score", has no direction).
    const negligible = (mode: string, low: number, high: number): CompareOut['items'][number] => {
      const it = item('SqlBenchmark.sqlQuery', low, high, null);
      return { ...it, metric: 'score', a_variant: 'no-instrumentation', cell: { ...it.cell, load_key: 'none', mode },
        result: { ...it.result, verdict: 'no difference', worse: null } };
    };
    const stats = compareStats({ a: 'jmh1', b: 'jmh2', metric: 'score', items: [
      negligible('thrpt', 0.0006, 0.0014), negligible('sample', 0.0012, 0.0028),
    ] } as CompareOut);
    const slower = { ...jmhRun(), slug: 'jmh2' };
    for (const c of slower.cells) if (c.score !== null) c.score += 0.002;
    const tones = buildRunComparison(a, slower, 'score', stats).rows
      .filter((r) => r.values.variant === 'no-instrumentation' && r.values.scenario === 'SqlBenchmark.sqlQuery')
      .map((r) => (isComparison(r.values.cmp) ? comparisonTone(r.values.cmp, 'higher') : 'not a comparison'));
    expect(tones).toEqual(['better', 'worse']);
    // Latency is in the column's header (ms), not in each row.
    expect(buildRunComparison(a, b, 'latency_p75').columns.find((c) => c.key === 'cmp')?.unit).toBe('ms');
  });
});
