import { describe, expect, it } from 'vitest';
import type { AnnotationOut, OverheadTrail, TrailOut } from '@/api/client';
import {
  annotationMarkers,
  compareLoadKeys,
  fromOverhead,
  historyTable,
  orderPoints,
  overviewTrails,
  placePoints,
  thinTicks,
  intervalPct,
  distinguishingNames,
  resolveSelection,
  selectTrails,
  trailChoices,
  type HistoryPoint,
  type HistorySeries,
} from './historyModel';

function trail(id: number, over: Partial<TrailOut>): TrailOut {
  return { id, env_fingerprint: 'e1', environment: 'm5', scenario: '*', load_key: 'threads:10', load_label: '10 threads', variant: 'agent', mode: '', process: '', points: 3, ...over };
}

const TRAILS: TrailOut[] = [
  trail(1, { load_key: 'threads:50', load_label: '50 threads' }),
  trail(2, { load_key: 'threads:10' }),
  trail(3, { load_key: 'threads:20', load_label: '20 threads' }),
  trail(4, { variant: 'baseline' }),
  trail(5, { scenario: 'owner', load_key: 'threads:10' }),
  trail(6, { env_fingerprint: 'e2', environment: 'c7', variant: 'sdk' }),
];

function point(run: string, version: string, value: number, created: string): HistoryPoint {
  return { run, agent_version: version, commit: `${run}cafe0123456789`, created_at: created, is_valid: true, value };
}

describe('loads and choices', () => {
  it('orders load keys numerically within a kind, kinds in a fixed order', () => {
    const keys = ['threads:50', 'concurrency:100', 'threads:10', 'none', 'threads:20'];
    expect([...keys].sort(compareLoadKeys)).toEqual(['threads:10', 'threads:20', 'threads:50', 'concurrency:100', 'none']);
  });

  it('offers the choices within the chosen environment and scenario', () => {
    const c = trailChoices(TRAILS, { env: 'e1', scenario: '*' });
    expect(c.environments.map((e) => e.name)).toEqual(['m5', 'c7']);
    expect(c.variants).toEqual(['agent', 'baseline']);
    expect(c.loads.map((l) => l.key)).toEqual(['threads:10', 'threads:20', 'threads:50']);
    expect(trailChoices(TRAILS, { env: 'e1' }).scenarios).toEqual(['*', 'owner']);
  });

  it('fills an open selection with defaults, or with a pinned trail', () => {
    expect(resolveSelection(TRAILS, { env: '', scenario: '', variant: '', mode: '', loads: [] })).toEqual({
      env: 'e1', scenario: '*', variant: 'agent', mode: '', loads: [],
    });
    expect(resolveSelection(TRAILS, { env: '', scenario: '', variant: '', mode: '', loads: [] }, 6)).toMatchObject({ env: 'e2', variant: 'sdk' });
    // A variant that does not exist in the scenario falls back instead of showing nothing.
    expect(resolveSelection(TRAILS, { env: 'e1', scenario: 'owner', variant: 'baseline', mode: '', loads: ['threads:50'] })).toEqual({
      env: 'e1', scenario: 'owner', variant: 'agent', mode: '', loads: [],
    });
  });

  it('selects one trail per load level, in load order', () => {
    const sel = { env: 'e1', scenario: '*', variant: 'agent', mode: '', loads: [] };
    expect(selectTrails(TRAILS, sel).map((t) => t.id)).toEqual([2, 3, 1]);
    expect(selectTrails(TRAILS, { ...sel, loads: ['threads:50', 'threads:10'] }).map((t) => t.id)).toEqual([2, 1]);
  });

  it('overview prefers the all-scenarios aggregate and caps the count', () => {
    expect(overviewTrails(TRAILS).map((t) => t.id)).toEqual([2, 3, 1, 4]);
    expect(overviewTrails(TRAILS, 2)).toHaveLength(2);
  });
});

describe('axes and markers', () => {
  const pts = [
    point('r1', '2.7.x', 0.416, '2026-01-03T00:00:00Z'),
    point('r2', '2.9.x', 0.411, '2026-01-01T00:00:00Z'),
    point('r3', '2.18.x', 0.409, '2026-01-02T00:00:00Z'),
  ];

  it('keeps the API order on the version axis and sorts by time on the time axis', () => {
    expect(orderPoints(pts, 'version').map((p) => p.run)).toEqual(['r1', 'r2', 'r3']);
    expect(orderPoints(pts, 'time').map((p) => p.run)).toEqual(['r2', 'r3', 'r1']);
    expect(placePoints(pts, 'version')).toEqual({ x: [0, 1, 2], ticks: { values: [0, 1, 2], labels: ['2.7.x', '2.9.x', '2.18.x'] }, xType: 'linear' });
    expect(placePoints(pts, 'commit').ticks?.labels).toEqual(['r1cafe0123', 'r2cafe0123', 'r3cafe0123']);
    expect(placePoints(pts, 'time').x).toEqual(pts.map((p) => p.created_at));
  });

  it('places annotations by version, or between runs by time', () => {
    const ann = (title: string, version: string | null, at: string | null): AnnotationOut => ({
      id: 1, kind: 'release', title, agent_version: version, at, known_change: false, created_at: '2026-01-01T00:00:00Z',
    });
    const byTime = orderPoints(pts, 'time');
    const markers = annotationMarkers(
      [ann('JDK 21', '2.9.x', null), ann('new host', null, '2026-01-01T12:00:00Z'), ann('elsewhere', '9.9', null)],
      byTime,
      'version',
    );
    expect(markers).toEqual([
      { x: 0, title: 'JDK 21', kind: 'annotation' },
      { x: 0.5, title: 'new host', kind: 'annotation' },
    ]);
    expect(annotationMarkers([ann('new host', null, '2026-01-01T12:00:00Z')], byTime, 'time')[0].x).toBe('2026-01-01T12:00:00Z');
  });
});

describe('historyTable', () => {
  it('has the plotted numbers, the change point and the alert per run, each row linking its run', () => {
    const series: HistorySeries = {
      kind: 'overhead', metric: 'latency_p75', unit: '%', direction: 'lower', referenceVariant: 'baseline',
      points: [
        { ...point('a', '1.0', 4.5, '2026-01-01T00:00:00Z'), abs_diff: 1.2, ci_low: 0.8, ci_high: 1.6, verdict: 'worse' },
        { ...point('b', '1.1', 55.9, '2026-01-02T00:00:00Z'), abs_diff: 30.1, ci_low: 28, ci_high: 32, verdict: 'worse' },
      ],
      changePoints: [{ run: 'b', agent_version: '1.1', index: 1, p_value: 0.00012, magnitude_abs: 51.4, magnitude_rel: null, direction: 'regression', before_mean: 4.5, after_mean: 55.9, effect_sigma: 9, known: false }],
      alerts: [{ id: 7, state: 'new', kind: 'overhead', direction: 'regression', metric: 'latency_p75', run: 'b', summary: '', permalink: '' }],
    };
    const t = historyTable('t', series, 'version');
    expect(t.columns.map((c) => c.key)).toEqual(['x', 'run', 'value', 'abs', 'lo', 'hi', 'verdict', 'change', 'alerts']);
    expect(t.rows[1]).toEqual({
      id: 'b',
      href: '/r/b',
      values: { x: '1.1', run: 'b', value: 55.9, abs: 30.1, lo: 28, hi: 32, verdict: 'worse', change: 'regression, p = 0.00012', alerts: '#7 regression (new)' },
    });
    expect(t.rows[0].values.change).toBe('');
  });
});

describe('JMH score overheads', () => {
  it('are toned by the direction of their mode: more time per operation is worse, more operations better', () => {
    const overhead = (mode: string, unit: string, direction: 'lower' | 'higher'): OverheadTrail => ({
      trail: trail(9, { mode }), reference_variant: 'normal', metric: 'score', unit, direction,
      points: [{ run: 'a', agent_version: '2.7.x', commit: null, created_at: '2026-01-01T00:00:00Z', is_valid: true,
                 value_pct: 3.1, abs_diff: 0.4, rel_diff: 0.031, ci_low: 0.1, ci_high: 0.7, verdict: 'worse' }],
      change_points: [], alerts: [], downsampled: false, total_points: 1, window_start: 0,
    });
    for (const [mode, unit, direction] of [['sample', 'us/op', 'lower'], ['thrpt', 'ops/us', 'higher']] as const) {
      const t = historyTable('t', fromOverhead(overhead(mode, unit, direction)), 'version');
      expect(t.columns.filter((c) => c.key === 'value' || c.key === 'abs').map((c) => c.direction)).toEqual([direction, direction]);
    }
  });
});

describe('long histories', () => {
  it('labels at most twelve evenly spread ticks', () => {
    const labels = Array.from({ length: 5000 }, (_, i) => `1.${i}.0`);
    const t = thinTicks(labels);
    expect(t.values.length).toBeLessThanOrEqual(12);
    expect(t.values[0]).toBe(0);
    expect(t.values[1]).toBe(Math.ceil(5000 / 12));
    expect(t.labels[1]).toBe(`1.${Math.ceil(5000 / 12)}.0`);
  });

  it('puts an overhead interval in percent of the reference, like its value', () => {
    // reference 80 ms, variant 100 ms: abs 20, rel 0.25; interval [15, 26] ms → [18.75, 32.5] %.
    expect(intervalPct({ abs_diff: 20, rel_diff: 0.25, ci_low: 15, ci_high: 26 })).toEqual({ ci_low_pct: 18.75, ci_high_pct: 32.5 });
    // A faster variant: reference 80, abs −8, rel −0.1; interval [−10, −6] → [−12.5, −7.5] %.
    const neg = intervalPct({ abs_diff: -8, rel_diff: -0.1, ci_low: -10, ci_high: -6 });
    expect(neg.ci_low_pct).toBeCloseTo(-12.5, 12);
    expect(neg.ci_high_pct).toBeCloseTo(-7.5, 12);
    expect(intervalPct({ abs_diff: 0, rel_diff: 0, ci_low: -1, ci_high: 1 })).toEqual({ ci_low_pct: null, ci_high_pct: null });
  });

  it('names trails shown together by what differs between them', () => {
    const t = (variant: string, load: string): TrailOut =>
      ({ id: 1, env_fingerprint: 'e', environment: 'm5', scenario: '*', load_key: `threads:${load}`, load_label: `${load} threads`, variant, mode: '', points: 2 }) as TrailOut;
    expect(distinguishingNames([t('agent', '10'), t('agent', '20')])).toEqual(['10 threads', '20 threads']);
    expect(distinguishingNames([t('agent', '10'), t('otel', '10')])).toEqual(['agent', 'otel']);
    expect(distinguishingNames([t('agent', '10')])).toEqual(['agent']);
  });
});
