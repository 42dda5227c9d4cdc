/**
 * Pure shaping of trails (one comparable cell across runs) and overhead trails (variant − reference
 * within each run) into selectors, chart positions, markers and the table beside each chart.
 */
import type {
  AlertBrief,
  AnnotationOut,
  ChangePointOut,
  OverheadPoint,
  OverheadTrail,
  TrailDetail,
  TrailOut,
  TrailPoint,
} from '@/api/client';
import { formatDateTime } from '@/lib/format';
import { metricInfo, type Direction } from '@/lib/metrics';
import type { Column, Row, TableModel } from '@/lib/table';

export type HistoryAxis = 'version' | 'commit' | 'time';
export type HistoryKind = 'trail' | 'overhead';
export const HISTORY_AXES: readonly HistoryAxis[] = ['version', 'commit', 'time'];
export const HISTORY_KINDS: readonly HistoryKind[] = ['trail', 'overhead'];

export interface TrailSelection {
  env: string;
  scenario: string;
  variant: string;
  mode: string;
  /** Load keys to show; empty = all. */
  loads: string[];
}

export interface TrailChoices {
  environments: { fingerprint: string; name: string }[];
  scenarios: string[];
  variants: string[];
  modes: string[];
  loads: { key: string; label: string }[];
}

const LOAD_KIND_ORDER = ['threads', 'concurrency', 'rate', 'requests', 'duration', 'none'];

/** Load keys look like "threads:10" or "concurrency:50;requests:90000"; order by kind, then value. */
export function compareLoadKeys(a: string, b: string): number {
  const parse = (key: string): [number, number] => {
    const [kind, value] = key.split(';')[0].split(':');
    const k = LOAD_KIND_ORDER.indexOf(kind);
    return [k < 0 ? LOAD_KIND_ORDER.length : k, Number(value ?? 0) || 0];
  };
  const [ka, va] = parse(a);
  const [kb, vb] = parse(b);
  return ka - kb || va - vb || a.localeCompare(b);
}

function distinct<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

/** Scenarios sorted with the all-scenarios aggregate ('*') first: it is the usual headline. */
export function trailChoices(trails: readonly TrailOut[], within?: Partial<TrailSelection>): TrailChoices {
  const inEnv = within?.env ? trails.filter((t) => t.env_fingerprint === within.env) : trails;
  const inScenario = within?.scenario ? inEnv.filter((t) => t.scenario === within.scenario) : inEnv;
  const environments = distinct(trails.map((t) => t.env_fingerprint)).map((fingerprint) => ({
    fingerprint,
    name: trails.find((t) => t.env_fingerprint === fingerprint)?.environment ?? fingerprint.slice(0, 12),
  }));
  const scenarios = distinct(inEnv.map((t) => t.scenario)).sort((a, b) =>
    a === '*' ? -1 : b === '*' ? 1 : a.localeCompare(b),
  );
  const loadKeys = distinct(inScenario.map((t) => t.load_key)).sort(compareLoadKeys);
  return {
    environments,
    scenarios,
    variants: distinct(inScenario.map((t) => t.variant)).sort(),
    modes: distinct(inScenario.map((t) => t.mode)).sort(),
    loads: loadKeys.map((key) => ({ key, label: inScenario.find((t) => t.load_key === key)?.load_label ?? key })),
  };
}

/**
 * Fills what the URL leaves open: a pinned trail (from an alert link) fixes its environment,
 * scenario, variant and mode; otherwise the first choice of each, so the page always shows a chart.
 */
export function resolveSelection(
  trails: readonly TrailOut[],
  wanted: TrailSelection,
  pinnedTrailId?: number | null,
): TrailSelection {
  const pinned = pinnedTrailId ? trails.find((t) => t.id === pinnedTrailId) : undefined;
  const pick = (value: string, options: readonly string[]): string =>
    options.includes(value) ? value : (options[0] ?? '');
  const envs = trailChoices(trails).environments.map((e) => e.fingerprint);
  const env = pick(wanted.env || pinned?.env_fingerprint || '', envs);
  const scenario = pick(wanted.scenario || pinned?.scenario || '', trailChoices(trails, { env }).scenarios);
  const choices = trailChoices(trails, { env, scenario });
  return {
    env,
    scenario,
    variant: pick(wanted.variant || pinned?.variant || '', choices.variants),
    mode: pick(wanted.mode || pinned?.mode || '', choices.modes),
    loads: wanted.loads.filter((l) => choices.loads.some((c) => c.key === l)),
  };
}

/** The trails of a selection, one per load level, in load order: the small multiples. */
export function selectTrails(trails: readonly TrailOut[], sel: TrailSelection): TrailOut[] {
  return trails
    .filter(
      (t) =>
        t.env_fingerprint === sel.env &&
        t.scenario === sel.scenario &&
        t.variant === sel.variant &&
        t.mode === sel.mode &&
        (sel.loads.length === 0 || sel.loads.includes(t.load_key)),
    )
    .sort((a, b) => compareLoadKeys(a.load_key, b.load_key));
}

export interface HistoryPoint {
  run: string;
  agent_version: string | null;
  commit: string | null;
  created_at: string;
  is_valid: boolean;
  /** The plotted value: the metric for a trail, percent of the reference for an overhead trail. */
  value: number;
  /** JMH score error (± at 99.9%) of a trail point. */
  error?: number | null;
  /** Overhead points: the 95% interval of the overhead in percent of the reference. */
  ci_low_pct?: number | null;
  ci_high_pct?: number | null;
  abs_diff?: number;
  ci_low?: number | null;
  ci_high?: number | null;
  verdict?: string;
}

export interface HistorySeries {
  kind: HistoryKind;
  metric: string;
  unit: string;
  direction: Direction;
  points: HistoryPoint[];
  changePoints: ChangePointOut[];
  alerts: AlertBrief[];
  referenceVariant: string | null;
}

export function fromTrail(d: TrailDetail): HistorySeries {
  return {
    kind: 'trail',
    metric: d.metric,
    unit: d.unit,
    direction: d.direction,
    points: d.points.map((p: TrailPoint) => ({ ...p, commit: p.commit ?? null, agent_version: p.agent_version ?? null })),
    changePoints: d.change_points,
    alerts: d.alerts,
    referenceVariant: null,
  };
}

/**
 * An overhead point's interval (absolute, in the metric's unit) in percent of the reference, like
 * its value: value_pct = 100 · abs_diff / |reference|, so the reference is abs_diff / rel_diff.
 */
export function intervalPct(p: Pick<OverheadPoint, 'abs_diff' | 'rel_diff' | 'ci_low' | 'ci_high'>): {
  ci_low_pct: number | null;
  ci_high_pct: number | null;
} {
  const rel = p.rel_diff ?? null;
  if (rel === null || rel === 0 || p.abs_diff === 0 || p.ci_low == null || p.ci_high == null) {
    return { ci_low_pct: null, ci_high_pct: null };
  }
  const reference = Math.abs(p.abs_diff / rel);
  return { ci_low_pct: (100 * p.ci_low) / reference, ci_high_pct: (100 * p.ci_high) / reference };
}

/** At most `max` evenly spread tick labels: thousands of labels are what made Plotly freeze. */
export function thinTicks(labels: readonly string[], max = 12): { values: number[]; labels: string[] } {
  const step = Math.max(1, Math.ceil(labels.length / max));
  const values: number[] = [];
  for (let i = 0; i < labels.length; i += step) values.push(i);
  return { values, labels: values.map((i) => labels[i]) };
}

export function fromOverhead(d: OverheadTrail): HistorySeries {
  return {
    kind: 'overhead',
    metric: d.metric,
    unit: '%',
    // Overhead is variant − reference: more of a lower-is-better metric is worse, and vice versa (a JMH
    // score's direction follows its mode's unit: the API says which).
    direction: d.direction,
    points: d.points.map((p: OverheadPoint) => ({
      run: p.run,
      agent_version: p.agent_version ?? null,
      commit: p.commit ?? null,
      created_at: p.created_at,
      is_valid: p.is_valid,
      value: p.value_pct,
      ...intervalPct(p),
      abs_diff: p.abs_diff,
      ci_low: p.ci_low,
      ci_high: p.ci_high,
      verdict: p.verdict,
    })),
    changePoints: d.change_points,
    alerts: d.alerts,
    referenceVariant: d.reference_variant ?? null,
  };
}

/** The label of a point on the chosen axis; falls back to the run when the run lacks that field. */
export function pointLabel(p: HistoryPoint, axis: HistoryAxis): string {
  if (axis === 'commit') return p.commit ? p.commit.slice(0, 10) : `run ${p.run}`;
  if (axis === 'time') return formatDateTime(p.created_at);
  return p.agent_version ?? `run ${p.run}`;
}

/** Points in axis order: as the API returns them (semantic version order) unless the axis is time. */
export function orderPoints(points: readonly HistoryPoint[], axis: HistoryAxis): HistoryPoint[] {
  if (axis !== 'time') return [...points];
  return [...points].sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));
}

export interface Placement {
  x: (number | string)[];
  ticks?: { values: number[]; labels: string[] };
  xType: 'linear' | 'date';
}

/**
 * Versions and commits are evenly spaced positions with their names as tick labels (two runs of
 * one version keep two positions); time is a real date axis.
 */
export function placePoints(points: readonly HistoryPoint[], axis: HistoryAxis): Placement {
  if (axis === 'time') return { x: points.map((p) => p.created_at), xType: 'date' };
  return {
    x: points.map((_, i) => i),
    ticks: thinTicks(points.map((p) => pointLabel(p, axis))),
    xType: 'linear',
  };
}

export interface Marker {
  x: number | string;
  title: string;
  kind: 'annotation' | 'change';
}

function positionOfRun(points: readonly HistoryPoint[], run: string, axis: HistoryAxis): number | string | null {
  const i = points.findIndex((p) => p.run === run);
  if (i < 0) return null;
  return axis === 'time' ? points[i].created_at : i;
}

/**
 * Annotations become vertical lines: on a version/commit axis at the first point of the annotated
 * agent version, or halfway before the first run made after the annotation's time; on the time
 * axis at its time (or at the annotated version's first run). Annotations outside the trail are dropped.
 */
export function annotationMarkers(
  annotations: readonly AnnotationOut[],
  points: readonly HistoryPoint[],
  axis: HistoryAxis,
): Marker[] {
  const out: Marker[] = [];
  for (const a of annotations) {
    let x: number | string | null = null;
    const byVersion = a.agent_version ? points.findIndex((p) => p.agent_version === a.agent_version) : -1;
    if (axis === 'time') {
      if (a.at) x = a.at;
      else if (byVersion >= 0) x = points[byVersion].created_at;
    } else if (byVersion >= 0) {
      x = byVersion;
    } else if (a.at) {
      const at = Date.parse(a.at);
      const after = points.findIndex((p) => Date.parse(p.created_at) >= at);
      if (after > 0) x = after - 0.5;
    }
    if (x !== null) out.push({ x, title: a.title, kind: 'annotation' });
  }
  return out;
}

export function changePointMarkers(series: HistorySeries, points: readonly HistoryPoint[], axis: HistoryAxis): Marker[] {
  const out: Marker[] = [];
  for (const cp of series.changePoints) {
    const x = positionOfRun(points, cp.run, axis);
    if (x === null) continue;
    const rel = cp.magnitude_rel !== null && cp.magnitude_rel !== undefined ? ` ${(cp.magnitude_rel * 100).toFixed(1)}%` : '';
    out.push({ x, title: `${cp.known ? 'known change' : cp.direction}${rel}`, kind: 'change' });
  }
  return out;
}

/** Per run: the change point and the alerts that start there, as short text for the table. */
function changeText(series: HistorySeries, run: string): string {
  const cp = series.changePoints.find((c) => c.run === run);
  return cp ? `${cp.known ? 'known change' : cp.direction}${cp.p_value !== null && cp.p_value !== undefined ? `, p = ${cp.p_value.toPrecision(2)}` : ''}` : '';
}

function alertText(series: HistorySeries, run: string): string {
  return series.alerts
    .filter((a) => a.run === run)
    .map((a) => `#${a.id} ${a.direction} (${a.state})`)
    .join('; ');
}

export function historyTable(title: string, series: HistorySeries, axis: HistoryAxis): TableModel {
  const points = orderPoints(series.points, axis);
  const info = metricInfo(series.metric);
  const overhead = series.kind === 'overhead';
  const columns: Column[] = [
    { key: 'x', label: axis === 'version' ? 'Agent version' : axis === 'commit' ? 'Commit' : 'Time', role: 'label' },
    { key: 'run', label: 'Run', role: 'label' },
    {
      key: 'value',
      label: overhead ? `${info.title} overhead` : info.title,
      role: overhead ? 'percent' : 'value',
      unit: overhead ? '%' : series.unit,
      direction: series.direction,
    },
  ];
  if (!overhead && points.some((p) => p.error != null)) {
    columns.push({ key: 'error', label: '± error', role: 'value', unit: series.unit });
  }
  if (overhead) {
    columns.push(
      { key: 'abs', label: 'Difference', role: 'diff', unit: info.unit === 'samples' ? '' : info.unit, direction: series.direction },
      { key: 'lo', label: 'CI low', role: 'diff', unit: info.unit === 'samples' ? '' : info.unit },
      { key: 'hi', label: 'CI high', role: 'diff', unit: info.unit === 'samples' ? '' : info.unit },
      { key: 'verdict', label: 'Verdict', role: 'value' },
    );
  }
  // Text columns after the numbers are values, not row headers: only the leading labels head a row.
  columns.push({ key: 'change', label: 'Change point', role: 'value' }, { key: 'alerts', label: 'Alerts', role: 'value' });
  const rows: Row[] = points.map((p) => {
    const values: Row['values'] = {
      x: pointLabel(p, axis),
      run: p.is_valid ? p.run : `${p.run} (invalid)`,
      value: p.value,
      change: changeText(series, p.run),
      alerts: alertText(series, p.run),
    };
    if (!overhead && columns.some((c) => c.key === 'error')) values.error = p.error ?? null;
    if (overhead) {
      values.abs = p.abs_diff ?? null;
      values.lo = p.ci_low ?? null;
      values.hi = p.ci_high ?? null;
      values.verdict = p.verdict ?? '';
    }
    return { id: p.run, values, href: `/r/${encodeURIComponent(p.run)}` };
  });
  return { title, columns, rows };
}

export function trailTitle(t: TrailOut, series: Pick<HistorySeries, 'kind' | 'metric' | 'unit' | 'referenceVariant'>): string {
  const info = metricInfo(series.metric);
  const where = [t.variant, t.scenario === '*' ? 'all scenarios' : t.scenario, t.load_label && t.load_label !== '—' ? t.load_label : null, t.mode || null]
    .filter(Boolean)
    .join(' · ');
  if (series.kind === 'overhead') {
    return `${info.title} overhead vs ${series.referenceVariant ?? 'reference'} (%), ${where}`;
  }
  return `${info.title}${series.unit ? ` (${series.unit})` : ''}, ${where}`;
}

/**
 * The trails the project overview plots as overhead trends: per environment (the first), the
 * all-scenarios aggregate when there is one (else every scenario), every variant, every load and
 * mode; capped, since the overview is a glance and History has the rest.
 */
export function overviewTrails(trails: readonly TrailOut[], max = 8): TrailOut[] {
  const env = trails[0]?.env_fingerprint;
  const inEnv = trails.filter((t) => t.env_fingerprint === env && t.points >= 2);
  const hasAll = inEnv.some((t) => t.scenario === '*');
  return inEnv
    .filter((t) => !hasAll || t.scenario === '*')
    .sort(
      (a, b) =>
        a.scenario.localeCompare(b.scenario) ||
        a.variant.localeCompare(b.variant) ||
        compareLoadKeys(a.load_key, b.load_key) ||
        a.mode.localeCompare(b.mode),
    )
    .slice(0, max);
}

/** The metric a project's overview follows: the JMH score when trails have modes, else its first analysed metric. */
export function overviewMetric(trails: readonly TrailOut[], analysed: readonly string[]): string {
  if (trails.some((t) => t.mode)) return 'score';
  return analysed.find((m) => m !== 'score') ?? 'latency_p75';
}

/**
 * Short names for trails shown together: only the parts that differ between them (variant,
 * scenario, load, mode), so a column header is "agent · 10 threads", not the whole identity.
 */
export function distinguishingNames(trails: readonly TrailOut[]): string[] {
  const parts = (t: TrailOut): string[] => [
    t.variant,
    t.scenario === '*' ? 'all scenarios' : t.scenario,
    t.load_label && t.load_label !== '—' ? t.load_label : t.load_key,
    t.mode,
  ];
  const all = trails.map(parts);
  const varies = [0, 1, 2, 3].map((i) => new Set(all.map((p) => p[i])).size > 1);
  return all.map((p) => {
    const shown = p.filter((x, i) => varies[i] && x);
    return shown.length ? shown.join(' · ') : p[0];
  });
}
