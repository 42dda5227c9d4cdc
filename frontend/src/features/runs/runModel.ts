/**
 * Pure shaping of a run's cells into the tables the run page leads with: per load level a row per
 * scenario and a "baseline / agent / diff" cell per metric (EaseAgent shape), the N-variant ×
 * scenario × load matrix with ratios (Easegress shape) and JMH mode tables with the difference in the
 * score's unit and in added µs per operation (X-Ray shape). Intervals and verdicts come from the API.
 */
import type { AbOut, LoadOut, RunDetail, RunOverheads, VariantOut } from '@/api/client';
import {
  ALL_SCENARIOS,
  CellIndex,
  cellValue,
  compare,
  loadTitle,
  orderedScenarios,
  scenarioLabel,
  sortLoads,
} from '@/lib/cells';
import { formatSigned } from '@/lib/format';
import { metricInfo, percentileLabel, scoreDirection, type PercentileKey } from '@/lib/metrics';
import { isComparison, type Column, type ComparisonValue, type DiffStats, type Row, type TableModel } from '@/lib/table';
import { processColumns, processStatsMode } from './processColumns';

/** Looks up the API's statistics of one difference; null when the API has none (yet). */
export type StatsLookup = (metric: string, variant: string, scenario: string, loadKey: string, mode: string) => DiffStats | null;

export const NO_STATS: StatsLookup = () => null;

function repetitionsOf(raw: unknown): DiffStats['repetitions'] {
  if (!raw || typeof raw !== 'object') return null;
  const r = raw as { reference?: unknown; variant?: unknown };
  const nums = (x: unknown): number[] | null =>
    Array.isArray(x) && x.every((v) => typeof v === 'number') ? (x as number[]) : null;
  const reference = nums(r.reference);
  const variant = nums(r.variant);
  return reference && variant ? { reference, variant } : null;
}

export function statsFromAb(result: AbOut, extra?: unknown): DiffStats {
  const loose = result as AbOut & { repetitions?: unknown };
  return {
    estimate: result.abs_diff,
    low: result.ci_low,
    high: result.ci_high,
    verdict: result.verdict,
    mde: result.mde,
    worse: result.worse,
    pValue: result.mw_p,
    method: result.method,
    repetitions: repetitionsOf(loose.repetitions ?? extra),
  };
}

/** The /overheads responses of a run, one per metric, as a lookup for the tables. */
export function overheadLookup(responses: readonly (RunOverheads | undefined)[], reference: string): StatsLookup {
  const byKey = new Map<string, DiffStats>();
  for (const r of responses) {
    if (!r) continue;
    const comparisons = r.items.filter((item) => item.p_adjusted != null).length;
    for (const item of r.items) {
      // Intervals are against the run's reference variant; another reference picked in the UI has none.
      if (item.reference_variant !== reference) continue;
      const repetitions = (item as typeof item & { repetitions?: unknown }).repetitions;
      // A named process's cell (consumer, provider) is looked up under its own mode slot.
      const mode = item.cell.process ? processStatsMode(item.cell.process) : item.cell.mode;
      byKey.set(
        [r.metric, item.variant, item.cell.scenario, item.cell.load_key, mode].join('\u0000'),
        { ...statsFromAb(item.result, repetitions), pAdjusted: item.p_adjusted ?? null, comparisons },
      );
    }
  }
  return (metric, variant, scenario, loadKey, mode) =>
    byKey.get([metric, variant, scenario, loadKey, mode].join('\u0000')) ?? null;
}

export interface LeadMetric {
  metric: string;
  label: string;
  /** Measured on the process (resource file), so it belongs to every scenario of a load level. */
  process: boolean;
}

export function leadMetrics(percentile: PercentileKey): LeadMetric[] {
  return [
    { metric: 'cpu_pct', label: 'CPU', process: true },
    { metric: 'cpu_s_per_1k', label: 'CPU-s / 1k req', process: true },
    { metric: 'heap_mb', label: 'Heap', process: true },
    { metric: 'rss_mb', label: 'RSS', process: true },
    { metric: `latency_${percentile}`, label: `${percentileLabel(percentile)} latency`, process: false },
    { metric: 'latency_mean', label: 'Mean RT', process: false },
    { metric: 'throughput', label: 'Throughput', process: false },
    { metric: 'error_rate', label: 'Errors', process: false },
  ];
}

export interface LeadOptions {
  load: LoadOut;
  reference: VariantOut;
  variant: VariantOut;
  percentile: PercentileKey;
  scenarios?: readonly string[];
  stats?: StatsLookup;
}

/**
 * One load level as the EaseAgent seed shows it: a row per scenario, a column per metric, each cell
 * "reference / variant / diff". Process metrics, measured once per load level, are the all-scenarios
 * cell's value shared by every scenario row (one object, so the table can span it over the rows).
 * Metrics no cell of the load carries are left out; errors only when some request failed.
 */
export function buildLeadTable(run: RunDetail, opts: LeadOptions): TableModel {
  const index = new CellIndex(run.cells);
  const stats = opts.stats ?? NO_STATS;
  const scenarios = orderedScenarios(run, opts.scenarios);
  const all = run.scenarios.find((s) => s.name === ALL_SCENARIOS);
  const columns: Column[] = [{ key: 'scenario', label: 'Scenario', role: 'label' }];
  const rows: Row[] = scenarios.map((s) => ({ id: s.name, values: { scenario: scenarioLabel(s) } }));
  const atLoad = run.cells.filter((c) => c.load_id === opts.load.id);
  // The variants' named processes first, as the PTS seeds' CPU and memory rows of each process.
  for (const { column, value } of processColumns(run, { ...opts, stats })) {
    columns.push(column);
    rows.forEach((row) => {
      row.values[column.key] = value;
    });
  }
  for (const { metric, label, process } of leadMetrics(opts.percentile)) {
    const values = atLoad.map((c) => cellValue(c, metric)).filter((v): v is number => v !== null);
    if (!values.length || (metric === 'error_rate' && values.every((v) => v === 0))) continue;
    const info = metricInfo(metric);
    const unit = info.unit === 'samples' ? '' : info.unit;
    columns.push({ key: metric, label, role: 'comparison', unit, direction: info.direction });
    const cellAt = (scenarioId: number, scenarioName: string): ComparisonValue | null => {
      const ref = cellValue(index.get(opts.reference.id, scenarioId, opts.load.id), metric);
      const v = cellValue(index.get(opts.variant.id, scenarioId, opts.load.id), metric);
      if (ref === null && v === null) return null;
      return {
        kind: 'comparison',
        ...compare(ref, v),
        stats: stats(metric, opts.variant.name, scenarioName, opts.load.key, ''),
      };
    };
    const shared = process && all ? cellAt(all.id, all.name) : null;
    if (shared) shared.processWide = true;
    scenarios.forEach((s, i) => {
      rows[i].values[metric] = s.id === all?.id ? (shared ?? cellAt(s.id, s.name)) : (cellAt(s.id, s.name) ?? shared);
    });
  }
  return {
    title: `${loadTitle(opts.load)}: ${opts.reference.name} / ${opts.variant.name} / diff`,
    columns,
    rows,
    sides: { reference: opts.reference.name, variant: opts.variant.name },
  };
}

export interface MatrixOptions {
  metric: string;
  reference: VariantOut;
  scenarios?: readonly string[];
  loads?: readonly string[];
  stats?: StatsLookup;
}

/** Easegress shape: a row per (scenario, load); the reference's value, then per variant "reference / variant / ratio". */
export function buildMatrix(run: RunDetail, opts: MatrixOptions): TableModel {
  const index = new CellIndex(run.cells);
  const stats = opts.stats ?? NO_STATS;
  const info = metricInfo(opts.metric);
  const unit = info.unit === 'samples' ? '' : info.unit;
  const loads = sortLoads(run.loads).filter((l) => !opts.loads?.length || opts.loads.includes(l.key));
  const others = run.variants.filter((v) => v.id !== opts.reference.id);
  const columns: Column[] = [
    { key: 'scenario', label: 'Scenario', role: 'label' },
    { key: 'load', label: 'Load', role: 'label' },
    { key: `${opts.reference.id}.value`, label: opts.reference.name, role: 'reference', unit },
  ];
  for (const v of others) {
    columns.push({ key: `${v.id}.cmp`, label: v.name, role: 'comparison', unit, direction: info.direction, show: 'ratio' });
  }
  const rows: Row[] = [];
  for (const s of orderedScenarios(run, opts.scenarios)) {
    for (const l of loads) {
      const ref = cellValue(index.get(opts.reference.id, s.id, l.id), opts.metric);
      const values: Row['values'] = { scenario: scenarioLabel(s), load: l.label, [`${opts.reference.id}.value`]: ref };
      let any = ref !== null;
      for (const v of others) {
        const value = cellValue(index.get(v.id, s.id, l.id), opts.metric);
        any ||= value !== null;
        values[`${v.id}.cmp`] =
          value === null && ref === null
            ? null
            : { kind: 'comparison', ...compare(ref, value), stats: stats(opts.metric, v.name, s.name, l.key, '') };
      }
      if (any) rows.push({ id: `${s.name}@${l.key}`, values });
    }
  }
  return {
    title: `${info.title} per variant, scenario and load (ratio to ${opts.reference.name})`,
    columns,
    rows,
    sides: { reference: opts.reference.name },
  };
}

const TIME_UNIT_US: Record<string, number> = { ns: 1e-3, us: 1, µs: 1, ms: 1e3, s: 1e6, m: 6e7, min: 6e7 };

/** Microseconds per operation of a JMH score: time/op converted, ops/time inverted; null for other units. */
export function microsPerOp(score: number | null | undefined, unit: string): number | null {
  if (score === null || score === undefined || !Number.isFinite(score)) return null;
  const [a, b] = unit.split('/');
  if (a === 'ops' && b in TIME_UNIT_US) return score === 0 ? null : TIME_UNIT_US[b] / score;
  if (b === 'op' && a in TIME_UNIT_US) return score * TIME_UNIT_US[a];
  return null;
}

export interface JmhTable {
  mode: string;
  unit: string;
  /** The package every benchmark's name starts with, left out of the table's names ('' for none). */
  pkg: string;
  table: TableModel;
}

/**
 * The Java package every benchmark of a run shares ("org.casbin.jcasbin.main.benchmark."), or '' when they share
 * none: JMH names benchmarks in full, and the tables and charts name them by class and method below a line saying
 * the package once, as the X-Ray seed does.
 */
export function benchmarkPackage(names: readonly string[]): string {
  // Before the @Params and a secondary metric; the last two parts are the class and the method.
  const packages = names.map((n) => n.split(/[(:]/)[0].split('.').slice(0, -2));
  if (!packages.length) return '';
  let common = packages[0];
  for (const p of packages.slice(1)) {
    let i = 0;
    while (i < common.length && i < p.length && common[i] === p[i]) i++;
    common = common.slice(0, i);
  }
  return common.length ? `${common.join('.')}.` : '';
}

/** "JMH thrpt (ops/ms)"; a Go, pytest-benchmark, ... measure named by its unit reads once ("ns/op", not "ns/op (ns/op)"). */
function scoreTitle(run: RunDetail, mode: string, unit: string): string {
  const tool = (run.tool ?? '').startsWith('jmh') ? 'JMH ' : '';
  return mode === unit.replace(/\s*[↑↓]$/, '') ? `${tool}${unit}` : `${tool}${mode} (${unit})`;
}

/**
 * X-Ray shape: per JMH mode, a row per benchmark; the reference's score ± error, then per variant
 * "reference / variant / diff" in the score's unit with the added µs per operation beside it.
 */
export function buildJmhTables(
  run: RunDetail,
  reference: VariantOut,
  scenarios: readonly string[] = [],
  stats: StatsLookup = NO_STATS,
): JmhTable[] {
  const modes = [...new Set(run.cells.filter((c) => c.score !== null).map((c) => c.mode))];
  const index = new CellIndex(run.cells);
  const others = run.variants.filter((v) => v.id !== reference.id);
  const benchmarks = run.scenarios.filter((s) => run.cells.some((c) => c.scenario_id === s.id && c.score !== null));
  const pkg = benchmarkPackage(benchmarks.map((s) => s.name));
  return modes.map((mode) => {
    const modeCells = run.cells.filter((c) => c.mode === mode && c.score !== null);
    const unit = modeCells.find((c) => c.score_unit)?.score_unit ?? '';
    const direction = scoreDirection(unit);
    const columns: Column[] = [
      // A benchmark's @Param values are part of its name (each combination is a benchmark of its own).
      { key: 'scenario', label: 'Benchmark', role: 'label' },
      { key: `${reference.id}.score`, label: reference.name, role: 'reference', unit, group: reference.name },
      { key: `${reference.id}.error`, label: '± error', role: 'value', unit, group: reference.name },
    ];
    for (const v of others) {
      columns.push({ key: `${v.id}.cmp`, label: v.name, role: 'comparison', unit, direction });
    }
    const rows: Row[] = [];
    for (const s of orderedScenarios(run, scenarios)) {
      for (const l of sortLoads(run.loads)) {
        const ref = index.get(reference.id, s.id, l.id, mode);
        const cells = others.map((v) => index.get(v.id, s.id, l.id, mode));
        if (!ref && cells.every((c) => !c)) continue;
        const values: Row['values'] = {
          scenario: pkg && s.name.startsWith(pkg) ? s.name.slice(pkg.length) : scenarioLabel(s),
          [`${reference.id}.score`]: ref?.score ?? null,
          [`${reference.id}.error`]: ref?.score_error ?? null,
        };
        others.forEach((v, i) => {
          const c = cells[i];
          if (!c && !ref) return;
          const refUs = microsPerOp(ref?.score, unit);
          const varUs = microsPerOp(c?.score, unit);
          const added = refUs !== null && varUs !== null ? varUs - refUs : null;
          values[`${v.id}.cmp`] = {
            kind: 'comparison',
            ...compare(ref?.score, c?.score),
            errors: { reference: ref?.score_error ?? null, variant: c?.score_error ?? null },
            extra: added === null ? undefined : `${formatSigned(added, 'us/op')} µs/op added`,
            stats: stats('score', v.name, s.name, l.key, mode),
          };
        });
        rows.push({ id: `${s.name}@${l.key}`, values });
      }
    }
    return {
      mode,
      unit,
      pkg,
      table: {
        title: others.length ? `${scoreTitle(run, mode, unit)}: difference to ${reference.name}` : scoreTitle(run, mode, unit),
        columns,
        rows,
        sides: { reference: reference.name },
      },
    };
  });
}

/** One horizontal bar per benchmark (top-down as the table) and its ± error: what a JMH chart draws. */
export interface JmhBars {
  name: string;
  variant: string;
  y: string[];
  x: (number | null)[];
  error: number[];
}

/**
 * The bars of one JMH table: each other variant's difference to the reference, its error the two JMH errors
 * added in quadrature; a run of one variant has no difference to draw, so its own scores and errors.
 */
export function jmhBars(table: TableModel, reference: VariantOut, others: readonly VariantOut[]): JmhBars[] {
  const rows = [...table.rows].reverse(); // Plotly draws the first category at the bottom
  const y = rows.map((r) => String(r.values.scenario));
  if (!others.length) {
    const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
    return [{
      name: reference.name,
      variant: reference.name,
      y,
      x: rows.map((r) => num(r.values[`${reference.id}.score`])),
      error: rows.map((r) => num(r.values[`${reference.id}.error`]) ?? 0),
    }];
  }
  return others.map((v) => {
    const cmps = rows.map((r) => r.values[`${v.id}.cmp`]);
    return {
      name: `${v.name} − ${reference.name}`,
      variant: v.name,
      y,
      x: cmps.map((c) => (isComparison(c) ? c.diff : null)),
      error: cmps.map((c) =>
        isComparison(c) && c.errors && c.errors.reference !== null && c.errors.variant !== null
          ? Math.hypot(c.errors.reference, c.errors.variant)
          : 0,
      ),
    };
  });
}
