/**
 * The only module that imports Plotly. It is loaded on demand (see ./Chart.tsx), so pages without
 * charts, and the first paint of pages with them, do not pay for the ~540 kB gzip bundle.
 */
import Plotly from 'plotly.js-cartesian-dist-min';
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
  xType?: 'linear' | 'log' | 'category';
  height?: number;
  /** File name (without extension) of the PNG export. */
  filename: string;
  xRange?: Range | null;
  xTicks?: { values: number[]; labels: string[] };
  onXRangeChange?: (range: Range | null) => void;
}

export function PlotlyChart(props: PlotlyChartProps): ReactElement {
  const graph = useRef<PlotlyHTMLElement | null>(null);
  const { onXRangeChange } = props;

  const layout: Partial<Layout> = {
    title: { text: props.title, font: { size: 14 } },
    height: props.height ?? 320,
    margin: { l: 60, r: 20, t: 40, b: 50 },
    xaxis: {
      title: { text: props.xTitle ?? '' },
      type: props.xType,
      ...(props.xTicks ? { tickvals: props.xTicks.values, ticktext: props.xTicks.labels } : {}),
      ...(props.xRange ? { range: [props.xRange[0], props.xRange[1]], autorange: false } : { autorange: true }),
    },
    yaxis: { title: { text: props.yTitle ?? '' }, rangemode: 'tozero' },
    legend: { orientation: 'h', y: -0.25 },
    hovermode: 'x unified',
  };

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
      />
    </div>
  );
}
