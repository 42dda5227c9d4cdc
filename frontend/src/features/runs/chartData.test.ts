import { describe, expect, it } from 'vitest';
import type { SeriesOut } from '@/api/client';
import { breakAtGaps, percentileSpectrum, seriesOverlay, tailX, tracesToTable } from './chartData';
import { easeagentRun } from '../../../test/testRuns';

const series = (id: number, variant_id: number, t_ms: number[], values: number[]): SeriesOut => ({
  id, variant_id, scenario_id: null, load_id: 2, metric: 'throughput', process: '', interval_ms: 5000, t_ms, values,
});

describe('seriesOverlay', () => {
  const run = easeagentRun();
  const items = [
    series(1, 1, [1_000_000, 1_005_000, 1_010_000], [300, 360, 361]),
    series(2, 2, [1_005_000, 1_010_000], [290, 293]),
    { ...series(3, 1, [1_000_000], [1]), load_id: 1 },
  ];

  it('puts every variant of one load level on a shared time axis starting at 0 s', () => {
    const model = seriesOverlay(run, items, 2, 'throughput', [null]);
    expect(model.traces.map((t) => t.name)).toEqual(['baseline', 'agent']);
    expect(model.traces[0].x).toEqual([0, 5, 10]);
    expect(model.traces[1].x).toEqual([5, 10]);
  });

  it('builds a table of the same numbers, leaving gaps empty', () => {
    const { table } = seriesOverlay(run, items, 2, 'throughput', [null]);
    expect(table.rows.map((r) => [r.values.x, r.values.t0, r.values.t1])).toEqual([
      [0, 300, null],
      [5, 360, 290],
      [10, 361, 293],
    ]);
  });
});

describe('breakAtGaps', () => {
  it('breaks the line where the next point is more than one interval later, and only there', () => {
    // Two repetitions of 3 s at 1 s intervals, the second starting 7 s after the first.
    const run = easeagentRun();
    const reps = { ...series(1, 1, [0, 1000, 2000, 7000, 8000, 9000], [10, 11, 12, 20, 21, 22]), interval_ms: 1000 };
    const [trace] = seriesOverlay(run, [reps], 2, 'throughput', [null]).traces;
    expect(breakAtGaps(trace)).toEqual({ x: [0, 1, 2, 4.5, 7, 8, 9], y: [10, 11, 12, null, 20, 21, 22] });
  });

  it('leaves a series without an interval as it is', () => {
    expect(breakAtGaps({ name: 'a', x: [0, 10], y: [1, 2] })).toEqual({ x: [0, 10], y: [1, 2] });
  });
});

describe('percentile spectrum', () => {
  it('stretches the tail: P90 → 10, P99 → 100, P99.9 → 1000', () => {
    expect(tailX(90)).toBeCloseTo(10, 12);
    expect(tailX(99)).toBeCloseTo(100, 12);
    expect(tailX(99.9)).toBeCloseTo(1000, 9);
  });

  it('keeps the chosen scenarios of one load level and drops P100 (infinite on the axis)', () => {
    const run = easeagentRun();
    const owner = run.cells.filter((c) => c.scenario_id === 2);
    const items = owner.map((c) => ({
      cell_id: c.id,
      points: [
        { percentile: 50, value_ms: 10 + c.variant_id },
        { percentile: 100, value_ms: 99 },
      ],
    }));
    const model = percentileSpectrum(run, items, 2, ['API-URI-owner-3spans']);
    expect(model.traces).toEqual([
      { name: 'baseline', variant: 'baseline', x: [50], y: [11] },
      { name: 'agent', variant: 'agent', x: [50], y: [12] },
    ]);
    expect(percentileSpectrum(run, items, 2, ['*']).traces).toHaveLength(0);
  });
});

describe('tracesToTable', () => {
  it('sorts x and names columns after the traces', () => {
    const t = tracesToTable('t', 'Time', 's', [{ name: 'a', x: [2, 1], y: [20, 10] }]);
    expect(t.columns.map((c) => c.label)).toEqual(['Time', 'a']);
    expect(t.rows.map((r) => r.values.t0)).toEqual([10, 20]);
  });
});
