/**
 * One model for every table the dashboard shows, so that what is on screen, the CSV, the JSON and
 * the Markdown in the seeds' "baseline / agent / diff" shape are the same numbers.
 */
import { formatNumber, formatPercent, formatRatio, formatSigned } from './format';

export type CellValue = number | string | null;
export type ColumnRole = 'label' | 'reference' | 'variant' | 'diff' | 'ratio' | 'percent' | 'value';

export interface Column {
  key: string;
  label: string;
  role: ColumnRole;
  unit?: string;
  /** Columns sharing a group are shown under one header and joined as "a / b / c" in Markdown. */
  group?: string;
  /** Which way is better for the metric, so a diff can be marked as an improvement or a regression. */
  direction?: 'lower' | 'higher';
}

export interface Row {
  id: string;
  values: Record<string, CellValue>;
  /** Where the row's first cell links to in the app (e.g. the run it came from). */
  href?: string;
}

export interface TableModel {
  title: string;
  columns: Column[];
  rows: Row[];
}

export function displayValue(column: Column, value: CellValue): string {
  if (typeof value === 'string') return value;
  switch (column.role) {
    case 'diff':
      return formatSigned(value);
    case 'ratio':
      return formatRatio(value);
    case 'percent':
      return formatPercent(value);
    default:
      return formatNumber(value);
  }
}

function withUnit(text: string, unit: string | undefined): string {
  if (!unit || text === '—') return text;
  if (unit === '%') return `${text}%`;
  if (unit === 'ms' || unit === 'MB') return `${text}${unit}`;
  return `${text} ${unit}`;
}

function csvField(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** CSV keeps full precision and puts the unit in the header, one column per number. */
export function toCsv(model: TableModel): string {
  const header = model.columns.map((c) => csvField(c.unit ? `${c.label} (${c.unit})` : c.label));
  const lines = model.rows.map((row) =>
    model.columns
      .map((c) => {
        const v = row.values[c.key];
        return csvField(v === null || v === undefined ? '' : String(v));
      })
      .join(','),
  );
  return [header.join(','), ...lines].join('\n') + '\n';
}

export function toJson(model: TableModel): string {
  const rows = model.rows.map((row) => {
    const out: Record<string, CellValue> = {};
    for (const c of model.columns) out[c.label + (c.unit ? ` (${c.unit})` : '')] = row.values[c.key] ?? null;
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
            return m.role === 'ratio' || m.role === 'percent' ? text : withUnit(text, m.unit);
          })
          .join(' / '),
    });
  }
  const head = `| ${mdColumns.map((c) => mdEscape(c.header)).join(' | ')} |`;
  const rule = `|${mdColumns.map((_, i) => (i === 0 ? ':---' : '---:')).map((r) => ` ${r} `).join('|')}|`;
  const body = model.rows.map((row) => `| ${mdColumns.map((c) => mdEscape(c.cells(row))).join(' | ')} |`);
  return [`**${mdEscape(model.title)}**`, '', head, rule, ...body].join('\n') + '\n';
}
