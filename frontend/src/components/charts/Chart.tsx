import { lazy, Suspense, type ReactElement } from 'react';
import type { TableModel } from '@/lib/table';
import { DataTable } from '../DataTable';
import { ExportButtons } from '../ExportButtons';
import type { PlotlyChartProps } from './PlotlyChart';

const loadPlotly = () => import('./PlotlyChart');
const LazyPlotlyChart = lazy(() => loadPlotly().then((m) => ({ default: m.PlotlyChart })));

/** Starts fetching the Plotly chunk now, e.g. while a page still waits for its data. */
export function preloadCharts(): void {
  void loadPlotly();
}

export type ChartProps = PlotlyChartProps;

/** What stands in a chart's place until it can be drawn: a box of the chart's default height, so that nothing below
 * it moves when the chart appears (a click aimed at a row below would land elsewhere). */
export function ChartLoading({ what = 'chart' }: { what?: string }): ReactElement {
  return <div className="chart-loading" role="status">Loading {what}…</div>;
}

export function Chart(props: ChartProps): ReactElement {
  return (
    <Suspense fallback={<ChartLoading />}>
      <LazyPlotlyChart {...props} />
    </Suspense>
  );
}

/** Every chart comes with a table of the same numbers, for reading exact values and for screen readers. */
export function ChartWithTable({
  chart,
  table,
  stacked = false,
  pageSize,
  fit = false,
  firstPage = false,
}: {
  chart: ChartProps;
  table: TableModel;
  /** Long tables (a history of thousands of runs) show a page of rows at a time. */
  pageSize?: number;
  /** The table fits the page width (cells wrap), for the seeds' lead tables. */
  fit?: boolean;
  /** Wide tables go under the chart instead of beside it. */
  stacked?: boolean;
  /** A paged table opens on its first page (a ranking) instead of its last (a history). */
  firstPage?: boolean;
}): ReactElement {
  return (
    <figure className={stacked ? 'chart-with-table stacked' : 'chart-with-table'} aria-label={chart.title}>
      <Chart {...chart} />
      <div className="chart-table" tabIndex={stacked ? undefined : 0} aria-label={`${table.title}: table`} role="group">
        <ExportButtons model={table} filename={chart.filename} />
        <DataTable model={table} pageSize={pageSize} fit={fit} firstPage={firstPage} />
      </div>
    </figure>
  );
}
