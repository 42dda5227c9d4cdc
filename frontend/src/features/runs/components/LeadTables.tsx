import type { ReactElement } from 'react';
import type { LoadOut, RunDetail, VariantOut } from '@/api/client';
import { DataTable } from '@/components/DataTable';
import { ExportButtons } from '@/components/ExportButtons';
import { loadTitle } from '@/lib/cells';
import type { PercentileKey } from '@/lib/metrics';
import { processMetrics } from '../processColumns';
import { buildLeadTable, leadMetrics } from '../runModel';
import { useRunStats } from './useRunStats';

/**
 * EaseAgent shape, the run page's lead: per load level a row per scenario and per metric one cell
 * "reference / variant / diff", with Δ%, the API's interval of the diff and its verdict below.
 */
export function LeadTables({
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
  const metrics = leadMetrics(percentile)
    .map((m) => m.metric)
    .filter((m) => run.cells.some((c) => typeof (c as unknown as Record<string, unknown>)[m] === 'number'));
  const stats = useRunStats(run, reference, [...new Set([...metrics, ...processMetrics(run)])]);
  return (
    <section aria-labelledby="lead-h">
      <h2 id="lead-h">
        {reference.name} vs {variant.name} per load level
      </h2>
      <p className="muted legend">
        Each cell: {reference.name} / {variant.name} / diff ({variant.name} − {reference.name}); below it Δ%, the
        diff over repetitions (the mean of each repetition&apos;s value) with its 95% interval, and the verdict.{' '}
        <span className="sig">●</span> and colour only when the interval excludes 0: red worse, green better for the
        metric. A verdict that does not hold once every cell of its metric is counted (Benjamini-Hochberg adjusted p ≥
        0.05) says &quot;not significant over N cells&quot;. Process metrics (CPU, heap, RSS) are measured once per load
        level and span its scenarios.
      </p>
      {loads.map((load) => {
        const model = buildLeadTable(run, { load, reference, variant, percentile, scenarios, stats });
        return (
          <section key={load.id} className="load-block" aria-label={loadTitle(load)}>
            <div className="block-head">
              <h3>{loadTitle(load)}</h3>
              <ExportButtons model={model} filename={`${run.slug}-${load.key}-${reference.name}-vs-${variant.name}`} />
            </div>
            <DataTable model={model} fit />
          </section>
        );
      })}
    </section>
  );
}
