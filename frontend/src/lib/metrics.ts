/** The backend's metric catalog (backend/benchtrail/metrics.py): units and direction belong to the metric. */
import catalog from '@/api/metrics.json';

export type Direction = 'lower' | 'higher';

export interface MetricInfo {
  name: string;
  unit: string;
  direction: Direction;
  title: string;
  /** A column of its own in cells; otherwise computed from the cell's histogram (the run document carries it). */
  stored: boolean;
  /** A latency percentile (of the HDR histogram). */
  percentile: number | null;
  /** Followed by trails (History, alerts). */
  trail: boolean;
  /** Answered by A/B comparisons (overheads, Compare). */
  compare: boolean;
  criterion: boolean;
  /** Positions (0 = not there): a run table's column, a snapshot's chart, the metrics analysed by default. */
  table: number;
  chart: number;
  default: number;
  resource: boolean;
  /** Offered in the metric pickers (History, Compare, the variant matrix). */
  pick: boolean;
  family: 'load' | 'score';
}

/** The catalog, or another one (tests add a metric to it): every list of metrics the dashboard shows is read here. */
export type Catalog = readonly MetricInfo[];

// Generated from backend/benchtrail/metrics.py by `npm run gen:api`; a backend test keeps it current.
export const CATALOG: Catalog = catalog as MetricInfo[];

type Place = 'table' | 'chart' | 'default';

/** The metrics at a place (`table`, `chart`, `default`), in their order there. */
export function metricsAt(place: Place, from: Catalog = CATALOG): string[] {
  return from.filter((m) => m[place] > 0).sort((a, b) => a[place] - b[place]).map((m) => m.name);
}

/** History's picker: the metrics a trail follows, of a load test or of a micro-benchmark's score. */
export function historyMetrics(family: MetricInfo['family'], from: Catalog = CATALOG): string[] {
  return from.filter((m) => m.trail && m.family === family && (m.pick || family === 'score')).map((m) => m.name);
}

/** Compare's picker: every metric an A/B comparison answers that pickers offer. */
export function compareMetrics(from: Catalog = CATALOG): string[] {
  return from.filter((m) => m.pick && m.compare).map((m) => m.name);
}

/** The variant matrix's picker: a load test's metrics that compare. */
export function matrixMetrics(from: Catalog = CATALOG): string[] {
  return from.filter((m) => m.pick && m.compare && m.family === 'load').map((m) => m.name);
}

/** The latency percentiles, with the key of their column (`p75` for `latency_p75`). */
export function percentiles(from: Catalog = CATALOG): { key: string; value: number }[] {
  return from.filter((m) => m.percentile !== null).map((m) => ({ key: m.name.replace(/^latency_/, ''), value: m.percentile as number }));
}

export const PERCENTILES = percentiles();
export type PercentileKey = string;
export const PERCENTILE_KEYS: readonly PercentileKey[] = PERCENTILES.map((p) => p.key);

export function percentileLabel(key: PercentileKey): string {
  return key === 'p999' ? 'P99.9' : key.toUpperCase();
}

const BY_NAME = new Map(CATALOG.map((m) => [m.name, m]));
const UNKNOWN: MetricInfo = {
  name: '', unit: '', direction: 'lower', title: '', stored: false, percentile: null, trail: false, compare: false,
  criterion: false, table: 0, chart: 0, default: 0, resource: false, pick: false, family: 'load',
};

export function metricInfo(name: string): MetricInfo {
  return BY_NAME.get(name) ?? { ...UNKNOWN, name, title: name };
}

/** JMH: ops/time is better higher, time/op better lower (as metrics.score_direction). */
export function scoreDirection(unit: string | null | undefined): Direction {
  // A unit marked by its file (backend benchtrail.metrics.score_direction): "MB/s ↑", "points ↓".
  if (unit && unit.endsWith('↑')) return 'higher';
  if (unit && unit.endsWith('↓')) return 'lower';
  return unit && unit.startsWith('ops/') ? 'higher' : 'lower';
}
