import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useState, type ReactElement } from 'react';
import { preloadCharts } from '@/components/charts/Chart';
import { useParams } from 'react-router';
import { Empty, ErrorState, Loading } from '@/components/StateViews';
import { isJmhRun, referenceVariant, sortLoads } from '@/lib/cells';
import { useUrlState } from '@/lib/useUrlState';
import { useRunEvents } from '../api/events';
import { isLive, percentilesQuery, runQuery, seriesQuery } from '../api/queries';
import { ExclusionControl } from './ExclusionControl';
import { FreezeButton } from './FreezeButton';
import { JmhTables } from './JmhTables';
import { LiveProgress } from './LiveProgress';
import { LeadTables } from './LeadTables';
import { PercentileSpectrum } from './PercentileSpectrum';
import { ProfilesSection } from './ProfilesSection';
import { RunControls } from './RunControls';
import { RunHeader } from './RunHeader';
import { RUN_VIEW_SCHEMA } from './runViewState';
import { SeriesOverlay } from './SeriesOverlay';
import { VariantMatrix } from './VariantMatrix';

export function RunPage(): ReactElement {
  const { runSlug = '' } = useParams();
  const [state, setState] = useUrlState(RUN_VIEW_SCHEMA);
  const queryClient = useQueryClient();
  // The chart bundle, the series and the spectrum only need the slug: fetch them alongside the run.
  useEffect(() => {
    preloadCharts();
    void queryClient.prefetchQuery(seriesQuery(runSlug, null));
    void queryClient.prefetchQuery(percentilesQuery(runSlug));
  }, [queryClient, runSlug]);
  const [streaming, setStreaming] = useState(false);
  const { data: run, error, isPending } = useQuery(runQuery(runSlug, !streaming));
  const onStreaming = useCallback((on: boolean) => setStreaming(on), []);
  useRunEvents(runSlug, Boolean(run && isLive(run.status)), onStreaming);
  if (isPending) return <Loading what={`run ${runSlug}`} />;
  if (error) return <ErrorState error={error} what={`run '${runSlug}'`} />;

  const reference = referenceVariant(run, state.ref || undefined);
  const others = run.variants.filter((v) => v.id !== reference?.id);
  const variant = others.find((v) => v.name === state.variant) ?? others[0];
  const loads = sortLoads(run.loads).filter((l) => !state.loads.length || state.loads.includes(l.key));
  const jmh = isJmhRun(run);
  const loadTest = run.cells.some((c) => c.score === null);

  return (
    <article>
      <RunHeader run={run} />
      <FreezeButton runSlug={run.slug} />
      <ExclusionControl run={run} />
      <LiveProgress run={run} streaming={streaming} />
      {isLive(run.status) && run.status !== 'queued' && run.status !== 'running' ? (
        <p role="status" className="state loading">
          This run is {run.status}; the page refreshes by itself when it completes.
        </p>
      ) : null}
      {run.cells.length === 0 && !isLive(run.status) && run.status !== 'failed' ? (
        <Empty title="This run has no cells.">
          <p>The uploaded files held no samples after warm-up; check the files below or the upload's warm-up option.</p>
        </Empty>
      ) : null}
      {run.cells.length > 0 && reference ? (
        <>
          <RunControls run={run} state={state} setState={setState} />
          {loadTest && variant ? (
            <LeadTables
              run={run}
              loads={loads}
              reference={reference}
              variant={variant}
              percentile={state.p}
              scenarios={state.scenarios}
            />
          ) : null}
          {loadTest ? (
            <VariantMatrix
              run={run}
              reference={reference}
              metric={state.metric || `latency_${state.p}`}
              onMetric={(metric) => setState({ metric })}
              scenarios={state.scenarios}
              loads={state.loads}
            />
          ) : null}
          {jmh ? <JmhTables run={run} reference={reference} scenarios={state.scenarios} /> : null}
          {loadTest ? (
            <>
              <SeriesOverlay
                run={run}
                loads={loads}
                metric={state.series}
                onMetric={(series) => setState({ series })}
                scenarios={state.scenarios}
                range={state.range}
                onRange={(range) => setState({ range })}
              />
              <PercentileSpectrum run={run} loads={loads} scenarios={state.scenarios} />
              <ProfilesSection
                run={run}
                variant={variant?.name}
                load={state.loads[0]}
                scenario={state.pscenario}
                onScenario={(pscenario) => setState({ pscenario })}
              />
            </>
          ) : null}
        </>
      ) : null}
    </article>
  );
}
