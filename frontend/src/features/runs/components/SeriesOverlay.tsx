import { useQuery } from '@tanstack/react-query';
import type { ReactElement } from 'react';
import type { LoadOut, RunDetail } from '@/api/client';
import { ChartImageLinks } from '@/components/ChartImageLinks';
import { ChartWithTable } from '@/components/charts/Chart';
import { variantColors } from '@/components/charts/colors';
import { ErrorState, Loading } from '@/components/StateViews';
import { breakAtGaps, seriesOverlay } from '../chartData';
import { metricInfo } from '@/lib/metrics';
import { ALL_SCENARIOS } from '@/lib/cells';
import type { Range } from '@/lib/urlState';
import { seriesQuery } from '../api/queries';

/** Each series metric with all variants on one chart per load level (the seed's per-thread-group images, but live). */
export function SeriesOverlay({
  run,
  loads,
  metric,
  onMetric,
  scenarios,
  range,
  onRange,
}: {
  run: RunDetail;
  loads: LoadOut[];
  metric: string;
  onMetric: (metric: string) => void;
  scenarios: string[];
  range: Range | null;
  onRange: (range: Range | null) => void;
}): ReactElement | null {
  const all = useQuery(seriesQuery(run.slug, null));
  if (all.isPending) return <Loading what="time series" />;
  if (all.error) return <ErrorState error={all.error} what="time series" />;
  const metrics = [...new Set(all.data.items.map((s) => s.metric))];
  if (metrics.length === 0) return null;
  const chosen = metrics.includes(metric) ? metric : metrics[0];
  // Series of the whole load level have no scenario; per-scenario series follow the scenario selection.
  const ids = run.scenarios
    .filter((s) => (scenarios.length ? scenarios.includes(s.name) : s.name === ALL_SCENARIOS))
    .map((s) => s.id);
  const scenarioIds = [null, ...ids];
  const color = variantColors(run.variants.map((v) => v.name));
  const info = metricInfo(chosen);
  return (
    <section aria-labelledby="series-h">
      <h2 id="series-h">Over time: all variants per load level</h2>
      <label>
        Series metric{' '}
        <select value={chosen} onChange={(e) => onMetric(e.target.value)}>
          {metrics.map((m) => (
            <option key={m} value={m}>
              {metricInfo(m).title}
            </option>
          ))}
        </select>
      </label>{' '}
      {range ? (
        <button type="button" onClick={() => onRange(null)}>
          Reset zoom
        </button>
      ) : null}
      <div className="grid">
        {loads.map((load) => {
          const model = seriesOverlay(run, all.data.items, load.id, chosen, scenarioIds);
          if (model.traces.length === 0) return null;
          return (
            <div key={load.id}>
              <ChartWithTable
                chart={{
                  title: model.table.title,
                  data: model.traces.map((t) => ({
                    type: 'scatter',
                    mode: 'lines+markers',
                    name: t.name,
                    ...breakAtGaps(t),
                    line: { color: color(t.variant ?? t.name), width: 1.5 },
                    marker: { color: color(t.variant ?? t.name), size: 4 },
                  })),
                  xTitle: 'seconds since the load level started',
                  yTitle: `${info.title}${info.unit ? ` (${info.unit})` : ''}`,
                  filename: `${run.slug}-${load.key}-${chosen}`,
                  xRange: range,
                  onXRangeChange: onRange,
                }}
                table={model.table}
              />
              <ChartImageLinks
                path={`/api/v1/runs/${run.slug}/charts/series`}
                query={`metric=${encodeURIComponent(chosen)}&load=${load.id}`}
                alt={`${info.title} over time of run ${run.slug} at ${load.label}`}
              />
            </div>
          );
        })}
      </div>
    </section>
  );
}
