/**
 * Pure shaping of series and percentile spectra into chart traces plus the table of the same
 * numbers that sits beside every chart.
 */
import type { CellPercentiles, RunDetail, SeriesOut } from '@/api/client';
import { scenarioLabel } from '@/lib/cells';
import { metricInfo } from '@/lib/metrics';
import type { Column, Row, TableModel } from '@/lib/table';

export interface Trace {
  name: string;
  /** The variant the trace belongs to, for its colour. */
  variant?: string;
  x: number[];
  y: number[];
  /** Seconds between the points of one stretch of a time series: a longer step is a gap. */
  step?: number;
}

/**
 * The points of a time series for a line chart, with a break (a null) where the next point comes more
 * than one step later: the repetitions of a load level are not joined across the other variant's turn.
 */
export function breakAtGaps(trace: Trace): { x: number[]; y: (number | null)[] } {
  const { x, y, step } = trace;
  if (!step) return { x, y };
  const gx: number[] = [];
  const gy: (number | null)[] = [];
  x.forEach((xi, i) => {
    if (i > 0 && xi - x[i - 1] > step * 1.5) {
      gx.push((xi + x[i - 1]) / 2);
      gy.push(null);
    }
    gx.push(xi);
    gy.push(y[i]);
  });
  return { x: gx, y: gy };
}

export interface ChartModel {
  traces: Trace[];
  table: TableModel;
}

/** Rows keyed by x; one column per trace. Traces sampled at different x get empty cells, not invented values. */
export function tracesToTable(title: string, xLabel: string, xUnit: string, traces: readonly Trace[]): TableModel {
  const xs = [...new Set(traces.flatMap((t) => t.x))].sort((a, b) => a - b);
  const columns: Column[] = [
    { key: 'x', label: xLabel, role: 'value', unit: xUnit },
    ...traces.map((t, i): Column => ({ key: `t${i}`, label: t.name, role: 'value' })),
  ];
  const lookups = traces.map((t) => new Map(t.x.map((x, i) => [x, t.y[i]])));
  const rows: Row[] = xs.map((x) => {
    const values: Row['values'] = { x };
    lookups.forEach((m, i) => {
      values[`t${i}`] = m.get(x) ?? null;
    });
    return { id: String(x), values };
  });
  return { title, columns, rows };
}

export function seriesTraceName(run: RunDetail, s: SeriesOut): string {
  const name = run.variants.find((v) => v.id === s.variant_id)?.name ?? `variant ${s.variant_id}`;
  // A named process's series (plan `processes`): "agent · consumer".
  const variant = s.process ? `${name} · ${s.process}` : name;
  if (s.scenario_id === null || s.scenario_id === undefined) return variant;
  const scenario = run.scenarios.find((x) => x.id === s.scenario_id);
  return scenario ? `${variant} · ${scenarioLabel(scenario)}` : variant;
}

/**
 * One chart per load level with every variant on it; time is seconds since the first point of the
 * load level across variants, so simultaneous variants line up.
 */
export function seriesOverlay(
  run: RunDetail,
  series: readonly SeriesOut[],
  loadId: number,
  metric: string,
  scenarioIds: readonly (number | null)[] | null,
): ChartModel {
  const chosen = series.filter(
    (s) =>
      s.load_id === loadId &&
      s.metric === metric &&
      (scenarioIds === null || scenarioIds.includes(s.scenario_id ?? null)),
  );
  const t0 = Math.min(...chosen.flatMap((s) => (s.t_ms.length ? [s.t_ms[0]] : [])));
  const traces: Trace[] = chosen.map((s) => ({
    name: seriesTraceName(run, s),
    variant: run.variants.find((v) => v.id === s.variant_id)?.name,
    x: s.t_ms.map((t) => (t - t0) / 1000),
    y: s.values,
    step: s.interval_ms ? s.interval_ms / 1000 : undefined,
  }));
  const info = metricInfo(metric);
  const load = run.loads.find((l) => l.id === loadId);
  const title = `${info.title}${info.unit ? ` (${info.unit})` : ''} over time, ${load?.label ?? ''}`;
  return { traces, table: tracesToTable(title, 'Time', 's', traces) };
}

/** The x position of a percentile on an HdrHistogram-style axis: 1/(1-p), so the tail gets the room. */
export function tailX(percentile: number): number {
  return 100 / (100 - percentile);
}

export function percentileSpectrum(
  run: RunDetail,
  items: readonly CellPercentiles[],
  loadId: number,
  scenarioNames: readonly string[],
): ChartModel {
  const cells = new Map(run.cells.map((c) => [c.id, c]));
  const traces: Trace[] = [];
  for (const item of items) {
    const cell = cells.get(item.cell_id);
    if (!cell || cell.load_id !== loadId) continue;
    const scenario = run.scenarios.find((s) => s.id === cell.scenario_id);
    if (!scenario || !scenarioNames.includes(scenario.name)) continue;
    const variant = run.variants.find((v) => v.id === cell.variant_id)?.name ?? String(cell.variant_id);
    const points = item.points.filter((p) => p.percentile < 100);
    traces.push({
      name: scenarioNames.length > 1 ? `${variant} · ${scenarioLabel(scenario)}` : variant,
      variant,
      x: points.map((p) => p.percentile),
      y: points.map((p) => p.value_ms),
    });
  }
  const load = run.loads.find((l) => l.id === loadId);
  return {
    traces,
    table: tracesToTable(`Latency by percentile (ms), ${load?.label ?? ''}`, 'Percentile', '%', traces),
  };
}
