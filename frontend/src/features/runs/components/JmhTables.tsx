import type { ReactElement } from 'react';
import type { RunDetail, VariantOut } from '@/api/client';
import { ChartWithTable } from '@/components/charts/Chart';
import { buildJmhTables } from '@/lib/runModel';

/** X-Ray shape: per JMH mode, each benchmark's score per variant and its difference to the reference in the score's unit. */
export function JmhTables({
  run,
  reference,
  scenarios,
}: {
  run: RunDetail;
  reference: VariantOut;
  scenarios: string[];
}): ReactElement {
  const tables = buildJmhTables(run, reference, scenarios);
  return (
    <section aria-labelledby="jmh-h">
      <h2 id="jmh-h">Microbenchmarks: difference to {reference.name}</h2>
      {tables.map(({ mode, unit, table }) => {
        const others = run.variants.filter((v) => v.id !== reference.id);
        const data = others.map((v) => ({
          type: 'bar' as const,
          orientation: 'h' as const,
          name: `${v.name} − ${reference.name}`,
          y: table.rows.map((r) => String(r.values.scenario)),
          x: table.rows.map((r) => (typeof r.values[`${v.id}.diff`] === 'number' ? (r.values[`${v.id}.diff`] as number) : null)),
        }));
        return (
          <ChartWithTable
            key={mode}
            chart={{
              title: table.title,
              data,
              xTitle: `difference (${unit})`,
              height: Math.max(300, 60 + table.rows.length * 28 * Math.max(1, others.length)),
              filename: `${run.slug}-jmh-${mode}`,
            }}
            table={table}
            stacked
          />
        );
      })}
    </section>
  );
}
