import { Fragment, useState, type ReactElement, type ReactNode } from 'react';
import { Link } from 'react-router';
import { formatNumber, formatPercent, formatSigned } from '@/lib/format';
import {
  comparisonDetail,
  comparisonTone,
  displayValue,
  intervalText,
  isComparison,
  isSignificant,
  verdictText,
  type CellValue,
  type Column,
  type ComparisonValue,
  type Row,
  type TableModel,
} from '@/lib/table';

function headerText(c: Column): string {
  return c.unit && c.role !== 'label' && c.role !== 'ratio' && c.role !== 'percent' ? `${c.label} (${c.unit})` : c.label;
}

/** A header with a chance to wrap after each dot before a letter: a series name such as
 * "auto-instrumentation · AwsSdkBenchmark.awsV1Request · sample" wraps at its parts, never inside a word. */
function wrapAtDots(text: string): ReactNode {
  const parts = text.split(/(?<=\.)(?=[A-Za-z])/);
  return parts.length === 1 ? text : parts.map((p, i) => <Fragment key={i}>{i > 0 ? <wbr /> : null}{p}</Fragment>);
}

/** Worse is red and better green, by the metric's direction; a diff without a direction stays neutral. */
function tone(c: Column, value: CellValue): string | undefined {
  if (isComparison(value)) return comparisonTone(value, c.direction);
  if ((c.role !== 'diff' && c.role !== 'percent') || !c.direction || typeof value !== 'number' || value === 0) {
    return undefined;
  }
  const better = c.direction === 'lower' ? value < 0 : value > 0;
  return better ? 'better' : 'worse';
}

/** The hover text of a comparison: every number unrounded, the interval, the verdict, repetitions. */
function comparisonTitle(c: Column, v: ComparisonValue): string {
  const lines = [
    `reference ${v.reference ?? '—'}${v.errors ? ` ± ${v.errors.reference ?? '—'}` : ''}`,
    `variant ${v.variant ?? '—'}${v.errors ? ` ± ${v.errors.variant ?? '—'}` : ''}`,
    `diff ${v.diff ?? '—'} (${formatPercent(v.pct)})`,
  ];
  if (v.processWide) lines.push('process-wide: measured once for all scenarios of this load level');
  if (v.stats) {
    lines.push(
      `diff over repetitions and its 95% interval ${intervalText(v.stats, c.unit)}`,
      `verdict: ${verdictText(v.stats, c.unit)}`,
    );
    if (v.stats.pValue !== null) lines.push(`Mann-Whitney p = ${v.stats.pValue.toPrecision(2)}`);
    if (v.stats.pAdjusted != null) {
      lines.push(`p adjusted over ${v.stats.comparisons ?? 'all'} cells (Benjamini-Hochberg) = ${v.stats.pAdjusted.toPrecision(2)}`);
    }
    lines.push(`method: ${v.stats.method}`);
    if (v.stats.repetitions) {
      lines.push(
        `repetitions reference: ${v.stats.repetitions.reference.map((x) => formatNumber(x, c.unit)).join(', ')}`,
        `repetitions variant: ${v.stats.repetitions.variant.map((x) => formatNumber(x, c.unit)).join(', ')}`,
      );
    }
  }
  return lines.join('\n');
}

function ComparisonCell({ column, value }: { column: Column; value: ComparisonValue }): ReactElement {
  const significant = isSignificant(value.stats);
  const last = column.show === 'ratio' ? (value.ratio === null ? '—' : `${value.ratio.toFixed(2)}×`) : formatSigned(value.diff, column.unit);
  return (
    <>
      <span className="cmp-main">
        <span data-part="reference">{formatNumber(value.reference, column.unit)}</span>
        {' / '}
        <span data-part="variant">{formatNumber(value.variant, column.unit)}</span>
        {' / '}
        <span data-part={column.show === 'ratio' ? 'ratio' : 'diff'} className="cmp-diff">
          {last}
        </span>
        {significant ? (
          <span className="sig" role="img" aria-label="interval excludes 0">
            {' ●'}
          </span>
        ) : null}
      </span>
      <span className="cmp-detail" data-part="detail">
        {comparisonDetail(column, value)}
      </span>
      {value.stats?.repetitions ? (
        <span className="cmp-detail" data-part="repetitions">
          reps {value.stats.repetitions.reference.length}+{value.stats.repetitions.variant.length}
        </span>
      ) : null}
    </>
  );
}

/**
 * The one table of the dashboard: every screen's table is a TableModel drawn here, so headers, row
 * headers, alignment, units and scrolling are the same everywhere. Grouped columns get a spanning
 * header row like the seeds' "baseline / agent / diff"; a comparison value shared by consecutive rows
 * (a process-wide metric) is one cell spanning them. Screens that need links, badges or controls in a
 * cell pass a renderer per column key; the model's values stay plain data for CSV, JSON and Markdown.
 * Long tables show a page of rows at a time (the newest last pages stay one click away).
 */
export function DataTable<R extends Row = Row>({
  model,
  caption,
  pageSize,
  fit = false,
  render,
  empty = 'No cells match the current selection.',
  firstPage = false,
}: {
  model: TableModel<R>;
  /** A visible caption; the table's accessible name stays the model's title. */
  caption?: ReactNode;
  /** Rows per page; all rows when unset. */
  pageSize?: number;
  /** Fit the page width: cells wrap instead of scrolling sideways. */
  fit?: boolean;
  /** Cell content by column key, for cells that hold more than a value (links, badges, forms). */
  render?: Partial<Record<string, (row: R) => ReactNode>>;
  /** What the body says when there are no rows. */
  empty?: ReactNode;
  /** Open on the first page (a ranking, largest first) instead of the last (a history, newest last). */
  firstPage?: boolean;
}): ReactElement {
  const pages = pageSize ? Math.max(1, Math.ceil(model.rows.length / pageSize)) : 1;
  const [page, setPage] = useState(firstPage ? 0 : pages - 1);
  const current = Math.min(page, pages - 1);
  const rows = pageSize ? model.rows.slice(current * pageSize, (current + 1) * pageSize) : model.rows;
  const hasGroups = model.columns.some((c) => c.group);
  const groups: { group: string | undefined; span: number }[] = [];
  for (const c of model.columns) {
    const last = groups[groups.length - 1];
    if (last && last.group !== undefined && last.group === c.group) last.span += 1;
    else groups.push({ group: c.group, span: 1 });
  }
  const labelKeys = model.columns.filter((c) => c.role === 'label').map((c) => c.key);
  const isRowHeader = (c: Column, i: number): boolean =>
    model.rowHeader !== undefined
      ? c.key === model.rowHeader
      : i === 0 || (labelKeys.includes(c.key) && i < labelKeys.length);
  // Row spans: a shared comparison object repeated down a column is drawn once.
  const spans = new Map<string, number>();
  for (const c of model.columns) {
    for (let i = 0; i < rows.length; i++) {
      const v = rows[i].values[c.key];
      if (!isComparison(v)) continue;
      let j = i + 1;
      while (j < rows.length && rows[j].values[c.key] === v) j++;
      if (j - i > 1) {
        spans.set(`${i}/${c.key}`, j - i);
        for (let k = i + 1; k < j; k++) spans.set(`${k}/${c.key}`, 0);
      }
      i = j - 1;
    }
  }
  return (
    // A scrolling container is focusable, so keyboard users can scroll it too.
    <div className={fit ? 'table-fit' : 'table-scroll'} tabIndex={fit ? undefined : 0}>
      <table aria-label={model.title}>
        {caption ? <caption>{caption}</caption> : null}
        <thead>
          {hasGroups ? (
            <tr>
              {groups.map((g, i) => (
                <th key={i} colSpan={g.span} scope="colgroup">
                  {g.group ?? ''}
                </th>
              ))}
            </tr>
          ) : null}
          <tr>
            {model.columns.map((c) => (
              <th
                key={c.key}
                scope="col"
                className={c.text ? 'text' : undefined}
                aria-label={c.group ? `${c.group} ${headerText(c)}` : headerText(c)}
              >
                {wrapAtDots(headerText(c))}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={model.columns.length}>{empty}</td>
            </tr>
          ) : (
            rows.map((row, r) => (
              <tr key={row.id} data-row-id={row.id}>
                {model.columns.map((c, i) => {
                  const v = row.values[c.key] ?? null;
                  const custom = render?.[c.key];
                  if (isRowHeader(c, i)) {
                    const text = displayValue(c, v);
                    return (
                      <th key={c.key} scope="row" className={c.text ? 'text' : undefined}>
                        {custom ? custom(row) : i === 0 && row.href ? <Link to={row.href}>{text}</Link> : text}
                      </th>
                    );
                  }
                  const span = spans.get(`${r}/${c.key}`);
                  if (span === 0) return null;
                  if (isComparison(v) && !custom) {
                    return (
                      <td
                        key={c.key}
                        rowSpan={span}
                        className={['cmp', tone(c, v), v.processWide ? 'process' : undefined].filter(Boolean).join(' ')}
                        data-col={c.key}
                        title={comparisonTitle(c, v)}
                      >
                        <ComparisonCell column={c} value={v} />
                      </td>
                    );
                  }
                  return (
                    <td
                      key={c.key}
                      className={[tone(c, v), c.text ? 'text' : undefined].filter(Boolean).join(' ') || undefined}
                      data-col={c.key}
                      title={typeof v === 'number' ? String(v) : undefined}
                    >
                      {custom ? custom(row) : displayValue(c, v)}
                    </td>
                  );
                })}
              </tr>
            ))
          )}
        </tbody>
      </table>
      {pages > 1 ? (
        <nav className="pager" aria-label={`Pages of ${model.title}`}>
          <button type="button" onClick={() => setPage(Math.max(0, current - 1))} disabled={current === 0}>
            Earlier
          </button>
          <span>
            rows {current * pageSize! + 1}–{Math.min(model.rows.length, (current + 1) * pageSize!)} of {model.rows.length}
          </span>
          <button type="button" onClick={() => setPage(Math.min(pages - 1, current + 1))} disabled={current === pages - 1}>
            Later
          </button>
        </nav>
      ) : null}
    </div>
  );
}
