/**
 * Pure shaping of a run's cells into the tables the run page shows: the baseline-vs-variant
 * breakdown per load level (EaseAgent shape), the N-variant × scenario × load matrix with ratios
 * (Easegress shape) and JMH mode tables with differences in the score's unit (X-Ray shape).
 */
import type { CellOut, LoadOut, RunDetail, ScenarioOut, VariantOut } from '@/api/client';
import { metricInfo, percentileLabel, scoreDirection, type PercentileKey } from './metrics';
import type { Column, Row, TableModel } from './table';

/** The scenario the ingester names for "all scenarios of a load level" (JMeter's TOTAL row). */
export const ALL_SCENARIOS = '*';

export interface Comparison {
  reference: number | null;
  variant: number | null;
  diff: number | null;
  ratio: number | null;
  pct: number | null;
}

export function compare(reference: number | null | undefined, variant: number | null | undefined): Comparison {
  const r = reference ?? null;
  const v = variant ?? null;
  if (r === null || v === null) return { reference: r, variant: v, diff: null, ratio: null, pct: null };
  const diff = v - r;
  const ratio = r === 0 ? null : v / r;
  return { reference: r, variant: v, diff, ratio, pct: ratio === null ? null : (ratio - 1) * 100 };
}

const LOAD_KIND_ORDER = ['threads', 'concurrency', 'rate', 'requests', 'duration', 'none'];

export function sortLoads(loads: readonly LoadOut[]): LoadOut[] {
  return [...loads].sort((a, b) => {
    const k = LOAD_KIND_ORDER.indexOf(a.kind) - LOAD_KIND_ORDER.indexOf(b.kind);
    if (k !== 0) return k;
    const v = (a.value ?? 0) - (b.value ?? 0);
    if (v !== 0) return v;
    return (a.requests ?? 0) - (b.requests ?? 0) || a.key.localeCompare(b.key);
  });
}

export function loadTitle(load: LoadOut): string {
  const kind: Record<string, string> = {
    threads: 'thread group',
    concurrency: 'concurrency',
    rate: 'target rate',
    requests: 'requests',
    duration: 'duration',
  };
  if (load.kind === 'none') return 'single load level';
  return `${kind[load.kind] ?? load.kind} ${load.label}`;
}

export function referenceVariant(run: RunDetail, preferred?: string): VariantOut | undefined {
  return (
    run.variants.find((v) => v.name === preferred) ?? run.variants.find((v) => v.is_reference) ?? run.variants[0]
  );
}

export function scenarioLabel(s: ScenarioOut): string {
  return s.name === ALL_SCENARIOS ? 'All scenarios' : s.name;
}

/** Scenarios in run order with the all-scenarios aggregate last, as a TOTAL row. */
export function orderedScenarios(run: RunDetail, selected: readonly string[] = []): ScenarioOut[] {
  const chosen = selected.length ? run.scenarios.filter((s) => selected.includes(s.name)) : run.scenarios;
  return [...chosen.filter((s) => s.name !== ALL_SCENARIOS), ...chosen.filter((s) => s.name === ALL_SCENARIOS)];
}

export function isJmhRun(run: RunDetail): boolean {
  return run.cells.some((c) => c.score !== null && c.score !== undefined);
}

export class CellIndex {
  private readonly byKey = new Map<string, CellOut>();

  constructor(cells: readonly CellOut[]) {
    for (const c of cells) {
      const key = CellIndex.key(c.variant_id, c.scenario_id, c.load_id, c.mode);
      // Several modes may share a position; the first (mode '' for load tests) wins for mode-less lookups.
      if (!this.byKey.has(key)) this.byKey.set(key, c);
      const any = CellIndex.key(c.variant_id, c.scenario_id, c.load_id, null);
      if (!this.byKey.has(any)) this.byKey.set(any, c);
    }
  }

  static key(variant: number, scenario: number, load: number, mode: string | null): string {
    return `${variant}/${scenario}/${load}/${mode ?? '*any*'}`;
  }

  get(variant: number, scenario: number, load: number, mode: string | null = null): CellOut | undefined {
    return this.byKey.get(CellIndex.key(variant, scenario, load, mode));
  }
}

type NumericCellKey = {
  [K in keyof CellOut]: CellOut[K] extends number | null | undefined ? K : never;
}[keyof CellOut];

export function cellValue(cell: CellOut | undefined, metric: string): number | null {
  if (!cell) return null;
  const v = (cell as unknown as Record<string, unknown>)[metric as NumericCellKey];
  return typeof v === 'number' ? v : null;
}

export interface BreakdownOptions {
  load: LoadOut;
  reference: VariantOut;
  variant: VariantOut;
  percentile: PercentileKey;
  scenarios?: readonly string[];
}

interface BreakdownMetric {
  metric: string;
  group: string;
}

export function breakdownMetrics(percentile: PercentileKey): BreakdownMetric[] {
  return [
    { metric: 'cpu_pct', group: 'CPU' },
    { metric: 'heap_mb', group: 'Heap' },
    { metric: 'rss_mb', group: 'RSS' },
    { metric: `latency_${percentile}`, group: `${percentileLabel(percentile)} latency` },
    { metric: 'throughput', group: 'Throughput' },
    { metric: 'errors', group: 'Errors' },
  ];
}

/**
 * One load level: a row per scenario, and per metric the reference, the variant and their
 * difference (variant − reference). Metrics that no cell of the run carries are left out.
 */
export function buildBreakdown(run: RunDetail, opts: BreakdownOptions): TableModel {
  const index = new CellIndex(run.cells);
  const scenarios = orderedScenarios(run, opts.scenarios);
  const columns: Column[] = [{ key: 'scenario', label: 'Scenario', role: 'label' }];
  const rows: Row[] = scenarios.map((s) => ({ id: s.name, values: { scenario: scenarioLabel(s) } }));
  for (const { metric, group } of breakdownMetrics(opts.percentile)) {
    const present = run.cells.some((c) => c.load_id === opts.load.id && cellValue(c, metric) !== null);
    if (!present) continue;
    const info = metricInfo(metric);
    const unit = info.unit === 'samples' ? '' : info.unit;
    const direction = info.direction;
    columns.push(
      { key: `${metric}.ref`, label: opts.reference.name, role: 'reference', unit, group },
      { key: `${metric}.var`, label: opts.variant.name, role: 'variant', unit, group },
      { key: `${metric}.diff`, label: 'diff', role: 'diff', unit, group, direction },
      { key: `${metric}.pct`, label: 'Δ%', role: 'percent', group, direction },
    );
    scenarios.forEach((s, i) => {
      const c = compare(
        cellValue(index.get(opts.reference.id, s.id, opts.load.id), metric),
        cellValue(index.get(opts.variant.id, s.id, opts.load.id), metric),
      );
      Object.assign(rows[i].values, {
        [`${metric}.ref`]: c.reference,
        [`${metric}.var`]: c.variant,
        [`${metric}.diff`]: c.diff,
        [`${metric}.pct`]: c.pct,
      });
    });
  }
  return {
    title: `${loadTitle(opts.load)}: ${opts.reference.name} / ${opts.variant.name} / diff`,
    columns,
    rows,
  };
}

export interface MatrixOptions {
  metric: string;
  reference: VariantOut;
  scenarios?: readonly string[];
  loads?: readonly string[];
}

/** Easegress shape: a row per (scenario, load), per variant its value and its ratio to the reference. */
export function buildMatrix(run: RunDetail, opts: MatrixOptions): TableModel {
  const index = new CellIndex(run.cells);
  const info = metricInfo(opts.metric);
  const unit = info.unit === 'samples' ? '' : info.unit;
  const loads = sortLoads(run.loads).filter((l) => !opts.loads?.length || opts.loads.includes(l.key));
  const variants = [opts.reference, ...run.variants.filter((v) => v.id !== opts.reference.id)];
  const columns: Column[] = [
    { key: 'scenario', label: 'Scenario', role: 'label' },
    { key: 'load', label: 'Load', role: 'label' },
  ];
  for (const v of variants) {
    columns.push({ key: `${v.id}.value`, label: v.name, role: v.id === opts.reference.id ? 'reference' : 'variant', unit });
    if (v.id !== opts.reference.id) {
      columns.push({ key: `${v.id}.ratio`, label: `${v.name} / ${opts.reference.name}`, role: 'ratio' });
    }
  }
  const rows: Row[] = [];
  for (const s of orderedScenarios(run, opts.scenarios)) {
    for (const l of loads) {
      const ref = cellValue(index.get(opts.reference.id, s.id, l.id), opts.metric);
      const values: Row['values'] = { scenario: scenarioLabel(s), load: l.label };
      let any = false;
      for (const v of variants) {
        const value = cellValue(index.get(v.id, s.id, l.id), opts.metric);
        any ||= value !== null;
        values[`${v.id}.value`] = value;
        if (v.id !== opts.reference.id) values[`${v.id}.ratio`] = compare(ref, value).ratio;
      }
      if (any) rows.push({ id: `${s.name}@${l.key}`, values });
    }
  }
  return { title: `${info.title} per variant, scenario and load (ratio to ${opts.reference.name})`, columns, rows };
}

export interface JmhTable {
  mode: string;
  unit: string;
  table: TableModel;
}

/** X-Ray shape: per JMH mode, a row per benchmark with each variant's score ± error and its difference to the reference. */
export function buildJmhTables(run: RunDetail, reference: VariantOut, scenarios: readonly string[] = []): JmhTable[] {
  const modes = [...new Set(run.cells.filter((c) => c.score !== null).map((c) => c.mode))];
  const index = new CellIndex(run.cells);
  const others = run.variants.filter((v) => v.id !== reference.id);
  return modes.map((mode) => {
    const modeCells = run.cells.filter((c) => c.mode === mode && c.score !== null);
    const unit = modeCells.find((c) => c.score_unit)?.score_unit ?? '';
    const columns: Column[] = [
      { key: 'scenario', label: 'Benchmark', role: 'label' },
      { key: 'params', label: 'Params', role: 'label' },
      { key: `${reference.id}.score`, label: reference.name, role: 'reference', unit, group: reference.name },
      { key: `${reference.id}.error`, label: '± error', role: 'value', unit, group: reference.name },
    ];
    for (const v of others) {
      columns.push(
        { key: `${v.id}.score`, label: v.name, role: 'variant', unit, group: v.name },
        { key: `${v.id}.error`, label: '± error', role: 'value', unit, group: v.name },
        { key: `${v.id}.diff`, label: `diff`, role: 'diff', unit, group: v.name, direction: scoreDirection(unit) },
      );
    }
    const rows: Row[] = [];
    for (const s of orderedScenarios(run, scenarios)) {
      for (const l of sortLoads(run.loads)) {
        const ref = index.get(reference.id, s.id, l.id, mode);
        const cells = others.map((v) => index.get(v.id, s.id, l.id, mode));
        if (!ref && cells.every((c) => !c)) continue;
        const params = Object.entries((ref ?? cells.find(Boolean))?.params ?? {})
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(' ');
        const values: Row['values'] = {
          scenario: scenarioLabel(s),
          params,
          [`${reference.id}.score`]: ref?.score ?? null,
          [`${reference.id}.error`]: ref?.score_error ?? null,
        };
        others.forEach((v, i) => {
          values[`${v.id}.score`] = cells[i]?.score ?? null;
          values[`${v.id}.error`] = cells[i]?.score_error ?? null;
          values[`${v.id}.diff`] = compare(ref?.score, cells[i]?.score).diff;
        });
        rows.push({ id: `${s.name}@${l.key}@${params}`, values });
      }
    }
    return { mode, unit, table: { title: `JMH ${mode} (${unit}): difference to ${reference.name}`, columns, rows } };
  });
}
