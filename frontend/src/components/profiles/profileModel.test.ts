import { describe, expect, it } from 'vitest';
import { flameTrace, layoutFlame, shortName } from '@/components/charts/flame';
import { cpuTable, diffBars, flameBars, flameTable, type AbOut, type FlameOut } from './profileModel';

const node = (id: number, parent: number | null, name: string, total: number, extra: Partial<FlameOut['nodes'][number]> = {}) => ({
  id, parent, name, package: name.split('.').slice(0, -2).join('.'), agent: name.startsWith('io.opentelemetry'), total, self: 0, ...extra,
});

const flame: FlameOut = {
  run: 'r', variant: 'agent', load: 'concurrency:2', scenario: '*', repetitions: 3, total: 10, hidden: 0,
  nodes: [
    node(0, null, 'all', 10),
    node(1, 0, 'java.lang.Thread.run', 10),
    node(2, 1, 'app.Work.run', 6, { self: 6 }),
    node(3, 1, 'io.opentelemetry.sdk.trace.SdkSpan.end', 4, { self: 4, delta_total: 4, delta_self: 4, reference_total: 0 }),
  ],
};

describe('flame graph layout', () => {
  it('lays children out widest first inside their parent, one row per depth', () => {
    const bars = layoutFlame(flameBars(flame));
    expect(bars.map((b) => [b.name, b.depth, b.start, b.value])).toEqual([
      ['all', 0, 0, 10], ['java.lang.Thread.run', 1, 0, 10], ['app.Work.run', 2, 0, 6],
      ['io.opentelemetry.sdk.trace.SdkSpan.end', 2, 6, 4],
    ]);
    const [trace] = flameTrace(bars) as [{ base: number[]; x: number[]; y: number[] }];
    expect(trace.base).toEqual([0, 0, 0, 6]);
    expect(trace.x).toEqual([10, 10, 6, 4]);
    expect(trace.y).toEqual([0, 1, 2, 2]);
  });

  it('colours agent code apart, and a differential graph red where CPU was added', () => {
    const colors = flameBars(flame).map((b) => b.color);
    expect(colors[3]).toBe('#8e6bd8');
    expect(colors[2]).not.toBe('#8e6bd8');
    const diff = diffBars(flame);
    expect(diff[3].color).toBe('hsl(0, 75%, 50%)');   // the largest difference: the strongest red
    expect(diff[2].color).toBe('hsl(0, 75%, 95%)');   // no difference: nearly white
  });

  it('names frames short enough for a bar', () => {
    expect(shortName('io.opentelemetry.sdk.trace.SdkSpan.end')).toBe('SdkSpan.end');
    expect(shortName('net/http.(*conn).serve')).toBe('(*conn).serve');
    expect(shortName('runtime.mallocgc')).toBe('runtime.mallocgc');
  });

  it('tables the same numbers, widest first, with the differences of a differential graph', () => {
    const table = flameTable(flame, 'frames');
    expect(table.rows.map((r) => r.values.frame)).toEqual(['all', 'java.lang.Thread.run', 'app.Work.run', 'io.opentelemetry.sdk.trace.SdkSpan.end']);
    expect(table.columns.map((c) => c.key)).toContain('delta');
    expect(table.rows[3].values.delta).toBe(4);
  });
});

describe('CPU tables', () => {
  const ab = (diff: number): AbOut => ({
    statistic: 'mean', reference: 1, variant: 1 + diff, abs_diff: diff, rel_diff: diff, ci_low: diff - 1, ci_high: diff + 1,
    ci_low_rel: null, ci_high_rel: null, mw_p: null, cliffs_delta: null, verdict: 'large', worse: true, mde: 1, mde_rel: 1,
    n_ref: 3, n_var: 3, method: 't-repetitions',
  }) as AbOut;

  it('shows the attributed CPU of packages and marks agent code', () => {
    const model = cpuTable([{ name: 'io.opentelemetry.sdk', group: 'io.opentelemetry.sdk', agent: true, self: ab(1), total: ab(2), attributed: ab(3) }],
      'Packages', 'Package', { reference: 'baseline', variant: 'agent' });
    expect(model.columns.map((c) => c.key)).toEqual(['name', 'agent', 'attributed', 'self', 'total']);
    const row = model.rows[0].values;
    expect(row.agent).toBe('agent');
    expect(row.attributed).toMatchObject({ kind: 'comparison', diff: 3, stats: { low: 2, high: 4 } });
  });
});
