import type { ReactElement } from 'react';
import type { LoadOut, RunDetail, VariantOut } from '@/api/client';
import { DataTable } from '@/components/DataTable';
import { ExportButtons } from '@/components/ExportButtons';
import type { PercentileKey } from '@/lib/metrics';
import { buildBreakdown, loadTitle } from '@/lib/runModel';

/** EaseAgent shape: per load level, each scenario's reference / variant / diff for CPU, memory, latency, throughput, errors. */
export function LoadBreakdown({
  run,
  loads,
  reference,
  variant,
  percentile,
  scenarios,
}: {
  run: RunDetail;
  loads: LoadOut[];
  reference: VariantOut;
  variant: VariantOut;
  percentile: PercentileKey;
  scenarios: string[];
}): ReactElement {
  return (
    <section aria-labelledby="breakdown-h">
      <h2 id="breakdown-h">
        {reference.name} vs {variant.name} per load level
      </h2>
      <p className="muted">
        diff = {variant.name} − {reference.name}; Δ% relative to {reference.name}. Red marks a
        change for the worse, green for the better, by each metric's direction (higher throughput is better, higher
        latency is worse).
      </p>
      {loads.map((load) => {
        const model = buildBreakdown(run, { load, reference, variant, percentile, scenarios });
        return (
          <section key={load.id} className="load-block" aria-label={loadTitle(load)}>
            <h3>{loadTitle(load)}</h3>
            <ExportButtons model={model} filename={`${run.slug}-${load.key}-${reference.name}-vs-${variant.name}`} />
            <DataTable model={model} />
          </section>
        );
      })}
    </section>
  );
}
