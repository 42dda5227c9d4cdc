import { useQueries, useQuery } from '@tanstack/react-query';
import type { ReactElement } from 'react';
import { Link, useParams } from 'react-router';
import { ChartLoading, ChartWithTable } from '@/components/charts/Chart';
import { ErrorState } from '@/components/StateViews';
import { distinguishingNames, overviewMetric, overviewTrails, pointLabel, thinTicks } from '../historyModel';
import { variantColors } from '@/components/charts/colors';
import { metricInfo } from '@/lib/metrics';
import type { Column, Row, TableModel } from '@/lib/table';
import { analysisSettingsQuery, historySeriesQuery, trailsQuery } from '../api/queries';

/** The project page's glance: each key overhead (variant − reference, %) across agent versions. */
export function OverheadTrend(): ReactElement | null {
  const { slug = '' } = useParams();
  const trails = useQuery(trailsQuery(slug));
  const settings = useQuery(analysisSettingsQuery(slug));
  const all = trails.data?.items ?? [];
  const analysed = (settings.data?.analysis.metrics as string[] | undefined) ?? ['latency_p75'];
  const metric = overviewMetric(all, analysed);
  const picked = overviewTrails(all);
  const series = useQueries({ queries: picked.map((t) => historySeriesQuery(t.id, metric, 'overhead')) });

  const heading = <h2 id="trend-h">Overhead trend</h2>;
  // Until the chart is drawn, a box of its height holds its place: the runs table below it stays where it is.
  if (trails.isPending) return <section aria-labelledby="trend-h">{heading}<ChartLoading what="trails" /></section>;
  if (trails.error) return <section aria-labelledby="trend-h">{heading}<ErrorState error={trails.error} what="trails" /></section>;
  if (picked.length === 0) {
    return (
      <section aria-labelledby="trend-h">
        {heading}
        <p className="muted">The overhead trend appears once two runs share an environment, scenario and load level.</p>
      </section>
    );
  }
  if (series.some((q) => q.isPending)) return <section aria-labelledby="trend-h">{heading}<ChartLoading what="overheads" /></section>;
  const failed = series.find((q) => q.error);
  if (failed) return <section aria-labelledby="trend-h">{heading}<ErrorState error={failed.error} what="overheads" /></section>;

  const lines = picked
    .map((t, i) => ({ trail: t, s: series[i].data! }))
    .filter((l) => l.s.points.length > 0);
  const info = metricInfo(metric);
  // Versions as the API orders them, merged across trails in first-seen order.
  const versions: string[] = [];
  for (const l of lines) for (const p of l.s.points) if (!versions.includes(pointLabel(p, 'version'))) versions.push(pointLabel(p, 'version'));
  const names = distinguishingNames(lines.map((l) => l.trail));
  const columns: Column[] = [
    { key: 'x', label: 'Agent version', role: 'label' },
    ...names.map((n, i): Column => ({ key: `t${i}`, label: n, role: 'percent', direction: lines[i].s.direction })),
  ];
  // The latest run of a version stands for it in the glance.
  const latest = (i: number, v: string) => {
    const pts = lines[i].s.points.filter((p) => pointLabel(p, 'version') === v);
    return pts.length ? pts[pts.length - 1] : undefined;
  };
  const rows: Row[] = versions.map((v) => {
    const values: Row['values'] = { x: v };
    lines.forEach((_, i) => {
      values[`t${i}`] = latest(i, v)?.value ?? null;
    });
    return { id: v, values };
  });
  const title = `${info.title} overhead vs the reference (%), 95% interval as error bars`;
  const table: TableModel = { title, columns, rows };
  const color = variantColors([...new Set(picked.map((t) => t.variant))].sort());
  const dashes = ['solid', 'dot', 'dash', 'dashdot', 'longdash'] as const;
  return (
    <section aria-labelledby="trend-h">
      {heading}
      {lines.length === 0 ? (
        <p className="muted">No run of this project has a reference variant to measure an overhead against.</p>
      ) : (
        <ChartWithTable
          chart={{
            title,
            data: names.map((name, i) => {
              const pts = versions.map((v) => latest(i, v));
              return {
                type: 'scatter' as const,
                mode: 'lines+markers' as const,
                name,
                x: versions.map((_, j) => j),
                y: pts.map((p) => p?.value ?? null),
                line: { color: color(lines[i].trail.variant), dash: dashes[i % dashes.length] },
                marker: { color: color(lines[i].trail.variant) },
                error_y: {
                  type: 'data' as const,
                  symmetric: false,
                  visible: true,
                  array: pts.map((p) => (p?.ci_high_pct != null ? p.ci_high_pct - p.value : 0)),
                  arrayminus: pts.map((p) => (p?.ci_low_pct != null ? p.value - p.ci_low_pct : 0)),
                  thickness: 1,
                  width: 3,
                },
              };
            }),
            xTitle: 'Agent version',
            yTitle: '% of the reference',
            xTicks: thinTicks(versions),
            height: 320,
            filename: `${slug}-overhead-trend-${metric}`,
          }}
          table={table}
        />
      )}
      <p>
        <Link to={`/p/${encodeURIComponent(slug)}/history?kind=overhead${metric === 'score' ? '&metric=score' : ''}`}>
          Every trail and overhead in History
        </Link>
      </p>
    </section>
  );
}
