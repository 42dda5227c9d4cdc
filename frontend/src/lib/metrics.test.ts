import { describe, expect, it } from 'vitest';

import { CATALOG, type Catalog, compareMetrics, historyMetrics, matrixMetrics, type MetricInfo, metricsAt, percentiles, scoreDirection } from './metrics';

describe('scoreDirection', () => {
  it('reads a JMH unit by its mode and a marked unit by its mark', () => {
    expect(scoreDirection('ops/ms')).toBe('higher');
    expect(scoreDirection('us/op')).toBe('lower');
    expect(scoreDirection('MB/s ↑')).toBe('higher'); // Go's b.SetBytes rate
    expect(scoreDirection('points ↓')).toBe('lower');
    expect(scoreDirection('↑')).toBe('higher'); // a customBiggerIsBetter bench without a unit
    expect(scoreDirection('MB/sec')).toBe('lower'); // JMH's gc.alloc.rate: unmarked, better lower
    expect(scoreDirection(null)).toBe('lower');
  });
});

describe('a metric added to the catalog', () => {
  // What `backend/benchtrail/metrics.py` would generate for one more entry: a percentile computed from histograms.
  const p85: MetricInfo = {
    name: 'latency_p85', unit: 'ms', direction: 'lower', title: 'P85 latency', stored: false, percentile: 85,
    trail: true, compare: true, criterion: true, table: 8, chart: 7, default: 0, resource: false, pick: true,
    family: 'load',
  };
  const extended: Catalog = [...CATALOG, p85];

  it('is offered by every picker and placed in tables and charts, from the catalog alone', () => {
    expect(historyMetrics('load', extended)).toContain('latency_p85');
    expect(historyMetrics('score', extended)).not.toContain('latency_p85');
    expect(compareMetrics(extended)).toContain('latency_p85');
    expect(matrixMetrics(extended)).toContain('latency_p85');
    expect(metricsAt('table', extended).at(-1)).toBe('latency_p85');
    expect(metricsAt('chart', extended).at(-1)).toBe('latency_p85');
    expect(percentiles(extended).map((p) => p.key)).toContain('p85');
    // ...and nowhere it is not asked for.
    expect(metricsAt('default', extended)).toEqual(metricsAt('default'));
    expect(historyMetrics('load')).not.toContain('latency_p85');
  });

  it('keeps the generated catalog\'s lists as the backend states them', () => {
    expect(metricsAt('default')).toEqual(['latency_p75', 'latency_p99', 'throughput', 'score', 'cpu_pct']);
    expect(historyMetrics('score')).toEqual(['score', 'score_error']);
    expect(compareMetrics()).not.toContain('count');
    expect(historyMetrics('load')).not.toContain('error_rate');   // derived, compared, never a trail
  });
});
