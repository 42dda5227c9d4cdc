import { useQuery } from '@tanstack/react-query';
import type { Data } from 'plotly.js';
import type { ReactElement } from 'react';
import { Link, useNavigate } from 'react-router';
import { trailMetric, type AnnotationOut, type TrailOut } from '@/api/client';
import { ChartImageLinks } from '@/components/ChartImageLinks';
import { ChartWithTable } from '@/components/charts/Chart';
import { FreezeButton } from '@/components/FreezeButton';
import { Empty, ErrorState, Loading } from '@/components/StateViews';
import { metricInfo } from '@/lib/metrics';
import {
  annotationMarkers,
  changePointMarkers,
  historyTable,
  orderPoints,
  placePoints,
  pointLabel,
  trailTitle,
  type HistoryAxis,
  type HistoryKind,
} from '../historyModel';
import { historySeriesQuery } from '../api/queries';

/** One trail (or its overhead) across runs; change points, alerts and annotations marked; a point opens its run. */
export function TrailChart({
  project,
  trail,
  metric,
  kind,
  axis,
  annotations,
  height,
  heading,
  color = '#4c78a8',
}: {
  project: string;
  trail: TrailOut;
  metric: string;
  kind: HistoryKind;
  axis: HistoryAxis;
  annotations: readonly AnnotationOut[];
  height?: number;
  heading: string;
  /** The variant's colour on this page. */
  color?: string;
}): ReactElement {
  const navigate = useNavigate();
  const { data: series, error, isPending } = useQuery(historySeriesQuery(trail.id, metric, kind));
  const label = trail.load_label && trail.load_label !== '—' ? trail.load_label : 'single load level';
  let body: ReactElement;
  if (isPending) body = <Loading what={`the ${kind === 'overhead' ? 'overhead ' : ''}trail`} />;
  else if (error) body = <ErrorState error={error} what="this trail" />;
  else if (series.points.length === 0) {
    body =
      kind === 'overhead' ? (
        <Empty title={`No overhead for ${trail.variant}.`}>
          <p>
            Overheads are measured against the run's reference variant; {trail.variant} is the reference here or has no
            matching reference cell. Pick another variant above.
          </p>
        </Empty>
      ) : (
        <Empty title={`No ${metric} values on this trail.`}>
          <p>The runs on this trail do not carry this metric; pick another metric above.</p>
        </Empty>
      );
  } else {
    const points = orderPoints(series.points, axis);
    const placed = placePoints(points, axis);
    const at = (run: string): number | string => placed.x[points.findIndex((p) => p.run === run)];
    const title = trailTitle(trail, series);
    const table = historyTable(title, series, axis);
    const cps = series.changePoints.filter((c) => points.some((p) => p.run === c.run));
    const alerted = series.alerts.filter((a) => points.some((p) => p.run === a.run));
    const many = points.length > 300;
    const errors = kind === 'trail' && points.some((p) => p.error != null) ? points.map((p) => p.error ?? 0) : null;
    // Beyond a thousand runs the line carries the points (hover and click still find the nearest run)
    // and only invalid runs get a marker: thousands of SVG markers are most of the drawing time.
    const lineOnly = points.length > 1000;
    const data: Data[] = [
      {
        type: 'scatter',
        mode: lineOnly ? 'lines' : 'lines+markers',
        name: kind === 'overhead' ? `${trail.variant} − ${series.referenceVariant ?? 'reference'}` : trail.variant,
        x: placed.x,
        y: points.map((p) => p.value),
        // Hover text from customdata, drawn only on hover: per-point text labels make Plotly measure
        // every label at draw time (a minute-long freeze at 1,500 points).
        customdata: points.map((p) => [p.run, `${pointLabel(p, 'version')}${p.is_valid ? '' : ' (invalid)'}`]) as unknown as string[],
        hovertemplate: '%{customdata[1]} · run %{customdata[0]}<br>%{y}<extra></extra>',
        line: { color, width: many ? 1 : 2 },
        marker: { size: many ? 4 : 9, color: points.map((p) => (p.is_valid ? color : '#b9c0cb')) },
        ...(errors ? { error_y: { type: 'data' as const, array: errors, visible: true, color, thickness: 1, width: 3 } } : {}),
      },
    ];
    if (lineOnly && points.some((p) => !p.is_valid)) {
      const invalid = points.map((p, i) => [p, i] as const).filter(([p]) => !p.is_valid);
      data.push({
        type: 'scatter',
        mode: 'markers',
        name: 'invalid run',
        x: invalid.map(([, i]) => placed.x[i]),
        y: invalid.map(([p]) => p.value),
        customdata: invalid.map(([p]) => p.run),
        hovertemplate: 'invalid run %{customdata}<br>%{y}<extra></extra>',
        marker: { size: 6, color: '#b9c0cb' },
      });
    }
    if (kind === 'overhead' && points.some((p) => p.ci_low_pct != null)) {
      // The 95% interval of each overhead as a band (lower edge, then the upper edge filled down to it).
      const band = { type: 'scatter' as const, mode: 'lines' as const, x: placed.x, hoverinfo: 'skip' as const, line: { width: 0, color } };
      data.push(
        { ...band, name: '95% interval', showlegend: false, y: points.map((p) => p.ci_low_pct ?? null) },
        { ...band, name: '95% interval', y: points.map((p) => p.ci_high_pct ?? null), fill: 'tonexty', fillcolor: 'rgba(76, 120, 168, 0.18)' },
      );
    }
    if (cps.length) {
      data.push({
        type: 'scatter',
        mode: 'markers',
        name: 'change point',
        x: cps.map((c) => at(c.run)),
        y: cps.map((c) => points.find((p) => p.run === c.run)?.value ?? null),
        customdata: cps.map((c) => c.run),
        hovertemplate: 'change point: %{customdata}<extra></extra>',
        marker: { symbol: 'diamond-open', size: 16, color: '#b42318', line: { width: 2 } },
      });
    }
    if (alerted.length) {
      data.push({
        type: 'scatter',
        mode: 'markers',
        name: 'alert',
        x: alerted.map((a) => at(a.run)),
        y: alerted.map((a) => points.find((p) => p.run === a.run)?.value ?? null),
        customdata: alerted.map((a) => a.run),
        text: alerted.map((a) => `alert #${a.id} ${a.direction} (${a.state})`),
        hovertemplate: '%{text}<extra></extra>',
        marker: { symbol: 'triangle-up', size: 13, color: '#dc6803' },
      });
    }
    const markers = [
      ...annotationMarkers(annotations, points, axis).map((m) => ({ x: m.x, title: m.title, color: '#5b6472' })),
      ...changePointMarkers(series, points, axis).map((m) => ({ x: m.x, title: m.title, color: '#b42318', dash: 'dash' as const })),
    ];
    body = (
      <ChartWithTable
        chart={{
          title,
          data,
          xTitle: axis === 'version' ? 'Agent version' : axis === 'commit' ? 'Commit' : 'Time',
          yTitle: kind === 'overhead' ? '% of the reference' : `${metric === 'score' ? 'score' : metricInfo(metric).title}${series.unit ? ` (${series.unit})` : ''}`,
          xType: placed.xType,
          xTicks: placed.ticks,
          height,
          filename: `${project}-${kind}-${trail.id}-${metric}`,
          markers,
          onPointClick: (custom) => {
            const run = Array.isArray(custom) ? custom[0] : custom;
            if (typeof run === 'string') void navigate(`/r/${encodeURIComponent(run)}`);
          },
        }}
        table={table}
        pageSize={50}
      />
    );
    body = (
      <>
        {body}
        <ChartImageLinks
          path={`/api/v1/trails/${trail.id}/chart`}
          query={new URLSearchParams({ metric, kind, limit: '20000', max_points: '5000' }).toString()}
          alt={title}
        />
        <FreezeButton target={{ history: { trail: trail.id, metric: trailMetric(metric), kind } }} />
        {cps.length ? (
          <ul aria-label="Change points against the run before them" className="muted">
            {cps.map((c) => {
              const i = points.findIndex((p) => p.run === c.run);
              const before = i > 0 ? points[i - 1].run : null;
              return before ? (
                <li key={c.run}>
                  Change point at run {c.run}:{' '}
                  <Link to={`/compare?a=${encodeURIComponent(before)}&b=${encodeURIComponent(c.run)}&metric=${encodeURIComponent(metric)}`}>
                    compare it with run {before}
                  </Link>{' '}
                  (cells, and the CPU profiles' difference when both runs were profiled)
                </li>
              ) : null;
            })}
          </ul>
        ) : null}
      </>
    );
  }
  return (
    <section aria-label={`${heading} ${label}`} className="load-block">
      <h3>{label}</h3>
      {body}
    </section>
  );
}
