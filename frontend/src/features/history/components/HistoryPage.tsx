import { useQuery } from '@tanstack/react-query';
import { useEffect, type ReactElement } from 'react';
import { Link, useParams } from 'react-router';
import { preloadCharts } from '@/components/charts/Chart';
import { variantColors } from '@/components/charts/colors';
import { CopyLinkButton } from '@/components/CopyLinkButton';
import { ProjectTabs } from '@/components/ProjectTabs';
import { Empty, ErrorState, Loading } from '@/components/StateViews';
import { resolveSelection, selectTrails, trailChoices } from '../historyModel';
import { metricInfo } from '@/lib/metrics';
import { useUrlState } from '@/lib/useUrlState';
import { annotationsQuery, trailsQuery } from '../api/queries';
import { HISTORY_VIEW_SCHEMA, JMH_METRICS, LOAD_TEST_METRICS } from './historyViewState';
import { AnnotationsPanel } from './AnnotationsPanel';
import { TrailChart } from './TrailChart';

export function HistoryPage(): ReactElement {
  const { slug = '' } = useParams();
  const [state, setState] = useUrlState(HISTORY_VIEW_SCHEMA);
  useEffect(() => preloadCharts(), []);
  const trails = useQuery(trailsQuery(slug));
  const annotations = useQuery(annotationsQuery(slug));

  const header = (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link to="/">Projects</Link> / <Link to={`/p/${encodeURIComponent(slug)}`}>{slug}</Link> / <span>History</span>
      </nav>
      <h1>History</h1>
      <ProjectTabs slug={slug} />
    </>
  );
  if (trails.isPending) return <section>{header}<Loading what="trails" /></section>;
  if (trails.error) return <section>{header}<ErrorState error={trails.error} what={`the trails of '${slug}'`} /></section>;
  const all = trails.data.items;
  if (all.length === 0) {
    return (
      <section>
        {header}
        <Empty title="No history yet.">
          <p>
            A trail starts with the first completed run and grows with every run on the same environment, scenario, load
            and variant. Upload runs for a few agent versions (see the <Link to={`/p/${encodeURIComponent(slug)}`}>Runs</Link>{' '}
            tab), or start a plan under <Link to={`/p/${encodeURIComponent(slug)}/plans`}>Plans &amp; schedules</Link>.
          </p>
        </Empty>
      </section>
    );
  }

  const pinned = Number(state.trail) || null;
  const sel = resolveSelection(all, state, pinned);
  const envChoices = trailChoices(all);
  const scenarioChoices = trailChoices(all, { env: sel.env });
  const choices = trailChoices(all, { env: sel.env, scenario: sel.scenario });
  const jmh = all.some((t) => t.mode);
  const metrics: readonly string[] = jmh ? JMH_METRICS : LOAD_TEST_METRICS;
  const metric = state.metric && (metrics as readonly string[]).includes(state.metric) ? state.metric : metrics === JMH_METRICS ? 'score' : 'latency_p75';
  const chosen = selectTrails(all, sel);
  // Changing any part of the selection releases a pinned trail, so the URL says what is shown.
  const choose = (patch: Partial<typeof state>): void => setState({ ...patch, trail: '' });

  return (
    <section>
      {header}
      <form className="controls" aria-label="Trail" onSubmit={(e) => e.preventDefault()}>
        <fieldset>
          <legend>Trail</legend>
          {envChoices.environments.length > 1 ? (
            <label>
              Environment
              <select value={sel.env} onChange={(e) => choose({ env: e.target.value, scenario: '', loads: [] })}>
                {envChoices.environments.map((e) => (
                  <option key={e.fingerprint} value={e.fingerprint}>
                    {e.name}
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          <label>
            Scenario
            <select value={sel.scenario} onChange={(e) => choose({ scenario: e.target.value, loads: [] })}>
              {scenarioChoices.scenarios.map((s) => (
                <option key={s} value={s}>
                  {s === '*' ? 'All scenarios' : s}
                </option>
              ))}
            </select>
          </label>
          <label>
            Variant
            <select value={sel.variant} onChange={(e) => choose({ variant: e.target.value })}>
              {choices.variants.map((v) => (
                <option key={v}>{v}</option>
              ))}
            </select>
          </label>
          {choices.modes.length > 1 || choices.modes[0] ? (
            <label>
              Mode
              <select value={sel.mode} onChange={(e) => choose({ mode: e.target.value })}>
                {choices.modes.map((m) => (
                  <option key={m} value={m}>
                    {m || '(none)'}
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          <label>
            Metric
            <select value={metric} onChange={(e) => setState({ metric: e.target.value })}>
              {metrics.map((m) => (
                <option key={m} value={m}>
                  {metricInfo(m).title}
                </option>
              ))}
            </select>
          </label>
        </fieldset>
        <fieldset>
          <legend>Show</legend>
          <label>
            <input type="radio" name="kind" checked={state.kind === 'trail'} onChange={() => setState({ kind: 'trail' })} />
            Values
          </label>
          <label>
            <input type="radio" name="kind" checked={state.kind === 'overhead'} onChange={() => setState({ kind: 'overhead' })} />
            Overhead vs reference
          </label>
        </fieldset>
        <fieldset>
          <legend>X axis</legend>
          {(['version', 'commit', 'time'] as const).map((x) => (
            <label key={x}>
              <input type="radio" name="x" checked={state.x === x} onChange={() => setState({ x })} />
              {x === 'version' ? 'Agent version' : x === 'commit' ? 'Commit' : 'Time'}
            </label>
          ))}
        </fieldset>
        {choices.loads.length > 1 ? (
          <fieldset>
            <legend>Load levels</legend>
            {choices.loads.map((l) => {
              const shown = sel.loads.length === 0 || sel.loads.includes(l.key);
              return (
                <label key={l.key}>
                  <input
                    type="checkbox"
                    checked={shown}
                    onChange={() => {
                      const current = sel.loads.length ? sel.loads : choices.loads.map((c) => c.key);
                      const next = shown ? current.filter((k) => k !== l.key) : [...current, l.key];
                      setState({ loads: next.length === choices.loads.length ? [] : next });
                    }}
                  />
                  {l.label}
                </label>
              );
            })}
          </fieldset>
        ) : null}
        <CopyLinkButton />
      </form>
      <p className="muted">
        Points are runs in {state.x === 'version' ? 'agent-version order' : state.x === 'commit' ? 'the same order, labelled by commit' : 'time order'};
        click one to open its run. Diamonds mark change points, triangles alerts, dotted lines annotations.
      </p>
      {chosen.length === 0 ? (
        <Empty title="No trail matches this selection.">
          <p>Pick another scenario, variant or load level above.</p>
        </Empty>
      ) : (
        <div className="small-multiples">
          {chosen.map((t) => (
            <TrailChart
              key={`${t.id}-${metric}-${state.kind}`}
              project={slug}
              trail={t}
              metric={metric}
              kind={state.kind}
              axis={state.x}
              annotations={annotations.data?.items ?? []}
              heading="History"
              color={variantColors(choices.variants)(t.variant)}
            />
          ))}
        </div>
      )}
      <AnnotationsPanel slug={slug} annotations={annotations.data?.items ?? []} />
    </section>
  );
}
