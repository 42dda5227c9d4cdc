import { useQuery } from '@tanstack/react-query';
import type { ReactElement } from 'react';
import type { LoadOut, RunDetail } from '@/api/client';
import { ChartImageLinks } from '@/components/ChartImageLinks';
import { ChartWithTable } from '@/components/charts/Chart';
import { variantColors } from '@/components/charts/colors';
import { ErrorState, Loading } from '@/components/StateViews';
import { percentileSpectrum, tailX } from '../chartData';
import { ALL_SCENARIOS } from '@/lib/cells';
import { percentilesQuery } from '../api/queries';

const TICKS = [0, 50, 75, 90, 99, 99.9, 99.99];

/** The whole latency distribution of every variant, with the tail stretched out (x = 1/(1−p)). */
export function PercentileSpectrum({
  run,
  loads,
  scenarios,
}: {
  run: RunDetail;
  loads: LoadOut[];
  scenarios: string[];
}): ReactElement | null {
  const spectrum = useQuery(percentilesQuery(run.slug));
  if (!run.cells.some((c) => c.has_histogram)) return null;
  if (spectrum.isPending) return <Loading what="latency percentiles" />;
  if (spectrum.error) return <ErrorState error={spectrum.error} what="latency percentiles" />;
  const color = variantColors(run.variants.map((v) => v.name));
  const hasAll = run.scenarios.some((s) => s.name === ALL_SCENARIOS);
  const names = scenarios.length
    ? scenarios
    : hasAll
      ? [ALL_SCENARIOS]
      : run.scenarios.map((s) => s.name);
  return (
    <section aria-labelledby="spectrum-h">
      <h2 id="spectrum-h">Latency percentile spectrum</h2>
      <div className="grid">
        {loads.map((load) => {
          const model = percentileSpectrum(run, spectrum.data.items, load.id, names);
          if (model.traces.length === 0) return null;
          return (
            <div key={load.id}>
              <ChartWithTable
                chart={{
                  title: model.table.title,
                  data: model.traces.map((t) => ({
                    type: 'scatter',
                    mode: 'lines',
                    name: t.name,
                    line: { color: color(t.variant ?? t.name) },
                    x: t.x.map(tailX),
                    y: t.y,
                    customdata: t.x,
                    hovertemplate: 'P%{customdata}: %{y:.3f} ms<extra>%{fullData.name}</extra>',
                  })),
                  xType: 'log',
                  xTicks: { values: TICKS.map(tailX), labels: TICKS.map((p) => `P${p}`) },
                  xTitle: 'percentile',
                  yTitle: 'latency (ms)',
                  filename: `${run.slug}-${load.key}-spectrum`,
                }}
                table={model.table}
              />
              <ChartImageLinks
                path={`/api/v1/runs/${run.slug}/charts/percentiles`}
                query={`load=${load.id}`}
                alt={`latency percentile spectrum of run ${run.slug} at ${load.label}`}
              />
            </div>
          );
        })}
      </div>
    </section>
  );
}
