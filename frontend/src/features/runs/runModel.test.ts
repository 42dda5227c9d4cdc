import { describe, expect, it } from 'vitest';
import type { RunOverheads } from '@/api/client';
import { compare, orderedScenarios, referenceVariant, sortLoads } from '@/lib/cells';
import { isComparison, type CellValue, type ComparisonValue } from '@/lib/table';
import { benchmarkPackage, buildJmhTables, buildLeadTable, buildMatrix, jmhBars, microsPerOp, overheadLookup } from './runModel';
import { easeagentRun, easegressRun, jmhRun } from '../../../test/testRuns';

function cmp(v: CellValue | undefined): ComparisonValue {
  if (!isComparison(v)) throw new Error(`not a comparison: ${JSON.stringify(v)}`);
  return v;
}

describe('compare', () => {
  it('gives diff, ratio and relative change against the reference', () => {
    const c = compare(100, 120);
    expect(c.diff).toBe(20);
    expect(c.ratio).toBeCloseTo(1.2, 12);
    expect(c.pct).toBeCloseTo(20, 10);
  });
  it('has no ratio against a zero reference and nothing when a side is missing', () => {
    expect(compare(0, 3)).toMatchObject({ diff: 3, ratio: null, pct: null });
    expect(compare(null, 3)).toMatchObject({ diff: null, ratio: null, variant: 3 });
  });
});

describe('buildLeadTable (EaseAgent shape)', () => {
  const run = easeagentRun();
  const [reference, variant] = run.variants;
  const at = (key: string) => run.loads.find((l) => l.key === key)!;
  const model = buildLeadTable(run, { load: at('threads:10'), reference, variant, percentile: 'p75' });
  const row = (m: typeof model, name: string) => m.rows.find((r) => r.id === name)!.values;

  it('has one column per metric, each cell reference / variant / diff (the seed numbers)', () => {
    expect(model.columns.map((c) => c.label)).toEqual(['Scenario', 'CPU', 'Heap', 'P75 latency', 'Throughput']);
    const owner = row(model, 'API-URI-owner-3spans');
    expect(cmp(owner.cpu_pct)).toMatchObject({ reference: 10.7, variant: 13.3 });
    expect(cmp(owner.cpu_pct).diff).toBeCloseTo(2.6, 10);
    expect(cmp(row(model, 'API-URI-vets-10spans').heap_mb).diff).toBe(-61);
    expect(cmp(row(model, 'API-URI-vets-10spans').latency_p75).diff).toBeCloseTo(30, 10);
    expect(cmp(owner.throughput).diff).toBe(-68);
    expect(cmp(owner.throughput).pct).toBeCloseTo(((293 - 361) / 361) * 100, 10);
  });

  it('lists the all-scenarios aggregate last; errors only when some request failed', () => {
    expect(model.rows.map((r) => r.values.scenario)).toEqual(['API-URI-owner-3spans', 'API-URI-vets-10spans', 'All scenarios']);
    expect(row(model, '*').cpu_pct).toBeNull();
    expect(model.columns.some((c) => c.key === 'error_rate')).toBe(false);
  });

  it('puts process metrics of the all-scenarios cell on every scenario row, as one shared value', () => {
    const t20 = buildLeadTable(run, { load: at('threads:20'), reference, variant, percentile: 'p75' });
    expect(t20.columns.map((c) => c.key)).toEqual(['scenario', 'cpu_pct', 'cpu_s_per_1k', 'heap_mb', 'latency_p75', 'latency_mean', 'throughput']);
    const owner = cmp(row(t20, 'API-URI-owner-3spans').cpu_pct);
    expect(owner).toMatchObject({ reference: 10.0, variant: 12.8, processWide: true });
    expect(owner.diff).toBeCloseTo(2.8, 10);
    expect(row(t20, 'API-URI-vets-10spans').cpu_pct).toBe(owner);
    expect(row(t20, '*').cpu_pct).toBe(owner);
    expect(cmp(row(t20, 'API-URI-vets-10spans').cpu_s_per_1k).diff).toBeCloseTo(0.161, 12);
    expect(cmp(row(t20, 'API-URI-vets-10spans').latency_mean).diff).toBe(9);
    expect(row(t20, '*').latency_mean).toBeNull();
  });

  it('attaches the API statistics of the same variant, scenario, load and metric', () => {
    const response: RunOverheads = {
      run: 'ease1',
      metric: 'latency_p75',
      items: [
        {
          cell: { scenario: 'API-URI-owner-3spans', load_key: 'threads:10', load_label: '10 threads', mode: '', process: '' },
          variant: 'agent', reference_variant: 'baseline', cell_id: 1, ref_cell_id: 2, trail_id: 1, p_adjusted: 0.003,
          result: {
            statistic: 'p75', reference: 100, variant: 120, abs_diff: 20, rel_diff: 0.2, ci_low: 15, ci_high: 26,
            ci_low_rel: 0.15, ci_high_rel: 0.26, mw_p: 0.001, cliffs_delta: 0.3, verdict: 'large', worse: true,
            mde: 4, mde_rel: 0.04, n_ref: 100, n_var: 100, method: 'bootstrap', paired: false,
          },
        },
      ],
    };
    const stats = overheadLookup([response], 'baseline');
    const m = buildLeadTable(run, { load: at('threads:10'), reference, variant, percentile: 'p75', stats });
    expect(cmp(row(m, 'API-URI-owner-3spans').latency_p75).stats).toMatchObject({
      low: 15, high: 26, verdict: 'large', mde: 4, pAdjusted: 0.003, comparisons: 1,
    });
    expect(cmp(row(m, 'API-URI-vets-10spans').latency_p75).stats).toBeNull();
    // Statistics against another reference than the one shown are not used.
    expect(overheadLookup([response], 'agent')('latency_p75', 'agent', 'API-URI-owner-3spans', 'threads:10', '')).toBeNull();
  });

  it('follows the selected percentile', () => {
    const p99 = buildLeadTable(run, { load: at('threads:10'), reference, variant, percentile: 'p99' });
    expect(p99.columns.some((c) => c.key.startsWith('latency_p'))).toBe(false); // no cell has p99
  });
});

describe('buildMatrix (Easegress shape)', () => {
  const run = easegressRun();
  const model = buildMatrix(run, { metric: 'throughput', reference: referenceVariant(run)! });

  it('has one row per scenario × load in load order and a ratio per non-reference variant', () => {
    expect(model.rows.map((r) => r.values.load)).toEqual(['50 concurrency, 900 requests', '100 concurrency, 90000 requests']);
    const first = model.rows[0].values;
    expect(first['1.value']).toBe(24068.3219);
    expect(cmp(first['3.cmp']).ratio).toBeCloseTo(41687.5741 / 24068.3219, 12);
    expect(cmp(first['2.cmp']).ratio).toBeCloseTo(25078.4517 / 24068.3219, 12);
    expect(first['1.cmp']).toBeUndefined();
  });

  it('can take another variant as the reference', () => {
    const radix = run.variants.find((v) => v.name === 'radixtree')!;
    const m = buildMatrix(run, { metric: 'throughput', reference: radix });
    expect(m.columns[2].label).toBe('radixtree');
    expect(cmp(m.rows[1].values['1.cmp']).ratio).toBeCloseTo(26077.3742 / 65122.1171, 12);
  });

  it('filters load levels by key', () => {
    const m = buildMatrix(run, { metric: 'throughput', reference: run.variants[0], loads: ['concurrency:100:n90000'] });
    expect(m.rows).toHaveLength(1);
  });
});

describe('buildJmhTables (X-Ray shape)', () => {
  const run = jmhRun();
  const tables = buildJmhTables(run, run.variants[0]);

  it('makes one table per mode in the score unit', () => {
    expect(tables.map((t) => [t.mode, t.unit])).toEqual([
      ['thrpt', 'ops/ms'],
      ['sample', 'ms/op'],
    ]);
  });

  it('has no column of what JMH counted or printed beside the score (its iterations, off-catalog percentiles)', () => {
    const counted = jmhRun();
    for (const c of counted.cells) c.params = { cnt: '5', latency_p9999_ms: '7.291' };
    const [thrpt] = buildJmhTables(counted, counted.variants[0]);
    expect(thrpt.table.columns.map((c) => c.label)).toEqual([
      'Benchmark', 'no-instrumentation', '± error', 'sdk-instrumentation', 'auto-instrumentation',
    ]);
  });

  it('differences are variant − reference in the score unit; a missing variant stays empty', () => {
    const sample = tables[1].table;
    const sql = sample.rows.find((r) => r.values.scenario === 'SqlBenchmark.sqlQuery')!.values;
    expect(cmp(sql['2.cmp']).diff).toBeCloseTo(0.07, 12);
    expect(cmp(sql['3.cmp']).diff).toBeCloseTo(0.06, 12);
    const servlet = sample.rows.find((r) => r.values.scenario === 'ServletBenchmark.serviceRequest')!.values;
    expect(cmp(servlet['2.cmp']).diff).toBeCloseTo(0.1, 12);
    expect(cmp(servlet['3.cmp']).variant).toBeNull();
  });

  it('says how many µs each operation gained', () => {
    // 2.207 − 2.137 ms/op = 70 µs per operation; 1/0.452 − 1/0.468 ms per op in µs for throughput.
    expect(cmp(tables[1].table.rows[0].values['2.cmp']).extra).toBe('+70 µs/op added');
    expect(microsPerOp(0.452, 'ops/ms')! - microsPerOp(0.468, 'ops/ms')!).toBeCloseTo(1000 / 0.452 - 1000 / 0.468, 9);
    expect(microsPerOp(3, 'ns/op')).toBeCloseTo(0.003, 12);
    expect(microsPerOp(3, 'B/op')).toBeNull();
  });

  it('draws each variant\'s difference with the errors in quadrature, or a lone variant\'s own scores', () => {
    const [thrpt] = tables;
    const bars = jmhBars(thrpt.table, run.variants[0], run.variants.slice(1));
    expect(bars.map((b) => b.name)).toEqual(['sdk-instrumentation − no-instrumentation', 'auto-instrumentation − no-instrumentation']);
    expect(bars[0].y).toEqual(['SqlBenchmark.sqlQuery']);
    expect(bars[0].x[0]).toBeCloseTo(0.452 - 0.468, 12);
    expect(bars[0].error[0]).toBeCloseTo(Math.sqrt(0.015 ** 2 + 0.011 ** 2), 12);

    const lone = { ...jmhRun(), variants: [run.variants[0]] };
    lone.cells = lone.cells.filter((c) => c.variant_id === 1);
    const [loneThrpt, loneSample] = buildJmhTables(lone, lone.variants[0]);
    expect(loneThrpt.table.title).toBe('JMH thrpt (ops/ms)');
    // Top-down as the table: Plotly draws the first category at the bottom.
    expect(jmhBars(loneSample.table, lone.variants[0], [])).toEqual([{
      name: 'no-instrumentation', variant: 'no-instrumentation',
      y: ['ServletBenchmark.serviceRequest', 'SqlBenchmark.sqlQuery'], x: [2.17, 2.137], error: [0.02, 0.01],
    }]);
  });

  it('names benchmarks by class and method, their shared package said once', () => {
    expect(benchmarkPackage([
      'org.casbin.jcasbin.main.benchmark.BenchmarkEnforce.enforce(dataScale=small, modelType=rbac)',
      'org.casbin.jcasbin.main.benchmark.BenchmarkManagement.addPolicy(currentRuleSize=1000)',
      'org.casbin.jcasbin.main.benchmark.BenchmarkMemory.measureMemory:gc.alloc.rate',
    ])).toBe('org.casbin.jcasbin.main.benchmark.');
    expect(benchmarkPackage(['a.b.C.m', 'a.x.D.n'])).toBe('a.');
    expect(benchmarkPackage(['SqlBenchmark.sqlQuery', 'ServletBenchmark.serviceRequest'])).toBe(''); // X-Ray's
    expect(benchmarkPackage(['a.b.C.m'])).toBe('a.b.'); // a class and a method stay, even alone

    const named = jmhRun();
    named.scenarios = named.scenarios.map((s) => ({ ...s, name: `com.example.bench.${s.name}` }));
    const [thrpt] = buildJmhTables(named, named.variants[0]);
    expect(thrpt.pkg).toBe('com.example.bench.');
    expect(thrpt.table.rows.map((r) => r.values.scenario)).toEqual(['SqlBenchmark.sqlQuery']);
  });

  it('time per op is better lower, ops per time better higher', () => {
    expect(tables[0].table.columns.find((c) => c.role === 'comparison')?.direction).toBe('higher');
    expect(tables[1].table.columns.find((c) => c.role === 'comparison')?.direction).toBe('lower');
  });
});

describe('ordering', () => {
  it('sorts loads by kind then value', () => {
    expect(sortLoads(easeagentRun().loads).map((l) => l.value)).toEqual([10, 20, 50]);
  });
  it('keeps only selected scenarios', () => {
    expect(orderedScenarios(easeagentRun(), ['API-URI-vets-10spans']).map((s) => s.name)).toEqual(['API-URI-vets-10spans']);
  });
});

describe('buildJmhTables for other micro-benchmark tools', () => {
  it('titles a Go measure by its unit alone and keeps JMH titles', () => {
    const go = { ...jmhRun(), tool: 'go', cells: jmhRun().cells.map((c) => ({ ...c, mode: 'ns/op', score_unit: 'ns/op' })) };
    expect(buildJmhTables(go, go.variants[0]).map((t) => t.table.title)[0]).toMatch(/^ns\/op(: difference to .*)?$/);
    expect(buildJmhTables(jmhRun(), jmhRun().variants[0])[0].table.title).toMatch(/^JMH /);
  });
});
