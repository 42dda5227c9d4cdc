import type { ReactElement } from 'react';
import { Link } from 'react-router';
import { displayValue, type Column, type TableModel } from '@/lib/table';

function headerText(c: Column): string {
  return c.unit && c.role !== 'label' && c.role !== 'ratio' && c.role !== 'percent' ? `${c.label} (${c.unit})` : c.label;
}

/** Worse is red and better green, by the metric's direction; a diff without a direction stays neutral. */
function tone(c: Column, value: unknown): string | undefined {
  if ((c.role !== 'diff' && c.role !== 'percent') || !c.direction || typeof value !== 'number' || value === 0) {
    return undefined;
  }
  const better = c.direction === 'lower' ? value < 0 : value > 0;
  return better ? 'better' : 'worse';
}

/** Renders a TableModel; grouped columns get a spanning header row like the seeds' "baseline / agent / diff". */
export function DataTable({ model, caption }: { model: TableModel; caption?: string }): ReactElement {
  const hasGroups = model.columns.some((c) => c.group);
  const groups: { group: string | undefined; span: number }[] = [];
  for (const c of model.columns) {
    const last = groups[groups.length - 1];
    if (last && last.group !== undefined && last.group === c.group) last.span += 1;
    else groups.push({ group: c.group, span: 1 });
  }
  const labelKeys = model.columns.filter((c) => c.role === 'label').map((c) => c.key);
  return (
    <div className="table-scroll">
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
              <th key={c.key} scope="col" aria-label={c.group ? `${c.group} ${headerText(c)}` : headerText(c)}>
                {headerText(c)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {model.rows.length === 0 ? (
            <tr>
              <td colSpan={model.columns.length}>No cells match the current selection.</td>
            </tr>
          ) : (
            model.rows.map((row) => (
              <tr key={row.id} data-row-id={row.id}>
                {model.columns.map((c, i) => {
                  const v = row.values[c.key] ?? null;
                  const text = displayValue(c, v);
                  if (i === 0 || (labelKeys.includes(c.key) && i < labelKeys.length)) {
                    return (
                      <th key={c.key} scope="row">
                        {i === 0 && row.href ? <Link to={row.href}>{text}</Link> : text}
                      </th>
                    );
                  }
                  return (
                    <td
                      key={c.key}
                      className={tone(c, v)}
                      data-col={c.key}
                      title={typeof v === 'number' ? String(v) : undefined}
                    >
                      {text}
                    </td>
                  );
                })}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
