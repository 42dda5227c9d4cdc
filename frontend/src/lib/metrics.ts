/** The backend's metric catalog (backend/benchtrail/metrics.py): units and direction belong to the metric. */
import catalog from '@/api/metrics.json';

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

// Generated from backend/benchtrail/metrics.py by `npm run gen:api`; a backend test keeps it current.
const CATALOG = catalog as MetricInfo[];

const BY_NAME = new Map(CATALOG.map((m) => [m.name, m]));

export function metricInfo(name: string): MetricInfo {
  return BY_NAME.get(name) ?? { name, unit: '', direction: 'lower', title: name };
}

/** JMH: ops/time is better higher, time/op better lower (as metrics.score_direction). */
export function scoreDirection(unit: string | null | undefined): Direction {
  // A unit marked by its file (backend benchtrail.metrics.score_direction): "MB/s ↑", "points ↓".
  if (unit && unit.endsWith('↑')) return 'higher';
  if (unit && unit.endsWith('↓')) return 'lower';
  return unit && unit.startsWith('ops/') ? 'higher' : 'lower';
}
