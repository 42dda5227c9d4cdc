import type { ReactElement } from 'react';
import type { RunDetail, VariantOut } from '@/api/client';
import { ChartWithTable } from '@/components/charts/Chart';
import { metricInfo } from '@/lib/metrics';
import { buildMatrix } from '@/lib/runModel';

export const MATRIX_METRICS = [
  'throughput',
  'latency_p50',
  'latency_p75',
  'latency_p90',
  'latency_p99',
  'latency_mean',
  'error_rate',
  'cpu_pct',
  'rss_mb',
  'heap_mb',
] as const;

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
  const model = buildMatrix(run, { metric, reference, scenarios, loads });
  const info = metricInfo(metric);
  const variantCols = model.columns.filter((c) => c.role === 'reference' || c.role === 'variant');
  const data = variantCols.map((c) => ({
    type: 'bar' as const,
    name: c.label,
    x: model.rows.map((r) => `${r.values.scenario} @ ${r.values.load}`),
    y: model.rows.map((r) => (typeof r.values[c.key] === 'number' ? (r.values[c.key] as number) : null)),
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
          yTitle: `${info.title}${info.unit ? ` (${info.unit})` : ''}`,
          xType: 'category',
          filename: `${run.slug}-matrix-${metric}`,
        }}
        table={model}
      />
    </section>
  );
}
