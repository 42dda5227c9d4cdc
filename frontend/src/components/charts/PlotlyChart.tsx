/**
 * The only module that imports Plotly. It is loaded on demand (see ./Chart.tsx), so pages without
 * charts, and the first paint of pages with them, do not pay for the ~540 kB gzip bundle.
 */
import Plotly from 'plotly.js-basic-dist-min';
import type { Data, Layout, PlotlyHTMLElement } from 'plotly.js';
import createPlotlyComponent from 'react-plotly.js/factory';
import { useCallback, useRef, type ReactElement } from 'react';
import type { Range } from '@/lib/urlState';

const Plot = createPlotlyComponent(Plotly);

export interface PlotlyChartProps {
  title: string;
  data: Data[];
  xTitle?: string;
  yTitle?: string;
  xType?: 'linear' | 'log' | 'category' | 'date';
  /** 'category' for horizontal bars: their labels are drawn in full (automargin). */
  yType?: 'linear' | 'category';
  height?: number;
  /** File name (without extension) of the PNG export. */
  filename: string;
  xRange?: Range | null;
  xTicks?: { values: number[]; labels: string[] };
  onXRangeChange?: (range: Range | null) => void;
  /** Vertical lines across the plot with a title on top (annotations, change points). */
  markers?: readonly VerticalMarker[];
  /** Called with the clicked point's customdata (e.g. its run slug). */
  onPointClick?: (customdata: unknown) => void;
  /** A flame graph (see ./flame.ts): overlaid horizontal bars, the root on top, one hover per frame. */
  flame?: boolean;
}

export interface VerticalMarker {
  x: number | string;
  title: string;
  color?: string;
  dash?: 'solid' | 'dot' | 'dash';
}

export function PlotlyChart(props: PlotlyChartProps): ReactElement {
  const graph = useRef<PlotlyHTMLElement | null>(null);
  const { onXRangeChange, onPointClick } = props;
  const markers = props.markers ?? [];

  const layout: Partial<Layout> = {
    title: { text: props.title, font: { size: 14 }, y: 0.99, yanchor: 'top' },
    height: props.height ?? 320,
    // Horizontal bars keep their legend between the title and the plot: below, it ran over the table.
    margin: { l: 60, r: 20, t: props.yType === 'category' ? 75 : 40, b: 50 },
    barmode: 'group',
    xaxis: {
      title: { text: props.xTitle ?? '' },
      type: props.xType,
      automargin: true,
      // Named ticks place points by their position (0, 1, 2...): a line at 0 would mark the first one.
      ...(props.xTicks ? { tickvals: props.xTicks.values, ticktext: props.xTicks.labels, zeroline: false } : {}),
      ...(props.xRange ? { range: [props.xRange[0], props.xRange[1]], autorange: false } : { autorange: true }),
    },
    yaxis:
      props.yType === 'category'
        ? { type: 'category', automargin: true, title: { text: props.yTitle ?? '' } }
        : { title: { text: props.yTitle ?? '' }, rangemode: 'tozero', automargin: true },
    legend:
      props.yType === 'category'
        ? { orientation: 'h', x: 0, y: 1, yanchor: 'bottom', traceorder: 'reversed' }
        : // At the foot of the chart, not of the plot: the plot gives way to it as it wraps into rows, where one
          // placed under the plot (y -0.25) ran over the axis title once it took two rows.
          { orientation: 'h', x: 0, xref: 'container', y: 0, yref: 'container', yanchor: 'bottom' },
    hovermode: onPointClick || props.flame ? 'closest' : props.yType === 'category' ? 'y unified' : 'x unified',
    shapes: markers.map((m) => ({
      type: 'line' as const,
      xref: 'x' as const,
      yref: 'paper' as const,
      x0: m.x,
      x1: m.x,
      y0: 0,
      y1: 1,
      line: { color: m.color ?? '#8a94a6', width: 1, dash: m.dash ?? 'dot' },
    })),
    annotations: markers.map((m) => ({
      x: m.x,
      xref: 'x' as const,
      yref: 'paper' as const,
      y: 1,
      yanchor: 'bottom' as const,
      text: m.title,
      showarrow: false,
      font: { size: 10, color: m.color ?? '#5b6472' },
    })),
  };

  if (props.flame) {
    Object.assign(layout, {
      barmode: 'overlay',
      bargap: 0,
      showlegend: false,
      margin: { l: 40, r: 10, t: 40, b: 40 },
      yaxis: { autorange: 'reversed', title: { text: props.yTitle ?? '' }, zeroline: false, dtick: 5 },
    });
  }

  const onClick = useCallback(
    (event: Readonly<{ points?: readonly { customdata?: unknown }[] }>) => {
      const point = event.points?.[0];
      if (onPointClick && point && point.customdata !== undefined) onPointClick(point.customdata);
    },
    [onPointClick],
  );

  const onRelayout = useCallback(
    (event: Readonly<Record<string, unknown>>) => {
      if (!onXRangeChange) return;
      if (event['xaxis.autorange']) onXRangeChange(null);
      const lo = event['xaxis.range[0]'];
      const hi = event['xaxis.range[1]'];
      if (typeof lo === 'number' && typeof hi === 'number') onXRangeChange([lo, hi]);
    },
    [onXRangeChange],
  );

  const exportPng = (): void => {
    if (graph.current) {
      void Plotly.downloadImage(graph.current, { format: 'png', filename: props.filename, width: 1200, height: 600 });
    }
  };

  return (
    <div className="chart">
      <div className="chart-tools">
        <button type="button" onClick={exportPng}>
          Download PNG
        </button>
      </div>
      <Plot
        data={props.data}
        layout={layout}
        config={{ displaylogo: false, responsive: true }}
        style={{ width: '100%' }}
        useResizeHandler
        onInitialized={(_, gd) => {
          graph.current = gd as PlotlyHTMLElement;
        }}
        onUpdate={(_, gd) => {
          graph.current = gd as PlotlyHTMLElement;
        }}
        onRelayout={onRelayout as never}
        onClick={onClick as never}
      />
    </div>
  );
}
