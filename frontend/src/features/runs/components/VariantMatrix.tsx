import type { ReactElement } from 'react';
import type { RunDetail, VariantOut } from '@/api/client';
import { ChartImageLinks } from '@/components/ChartImageLinks';
import { ChartWithTable } from '@/components/charts/Chart';
import { variantColors } from '@/components/charts/colors';
import { matrixMetrics, metricInfo } from '@/lib/metrics';
import { buildMatrix } from '../runModel';
import { useRunStats } from './useRunStats';

export const MATRIX_METRICS: readonly string[] = matrixMetrics();

/** Easegress shape: every variant side by side for each scenario × load, with its ratio to the reference. */
export function VariantMatrix({
  run,
  reference,
  metric,
  onMetric,
  scenarios,
  loads,
}: {
  run: RunDetail;
  reference: VariantOut;
  metric: string;
  onMetric: (metric: string) => void;
  scenarios: string[];
  loads: string[];
}): ReactElement {
  const available = MATRIX_METRICS.filter((m) =>
    run.cells.some((c) => typeof (c as unknown as Record<string, unknown>)[m] === 'number'),
  );
  const stats = useRunStats(run, reference, [metric]);
  const model = buildMatrix(run, { metric, reference, scenarios, loads, stats });
  const info = metricInfo(metric);
  const color = variantColors(run.variants.map((v) => v.name));
  const variants = [reference, ...run.variants.filter((v) => v.id !== reference.id)];
  // Horizontal bars: the full "scenario · load" label stays readable however many rows there are;
  // the first row on top, as in the table.
  const labels = model.rows.map((r) => `${r.values.scenario} · ${r.values.load}`).reverse();
  const valueOf = (v: VariantOut, values: (typeof model.rows)[number]['values']): number | null => {
    const x = v.id === reference.id ? values[`${v.id}.value`] : values[`${v.id}.cmp`];
    if (typeof x === 'number') return x;
    return x && typeof x === 'object' ? x.variant : null;
  };
  const data = [...variants].reverse().map((v) => ({
    type: 'bar' as const,
    orientation: 'h' as const,
    name: v.name,
    marker: { color: color(v.name) },
    y: labels,
    x: [...model.rows].reverse().map((r) => valueOf(v, r.values)),
  }));
  return (
    <section aria-labelledby="matrix-h">
      <h2 id="matrix-h">All variants × scenario × load</h2>
      <label>
        Metric{' '}
        <select value={metric} onChange={(e) => onMetric(e.target.value)}>
          {available.map((m) => (
            <option key={m} value={m}>
              {metricInfo(m).title}
            </option>
          ))}
        </select>
      </label>
      <ChartWithTable
        chart={{
          title: model.title,
          data,
          xTitle: `${info.title}${info.unit ? ` (${info.unit})` : ''}`,
          yType: 'category',
          height: Math.max(260, 90 + model.rows.length * variants.length * 16),
          filename: `${run.slug}-matrix-${metric}`,
        }}
        table={model}
        stacked
        fit
      />
      {metric !== 'error_rate' ? (
        // The server draws every scenario and load level of the run for this metric.
        <ChartImageLinks path={`/api/v1/runs/${run.slug}/charts/${metric}`} alt={`${info.title} of run ${run.slug}`} />
      ) : null}
    </section>
  );
}
