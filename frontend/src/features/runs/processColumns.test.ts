import { describe, expect, it } from 'vitest';
import type { RunDetail, RunOverheads } from '@/api/client';
import { isComparison, type CellValue, type ComparisonValue } from '@/lib/table';
import { processMetrics } from './processColumns';
import { buildLeadTable, overheadLookup } from './runModel';
import { cell } from '../../../test/testRuns';

function cmp(v: CellValue | undefined): ComparisonValue {
  if (!isComparison(v)) throw new Error(`not a comparison: ${JSON.stringify(v)}`);
  return v;
}

const pc = (id: number, variant_id: number, process: string, cpu_pct: number, rss_mb: number) => ({
  id, variant_id, load_id: 1, trail_id: id, process, cpu_pct, cpu_s_per_1k: null, rss_mb, heap_mb: null, repetitions: [],
});

/** The PTS seeds' run: a consumer and a provider per variant at 1000 req/s. */
function ptsRun(): RunDetail {
  return {
    id: 1, slug: 'pts1', project: 'go', source: 'manual', tool: 'constant-rate', status: 'completed', is_valid: true,
    agent_version: null, app_version: null, commit: null, branch: null, labels: {}, environment: 'host',
    created_at: '2026-11-01T00:00:00Z', started_at: null, finished_at: null, permalink: '/r/pts1',
    status_detail: null, alerts: [], analysis_status: 'done', validity: [], criteria: [], progress: {},
    environment_detail: null, files: [], shares: [], meta: { cancel_requested: false, file_checks: false, generators: 1 },
    variants: [
      { id: 1, name: 'no-agent', is_reference: true },
      { id: 2, name: 'agent', is_reference: false },
    ],
    scenarios: [{ id: 1, name: 'echo' }],
    loads: [{ id: 1, key: 'rate:1000:d60s', kind: 'rate', value: 1000, requests: null, duration_s: 60, label: '1000 req/s' }],
    cells: [
      cell({ variant_id: 1, scenario_id: 1, load_id: 1, latency_mean: 33, count: 60000 }),
      cell({ variant_id: 2, scenario_id: 1, load_id: 1, latency_mean: 34, count: 60000 }),
    ],
    process_cells: [
      pc(11, 1, 'consumer', 23.4, 40), pc(12, 1, 'provider', 15, 30),
      pc(13, 2, 'consumer', 32.5, 44), pc(14, 2, 'provider', 18, 31),
    ],
  };
}

describe('process columns in the lead table', () => {
  it('has "consumer CPU", "consumer RSS", "provider CPU", "provider RSS" before the RT, in the seeds shape', () => {
    const run = ptsRun();
    const [ref, variant] = run.variants;
    const model = buildLeadTable(run, { load: run.loads[0], reference: ref, variant, percentile: 'p75' });
    expect(model.columns.map((c) => c.label)).toEqual([
      'Scenario', 'consumer CPU', 'consumer RSS', 'provider CPU', 'provider RSS', 'Mean RT',
    ]);
    expect(model.rows.map((r) => r.values.scenario)).toEqual(['echo']);
    const cpu = cmp(model.rows[0].values['process.consumer.cpu_pct']);
    // 32.5 − 23.4 = 9.1 percentage points; 32.5 / 23.4 − 1 = 38.9%
    expect([cpu.reference, cpu.variant]).toEqual([23.4, 32.5]);
    expect(cpu.diff).toBeCloseTo(9.1, 10);
    expect(cpu.pct).toBeCloseTo(38.888888, 4);
    expect(cpu.processWide).toBe(true);
    const rss = cmp(model.rows[0].values['process.provider.rss_mb']);
    expect([rss.reference, rss.variant, rss.diff]).toEqual([30, 31, 1]);
    expect(processMetrics(run)).toEqual(['cpu_pct', 'rss_mb']);
  });

  it('takes each process its own interval from /overheads, apart from the variant-wide cell', () => {
    const run = ptsRun();
    const [ref, variant] = run.variants;
    const result = (low: number) => ({
      statistic: 'mean', reference: 0, variant: 0, abs_diff: 0, rel_diff: 0, ci_low: low, ci_high: low + 1,
      ci_low_rel: null, ci_high_rel: null, mw_p: null, cliffs_delta: null, verdict: 'large', worse: true,
      mde: null, mde_rel: null, n_ref: 3, n_var: 3, method: 't-repetitions', paired: false,
    });
    const item = (process: string, low: number) => ({
      cell: { scenario: '*', load_key: 'rate:1000:d60s', load_label: '1000 req/s', mode: '', process },
      variant: 'agent', reference_variant: 'no-agent', cell_id: 1, ref_cell_id: 2, trail_id: 1, result: result(low),
    });
    const response = { run: 'pts1', metric: 'cpu_pct', items: [item('consumer', 5), item('provider', 2)] } as unknown as RunOverheads;
    const stats = overheadLookup([response], 'no-agent');
    const model = buildLeadTable(run, { load: run.loads[0], reference: ref, variant, percentile: 'p75', stats });
    expect(cmp(model.rows[0].values['process.consumer.cpu_pct']).stats?.low).toBe(5);
    expect(cmp(model.rows[0].values['process.provider.cpu_pct']).stats?.low).toBe(2);
    expect(cmp(model.rows[0].values['process.provider.rss_mb']).stats).toBeNull();
  });
});
