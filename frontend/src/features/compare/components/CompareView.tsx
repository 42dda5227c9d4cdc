import { useQuery } from '@tanstack/react-query';
import type { ReactElement } from 'react';
import { Link } from 'react-router';
import { trailMetric } from '@/api/client';
import { ChartWithTable } from '@/components/charts/Chart';
import { ChartImageLinks } from '@/components/ChartImageLinks';
import { CopyLinkButton } from '@/components/CopyLinkButton';
import { FreezeButton } from '@/components/FreezeButton';
import { ProfilesAcross } from '@/components/profiles/ProfilesAcross';
import { Empty, ErrorState, Loading } from '@/components/StateViews';
import { buildRunComparison, compareStats } from '../compareModel';
import { isComparison } from '@/lib/table';
import { compareMetrics, metricInfo } from '@/lib/metrics';
import { stringCodec, type Schema } from '@/lib/urlState';
import { useUrlState } from '@/lib/useUrlState';
import { compareRunQuery, compareStatsQuery } from '../api/queries';

interface CompareState {
  a: string;
  b: string;
  metric: string;
}

const SCHEMA: Schema<CompareState> = { a: stringCodec(), b: stringCodec(), metric: stringCodec('latency_p75') };
const METRICS = compareMetrics();

/** Two runs cell by cell (same variant, scenario, load level, mode): what changed between versions. */
export function CompareView(): ReactElement {
  const [state, setState] = useUrlState(SCHEMA);
  const a = useQuery(compareRunQuery(state.a));
  const b = useQuery(compareRunQuery(state.b));
  const stats = useQuery(compareStatsQuery(state.a, state.b, state.metric));
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
  const model = buildRunComparison(a.data, b.data, state.metric, compareStats(stats.data));
  const info = metricInfo(state.metric);
  // Plotly draws the first category at the bottom: reversed, the chart reads top-down like the table.
  const bottomUp = [...model.rows].reverse();
  return (
    <section>
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link to="/">Projects</Link> / <Link to={`/p/${encodeURIComponent(a.data.project)}`}>{a.data.project}</Link> / compare
      </nav>
      <h1>
        Compare <Link to={`/r/${a.data.slug}`}>{a.data.slug}</Link> → <Link to={`/r/${b.data.slug}`}>{b.data.slug}</Link>
      </h1>
      <CopyLinkButton />{' '}
      <FreezeButton target={{ compare: { a: state.a, b: state.b, metric: trailMetric(state.metric) } }} />
      <p className="muted">
        Each cell: run {a.data.slug} / run {b.data.slug} / diff (b − a); below it Δ%, the diff over repetitions with
        the API&apos;s 95% interval and its verdict; ● when the interval excludes 0. Each verdict is its own cell&apos;s: of
        many unchanged cells about 1 in 40 lies on the worse side by chance, so a verdict that does not hold once every
        cell here is counted (Benjamini-Hochberg adjusted p ≥ 0.05, as <code>benchtrail compare --fail-on-worse</code>)
        says &quot;not significant over N cells&quot;. Agent {a.data.agent_version ?? '—'} → {b.data.agent_version ?? '—'};
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
                y: bottomUp.map((r) => `${r.values.variant} · ${r.values.scenario} · ${r.values.load}`),
                x: bottomUp.map((r) => (isComparison(r.values.cmp) ? r.values.cmp.pct : null)),
                error_x: {
                  type: 'data',
                  symmetric: false,
                  visible: true,
                  // The API's interval of the difference, in percent of run a's value.
                  array: bottomUp.map((r) => {
                    const c = r.values.cmp;
                    return isComparison(c) && c.stats?.high != null && c.reference ? ((c.stats.high - (c.diff ?? 0)) / Math.abs(c.reference)) * 100 : 0;
                  }),
                  arrayminus: bottomUp.map((r) => {
                    const c = r.values.cmp;
                    return isComparison(c) && c.stats?.low != null && c.reference ? (((c.diff ?? 0) - c.stats.low) / Math.abs(c.reference)) * 100 : 0;
                  }),
                },
              },
            ],
            xTitle: `change of ${info.title} (%), with the 95% interval`,
            yType: 'category',
            height: Math.max(300, 80 + model.rows.length * 24),
            filename: `compare-${a.data.slug}-${b.data.slug}-${state.metric}`,
          }}
          table={model}
          stacked
          fit
        />
      )}
      {model.rows.length > 0 ? (
        <ChartImageLinks
          path="/api/v1/compare/chart"
          query={new URLSearchParams({ a: state.a, b: state.b, metric: state.metric }).toString()}
          alt={model.title}
        />
      ) : null}
      <ProfilesAcross run={state.b} base={state.a} heading={`Where the CPU changed: profiles of ${b.data.slug} against ${a.data.slug}`} />
    </section>
  );
}
