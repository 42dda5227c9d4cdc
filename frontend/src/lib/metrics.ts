/** Mirror of backend/benchtrail/metrics.py: units and direction belong to the metric. */
export type Direction = 'lower' | 'higher';

export interface MetricInfo {
  name: string;
  unit: string;
  direction: Direction;
  title: string;
}

export const PERCENTILES = [
  { key: 'p50', value: 50 },
  { key: 'p75', value: 75 },
  { key: 'p90', value: 90 },
  { key: 'p95', value: 95 },
  { key: 'p99', value: 99 },
  { key: 'p999', value: 99.9 },
] as const;

export type PercentileKey = (typeof PERCENTILES)[number]['key'];
export const PERCENTILE_KEYS: readonly PercentileKey[] = PERCENTILES.map((p) => p.key);

export function percentileLabel(key: PercentileKey): string {
  return key === 'p999' ? 'P99.9' : key.toUpperCase();
}

const CATALOG: MetricInfo[] = [
  { name: 'count', unit: 'samples', direction: 'higher', title: 'Samples' },
  { name: 'errors', unit: 'samples', direction: 'lower', title: 'Errors' },
  { name: 'error_rate', unit: '%', direction: 'lower', title: 'Error rate' },
  { name: 'throughput', unit: 'req/s', direction: 'higher', title: 'Throughput' },
  { name: 'duration_s', unit: 's', direction: 'lower', title: 'Duration' },
  { name: 'latency_mean', unit: 'ms', direction: 'lower', title: 'Mean latency' },
  { name: 'latency_min', unit: 'ms', direction: 'lower', title: 'Min latency' },
  { name: 'latency_max', unit: 'ms', direction: 'lower', title: 'Max latency' },
  ...PERCENTILES.map((p): MetricInfo => ({
    name: `latency_${p.key}`, unit: 'ms', direction: 'lower', title: `${percentileLabel(p.key)} latency`,
  })),
  { name: 'cpu_pct', unit: '%', direction: 'lower', title: 'CPU' },
  { name: 'cpu_s_per_1k', unit: 'CPU-s/1k req', direction: 'lower', title: 'CPU seconds per 1,000 requests' },
  { name: 'rss_mb', unit: 'MB', direction: 'lower', title: 'RSS' },
  { name: 'heap_mb', unit: 'MB', direction: 'lower', title: 'Heap' },
  { name: 'achieved_rate', unit: 'req/s', direction: 'higher', title: 'Achieved rate' },
  { name: 'score', unit: '', direction: 'higher', title: 'Score' },
  { name: 'score_error', unit: '', direction: 'lower', title: 'Score error' },
];

const BY_NAME = new Map(CATALOG.map((m) => [m.name, m]));

export function metricInfo(name: string): MetricInfo {
  return BY_NAME.get(name) ?? { name, unit: '', direction: 'lower', title: name };
}

/** JMH: ops/time is better higher, time/op better lower (as metrics.score_direction). */
export function scoreDirection(unit: string | null | undefined): Direction {
  return unit && unit.startsWith('ops/') ? 'higher' : 'lower';
}
