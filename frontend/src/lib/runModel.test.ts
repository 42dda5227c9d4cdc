import { describe, expect, it } from 'vitest';
import { buildBreakdown, buildJmhTables, buildMatrix, compare, orderedScenarios, referenceVariant, sortLoads } from './runModel';
import { easeagentRun, easegressRun, jmhRun } from './testRuns';

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

describe('buildBreakdown (EaseAgent shape)', () => {
  const run = easeagentRun();
  const load = run.loads.find((l) => l.key === 'threads:10')!;
  const [reference, variant] = run.variants;
  const model = buildBreakdown(run, { load, reference, variant, percentile: 'p75' });
  const row = (name: string) => model.rows.find((r) => r.id === name)!.values;

  it('puts reference, variant and variant − reference side by side', () => {
    expect(row('API-URI-owner-3spans')['cpu_pct.ref']).toBe(10.7);
    expect(row('API-URI-owner-3spans')['cpu_pct.var']).toBe(13.3);
    expect(row('API-URI-owner-3spans')['cpu_pct.diff']).toBeCloseTo(2.6, 10);
    expect(row('API-URI-vets-10spans')['heap_mb.diff']).toBe(-61);
    expect(row('API-URI-vets-10spans')['latency_p75.diff']).toBeCloseTo(30, 10);
    expect(row('API-URI-owner-3spans')['throughput.diff']).toBe(-68);
    expect(row('API-URI-owner-3spans')['throughput.pct']).toBeCloseTo(((293 - 361) / 361) * 100, 10);
  });

  it('lists the all-scenarios aggregate last and drops metrics no cell carries', () => {
    expect(model.rows.map((r) => r.values.scenario)).toEqual(['API-URI-owner-3spans', 'API-URI-vets-10spans', 'All scenarios']);
    expect(model.columns.some((c) => c.key.startsWith('rss_mb'))).toBe(false);
    expect(row('*')['cpu_pct.ref']).toBeNull();
  });

  it('follows the selected percentile', () => {
    const p99 = buildBreakdown(run, { load, reference, variant, percentile: 'p99' });
    expect(p99.columns.some((c) => c.key.startsWith('latency_p99'))).toBe(false); // no cell has p99
    expect(p99.columns.some((c) => c.key.startsWith('latency_p75'))).toBe(false);
  });

  it('marks each diff with its metric direction', () => {
    expect(model.columns.find((c) => c.key === 'throughput.diff')?.direction).toBe('higher');
    expect(model.columns.find((c) => c.key === 'latency_p75.diff')?.direction).toBe('lower');
  });
});

describe('buildMatrix (Easegress shape)', () => {
  const run = easegressRun();
  const model = buildMatrix(run, { metric: 'throughput', reference: referenceVariant(run)! });

  it('has one row per scenario × load in load order and a ratio per non-reference variant', () => {
    expect(model.rows.map((r) => r.values.load)).toEqual(['50 concurrency, 900 requests', '100 concurrency, 90000 requests']);
    const first = model.rows[0].values;
    expect(first['1.value']).toBe(24068.3219);
    expect(first['3.ratio']).toBeCloseTo(41687.5741 / 24068.3219, 12);
    expect(first['2.ratio']).toBeCloseTo(25078.4517 / 24068.3219, 12);
    expect(first['1.ratio']).toBeUndefined();
  });

  it('can take another variant as the reference', () => {
    const radix = run.variants.find((v) => v.name === 'radixtree')!;
    const m = buildMatrix(run, { metric: 'throughput', reference: radix });
    expect(m.columns[2].label).toBe('radixtree');
    expect(m.rows[1].values['1.ratio']).toBeCloseTo(26077.3742 / 65122.1171, 12);
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

  it('differences are variant − reference in the score unit; a missing variant stays empty', () => {
    const sample = tables[1].table;
    const sql = sample.rows.find((r) => r.values.scenario === 'SqlBenchmark.sqlQuery')!.values;
    expect(sql['2.diff']).toBeCloseTo(0.07, 12);
    expect(sql['3.diff']).toBeCloseTo(0.06, 12);
    const servlet = sample.rows.find((r) => r.values.scenario === 'ServletBenchmark.serviceRequest')!.values;
    expect(servlet['2.diff']).toBeCloseTo(0.1, 12);
    expect(servlet['3.diff']).toBeNull();
  });

  it('time per op is better lower, ops per time better higher', () => {
    expect(tables[0].table.columns.find((c) => c.role === 'diff')?.direction).toBe('higher');
    expect(tables[1].table.columns.find((c) => c.role === 'diff')?.direction).toBe('lower');
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
