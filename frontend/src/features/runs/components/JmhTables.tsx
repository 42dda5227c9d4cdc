import type { ReactElement } from 'react';
import type { RunDetail, VariantOut } from '@/api/client';
import { ChartImageLinks } from '@/components/ChartImageLinks';
import { ChartWithTable } from '@/components/charts/Chart';
import { variantColors } from '@/components/charts/colors';
import { buildJmhTables, jmhBars } from '../runModel';
import { useRunStats } from './useRunStats';

/**
 * X-Ray shape: per JMH mode, each benchmark's score per variant and its difference to the reference
 * in the score's unit and in added µs per operation; the chart's error bars are the 99.9% errors JMH
 * reports for each variant's difference (the two errors added in quadrature).
 */
export function JmhTables({
  run,
  reference,
  scenarios,
}: {
  run: RunDetail;
  reference: VariantOut;
  scenarios: string[];
}): ReactElement {
  const stats = useRunStats(run, reference, ['score']);
  const tables = buildJmhTables(run, reference, scenarios, stats);
  const color = variantColors(run.variants.map((v) => v.name));
  const others = run.variants.filter((v) => v.id !== reference.id);
  const single = others.length === 0;
  return (
    <section aria-labelledby="jmh-h">
      <h2 id="jmh-h">{single ? 'Microbenchmarks' : `Microbenchmarks: difference to ${reference.name}`}</h2>
      <p className="muted legend">
        {single ? (
          <>Each benchmark&apos;s score and JMH&apos;s 99.9% error, per mode; a run with a second variant shows the difference.</>
        ) : (
          <>
            Each cell: {reference.name} / variant / diff in the score&apos;s unit; below it Δ%, the added µs per operation,
            the API&apos;s 95% interval of the diff and its verdict. <span className="sig">●</span> when the interval
            excludes 0.
          </>
        )}
        {tables[0]?.pkg ? (
          <>
            {' '}
            Every benchmark is in <code>{tables[0].pkg.slice(0, -1)}</code>.
          </>
        ) : null}
      </p>
      {tables.map(({ mode, unit, table }) => (
        <ChartWithTable
          key={mode}
          chart={{
            title: table.title,
            data: jmhBars(table, reference, others).map((b) => ({
              type: 'bar' as const,
              orientation: 'h' as const,
              name: b.name,
              marker: { color: color(b.variant) },
              y: b.y,
              x: b.x,
              error_x: { type: 'data' as const, visible: true, array: b.error, thickness: 1, width: 3 },
            })),
            xTitle: single ? `score (${unit}), ± JMH error` : `difference (${unit}), ± JMH error`,
            yType: 'category',
            height: Math.max(260, 80 + table.rows.length * 22 * Math.max(1, others.length)),
            filename: `${run.slug}-jmh-${mode}`,
          }}
          table={table}
          stacked
          fit
        />
      ))}
      {/* The server draws each variant's score (± nothing: the raw scores) of every benchmark and mode. */}
      <ChartImageLinks path={`/api/v1/runs/${run.slug}/charts/score`} alt={`JMH scores of run ${run.slug}`} />
    </section>
  );
}
