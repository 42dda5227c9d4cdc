/**
 * One model for every table the dashboard shows, so that what is on screen, the CSV, the JSON and
 * the Markdown in the seeds' "baseline / agent / diff" shape are the same numbers.
 */
import { formatNumber, formatPercent, formatRatio, formatSigned } from './format';

/** The API's interval and verdict of one difference (variant − reference, or run b − run a). */
export interface DiffStats {
  /**
   * The difference the interval is of: the mean of the variant's per-repetition values minus the
   * reference's, which can differ from the difference of the cells' values over all samples.
   */
  estimate?: number | null;
  low: number | null;
  high: number | null;
  verdict: string;
  /** Smallest |difference| the data could detect (80% power at 5%), in the metric's unit. */
  mde: number | null;
  worse: boolean | null;
  pValue: number | null;
  method: string;
  /**
   * The test's p-value adjusted (Benjamini-Hochberg) over `comparisons` cells compared together, when
   * the API gives it (GET /compare, GET /runs/{run}/overheads).
   */
  pAdjusted?: number | null;
  comparisons?: number;
  /** Per-repetition values of each side, when the API sends them. */
  repetitions?: { reference: number[]; variant: number[] } | null;
}

/** One "baseline / agent / diff" cell: both values, their difference and, once fetched, its statistics. */
export interface ComparisonValue {
  kind: 'comparison';
  reference: number | null;
  variant: number | null;
  diff: number | null;
  pct: number | null;
  ratio: number | null;
  /** JMH: each side's ± error. */
  errors?: { reference: number | null; variant: number | null };
  /** A derived reading of the difference, e.g. "+1.2 µs/op added". */
  extra?: string;
  /** Measured for the whole process at this load level (all scenarios), not per scenario. */
  processWide?: boolean;
  /** Which way is better for this value when its column mixes directions (JMH scores of several modes). */
  direction?: 'lower' | 'higher';
  stats?: DiffStats | null;
}

export type CellValue = number | string | null | ComparisonValue;
export type ColumnRole = 'label' | 'reference' | 'variant' | 'diff' | 'ratio' | 'percent' | 'value' | 'comparison';

export interface Column {
  key: string;
  label: string;
  role: ColumnRole;
  unit?: string;
  /** Columns sharing a group are shown under one header and joined as "a / b / c" in Markdown. */
  group?: string;
  /** Which way is better for the metric, so a diff can be marked as an improvement or a regression. */
  direction?: 'lower' | 'higher';
  /** Comparison columns: what the first line ends with, the difference (default) or the ratio. */
  show?: 'diff' | 'ratio';
  /** Prose (notes, trail names): left-aligned and wrapped instead of a right-aligned number. */
  text?: boolean;
}

export interface Row {
  id: string;
  values: Record<string, CellValue>;
  /** Where the row's first cell links to in the app (e.g. the run it came from). */
  href?: string;
}

/** `R` lets a screen keep its source object on each row for its cell renderers (see DataTable `render`). */
export interface TableModel<R extends Row = Row> {
  title: string;
  columns: Column[];
  rows: R[];
  /** The column whose cell names each row (a row header); by default the leading label columns. */
  rowHeader?: string;
  /** Names of the two sides of the comparison columns (default: the column's label as the variant). */
  sides?: { reference: string; variant?: string };
}

export function isComparison(value: CellValue | undefined): value is ComparisonValue {
  return typeof value === 'object' && value !== null && value.kind === 'comparison';
}

/** The interval excludes 0: the only case a difference is marked as a change. */
export function isSignificant(stats: DiffStats | null | undefined): boolean {
  if (!stats || stats.low === null || stats.high === null) return false;
  return stats.low > 0 || stats.high < 0;
}

/** Better or worse by the metric's direction (the value's own, else its column's), only when the interval
 * excludes 0; else undefined. */
export function comparisonTone(c: ComparisonValue, columnDirection: Column['direction']): 'better' | 'worse' | undefined {
  if (!isSignificant(c.stats)) return undefined;
  if (c.stats?.worse === true) return 'worse';
  if (c.stats?.worse === false) return 'better';
  const direction = c.direction ?? columnDirection;
  if (!direction || c.diff === null || c.diff === 0) return undefined;
  return (direction === 'lower' ? c.diff < 0 : c.diff > 0) ? 'better' : 'worse';
}

/** The false discovery rate a verdict over many cells is held at (as `benchtrail compare --fail-on-worse`). */
const FALSE_DISCOVERY_RATE = 0.05;

/** A change in its own cell that is not one once every cell compared with it is counted. */
function lostOverComparison(stats: DiffStats): boolean {
  return isSignificant(stats) && stats.pAdjusted != null && stats.pAdjusted >= FALSE_DISCOVERY_RATE;
}

export function verdictText(stats: DiffStats, unit?: string): string {
  if (stats.verdict === 'too noisy to tell' && stats.mde !== null && Number.isFinite(stats.mde)) {
    return `too noisy to tell (MDE ±${formatNumber(stats.mde, unit)})`;
  }
  if (lostOverComparison(stats)) {
    const cells = stats.comparisons === undefined ? 'all cells' : `${stats.comparisons} cell${stats.comparisons === 1 ? '' : 's'}`;
    return `${stats.verdict}, not significant over ${cells} (adjusted p ${stats.pAdjusted?.toPrecision(2)})`;
  }
  return stats.verdict;
}

/** "estimate [low, high]": the difference over repetitions and its 95% interval. */
export function intervalText(stats: DiffStats, unit?: string): string {
  if (stats.low === null || stats.high === null) return 'no interval (one value per side)';
  const interval = `[${formatSigned(stats.low, unit)}, ${formatSigned(stats.high, unit)}]`;
  return stats.estimate == null ? interval : `${formatSigned(stats.estimate, unit)} ${interval}`;
}

/** The first line of a comparison cell, "baseline / agent / diff" (or "… / ratio"). */
export function comparisonText(column: Column, c: ComparisonValue, withUnit = false): string {
  const u = (text: string): string => (withUnit ? appendUnit(text, column.unit) : text);
  const last = column.show === 'ratio' ? formatRatio(c.ratio) : u(formatSigned(c.diff, column.unit));
  return `${u(formatNumber(c.reference, column.unit))} / ${u(formatNumber(c.variant, column.unit))} / ${last}`;
}

/** The second line: Δ%, the interval of the difference and the verdict, when the API has them. */
export function comparisonDetail(column: Column, c: ComparisonValue): string {
  const parts = [column.show === 'ratio' ? formatSigned(c.diff, column.unit) : formatPercent(c.pct)];
  if (c.extra) parts.push(c.extra);
  if (c.stats) parts.push(intervalText(c.stats, column.unit), verdictText(c.stats, column.unit));
  return parts.join(' · ');
}

export function displayValue(column: Column, value: CellValue): string {
  if (typeof value === 'string') return value;
  if (isComparison(value)) return comparisonText(column, value);
  switch (column.role) {
    case 'diff':
      return formatSigned(value, column.unit);
    case 'ratio':
      return formatRatio(value);
    case 'percent':
      return formatPercent(value);
    default:
      return formatNumber(value, column.unit);
  }
}

function appendUnit(text: string, unit: string | undefined): string {
  if (!unit || text === '—' || unit === 'samples') return text;
  if (unit === '%') return `${text}%`;
  if (unit === 'ms' || unit === 'MB') return `${text}${unit}`;
  return `${text} ${unit}`;
}

function csvField(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** `diff_repetitions`: the diff over repetitions that `ci_low`/`ci_high` are the interval of (`DiffStats.estimate`). */
const COMPARISON_PARTS = ['reference', 'variant', 'diff', 'pct', 'ratio', 'diff_repetitions', 'ci_low', 'ci_high', 'verdict', 'mde'] as const;

function comparisonPart(c: ComparisonValue | undefined, part: (typeof COMPARISON_PARTS)[number]): number | string | null {
  if (!c) return null;
  switch (part) {
    case 'diff_repetitions':
      return c.stats?.estimate ?? null;
    case 'ci_low':
      return c.stats?.low ?? null;
    case 'ci_high':
      return c.stats?.high ?? null;
    case 'verdict':
      return c.stats?.verdict ?? null;
    case 'mde':
      return c.stats?.mde ?? null;
    default:
      return c[part];
  }
}

/** CSV keeps full precision and puts the unit in the header, one column per number. */
export function toCsv(model: TableModel): string {
  const fields: { header: string; get: (row: Row) => CellValue | undefined }[] = [];
  for (const c of model.columns) {
    const unit = c.unit ? ` (${c.unit})` : '';
    if (c.role === 'comparison') {
      for (const part of COMPARISON_PARTS) {
        const v = (row: Row): CellValue => {
          const value = row.values[c.key];
          return comparisonPart(isComparison(value) ? value : undefined, part);
        };
        const partUnit = part === 'pct' || part === 'ratio' || part === 'verdict' ? '' : unit;
        fields.push({ header: `${c.label} ${part}${partUnit}`, get: v });
      }
    } else {
      fields.push({ header: `${c.label}${unit}`, get: (row) => row.values[c.key] });
    }
  }
  const lines = model.rows.map((row) =>
    fields
      .map((f) => {
        const v = f.get(row);
        return csvField(v === null || v === undefined ? '' : String(v));
      })
      .join(','),
  );
  return [fields.map((f) => csvField(f.header)).join(','), ...lines].join('\n') + '\n';
}

export function toJson(model: TableModel): string {
  const rows = model.rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const c of model.columns) {
      const v = row.values[c.key] ?? null;
      const name = c.label + (c.unit ? ` (${c.unit})` : '');
      if (isComparison(v)) {
        out[name] = Object.fromEntries(COMPARISON_PARTS.map((p) => [p, comparisonPart(v, p)]));
      } else {
        out[name] = v;
      }
    }
    return out;
  });
  return JSON.stringify({ title: model.title, rows }, null, 2) + '\n';
}

function mdEscape(text: string): string {
  return text.replace(/\|/g, '\\|');
}

interface MdColumn {
  header: string;
  cells: (row: Row) => string;
}

/** Grouped columns become one Markdown column "CPU (baseline / agent / diff)" with "10.7% / 13.3% / +2.6%". */
export function toMarkdown(model: TableModel): string {
  const mdColumns: MdColumn[] = [];
  const seen = new Set<string>();
  for (const c of model.columns) {
    if (c.role === 'comparison') {
      const last = c.show === 'ratio' ? 'ratio' : 'diff';
      mdColumns.push({
        header: `${c.label} (${model.sides?.reference ?? 'reference'} / ${model.sides?.variant ?? c.label} / ${last})`,
        cells: (row) => {
          const v = row.values[c.key];
          return isComparison(v) ? comparisonText(c, v, true) : displayValue(c, v ?? null);
        },
      });
      continue;
    }
    if (!c.group) {
      mdColumns.push({
        header: c.unit && c.role !== 'label' ? `${c.label} (${c.unit})` : c.label,
        cells: (row) => displayValue(c, row.values[c.key] ?? null),
      });
      continue;
    }
    if (seen.has(c.group)) continue;
    seen.add(c.group);
    const members = model.columns.filter((m) => m.group === c.group);
    mdColumns.push({
      header: `${c.group} (${members.map((m) => m.label).join(' / ')})`,
      cells: (row) =>
        members
          .map((m) => {
            const text = displayValue(m, row.values[m.key] ?? null);
            return m.role === 'ratio' || m.role === 'percent' ? text : appendUnit(text, m.unit);
          })
          .join(' / '),
    });
  }
  const head = `| ${mdColumns.map((c) => mdEscape(c.header)).join(' | ')} |`;
  const rule = `|${mdColumns.map((_, i) => (i === 0 ? ':---' : '---:')).map((r) => ` ${r} `).join('|')}|`;
  const body = model.rows.map((row) => `| ${mdColumns.map((c) => mdEscape(c.cells(row))).join(' | ')} |`);
  return [`**${mdEscape(model.title)}**`, '', head, rule, ...body].join('\n') + '\n';
}
