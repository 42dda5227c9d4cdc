import { useQuery } from '@tanstack/react-query';
import type { ReactElement } from 'react';
import { Link } from 'react-router';
import { ChartWithTable } from '@/components/charts/Chart';
import { CopyLinkButton } from '@/components/CopyLinkButton';
import { Empty, ErrorState, Loading } from '@/components/StateViews';
import { buildRunComparison } from '../compareModel';
import { metricInfo } from '@/lib/metrics';
import { stringCodec, type Schema } from '@/lib/urlState';
import { useUrlState } from '@/lib/useUrlState';
import { compareRunQuery } from '../api/queries';

interface CompareState {
  a: string;
  b: string;
  metric: string;
}

const SCHEMA: Schema<CompareState> = { a: stringCodec(), b: stringCodec(), metric: stringCodec('latency_p75') };
const METRICS = ['latency_p50', 'latency_p75', 'latency_p90', 'latency_p99', 'latency_mean', 'throughput', 'error_rate', 'cpu_pct', 'heap_mb', 'rss_mb', 'score'];

/** Two runs cell by cell (same variant, scenario, load level, mode): what changed between versions. */
export function CompareView(): ReactElement {
  const [state, setState] = useUrlState(SCHEMA);
  const a = useQuery(compareRunQuery(state.a));
  const b = useQuery(compareRunQuery(state.b));
  if (!state.a || !state.b) {
    return (
      <Empty title="Pick two runs to compare.">
        <p>
          Open a project, tick two runs and follow “Compare”, or write the address as <code>/compare?a=RUN&amp;b=RUN</code>.
        </p>
      </Empty>
    );
  }
  if (a.isPending || b.isPending) return <Loading what="both runs" />;
  if (a.error) return <ErrorState error={a.error} what={`run '${state.a}'`} />;
  if (b.error) return <ErrorState error={b.error} what={`run '${state.b}'`} />;
  const model = buildRunComparison(a.data, b.data, state.metric);
  const info = metricInfo(state.metric);
  return (
    <section>
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link to="/">Projects</Link> / <Link to={`/p/${encodeURIComponent(a.data.project)}`}>{a.data.project}</Link> / compare
      </nav>
      <h1>
        Compare <Link to={`/r/${a.data.slug}`}>{a.data.slug}</Link> → <Link to={`/r/${b.data.slug}`}>{b.data.slug}</Link>
      </h1>
      <CopyLinkButton />
      <p className="muted">
        diff = run {b.data.slug} − run {a.data.slug}. Agent {a.data.agent_version ?? '—'} → {b.data.agent_version ?? '—'};
        environment {a.data.environment ?? '—'} → {b.data.environment ?? '—'}
        {a.data.environment !== b.data.environment ? ' (different environments: compare with care)' : ''}.
      </p>
      <label>
        Metric{' '}
        <select value={state.metric} onChange={(e) => setState({ metric: e.target.value })}>
          {METRICS.map((m) => (
            <option key={m} value={m}>
              {metricInfo(m).title}
            </option>
          ))}
        </select>
      </label>
      {model.rows.length === 0 ? (
        <Empty title="These runs have no cells in common for this metric.">
          <p>Cells match when variant, scenario, load level and mode are the same; try another metric.</p>
        </Empty>
      ) : (
        <ChartWithTable
          chart={{
            title: model.title,
            data: [
              {
                type: 'bar',
                orientation: 'h',
                name: 'Δ%',
                y: model.rows.map((r) => `${r.values.variant} · ${r.values.scenario} · ${r.values.load}`),
                x: model.rows.map((r) => (typeof r.values.pct === 'number' ? r.values.pct : null)),
              },
            ],
            xTitle: `change of ${info.title} (%)`,
            height: Math.max(300, 80 + model.rows.length * 24),
            filename: `compare-${a.data.slug}-${b.data.slug}-${state.metric}`,
          }}
          table={model}
        />
      )}
    </section>
  );
}
