import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ReactElement } from 'react';
import type { RunDetail } from '@/api/client';
import { NeedsToken, WriteError } from '@/components/WriteNotice';
import { formatNumber } from '@/lib/format';
import { isTerminal, progressView } from '../liveRun';
import { cancelRun } from '../api/events';
import { runQuery } from '../api/queries';

/**
 * Progress of a run executed by a runner: live while it is queued or running, and kept afterwards
 * as the record of what the runner reported.
 */
export function LiveProgress({ run, streaming }: { run: RunDetail; streaming: boolean }): ReactElement | null {
  const queryClient = useQueryClient();
  const cancel = useMutation({
    mutationFn: () => cancelRun(run.slug),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: runQuery(run.slug).queryKey, exact: true }),
  });
  const view = progressView(run.progress);
  const executing = run.status === 'queued' || run.status === 'running';
  const hasReport = view.percent !== null || view.log.length > 0 || view.runner !== null;
  if (!executing && !hasReport) return null;
  // A running run stops when its runner next reports; until then the request is what there is to show.
  const cancelRequested = run.meta.cancel_requested === true || (cancel.isSuccess && run.status === 'running');
  return (
    <section className="live" aria-label="Run progress">
      <h2 style={{ marginTop: 0 }}>
        {run.status === 'queued'
          ? 'Queued: waiting for a runner'
          : run.status === 'running'
            ? `Running${view.runner ? ` on ${view.runner}` : ''}`
            : `Runner report${view.runner ? ` from ${view.runner}` : ''}`}
      </h2>
      {!isTerminal(run.status) ? (
        <p className="muted" role="status">
          {streaming ? 'Live: updates arrive as the runner reports.' : 'Updating every 2 s.'}
        </p>
      ) : null}
      <progress aria-label="Progress" max={100} value={view.percent ?? undefined} />
      <dl className="facts">
        <div>
          <dt>Done</dt>
          <dd data-testid="progress-percent">{view.percent === null ? '—' : `${view.percent.toFixed(0)}%`}</dd>
        </div>
        <div>
          <dt>{executing ? 'Step' : 'Last step'}</dt>
          <dd>{view.step ?? '—'}</dd>
        </div>
        {/* The runner counts per step: live figures while it runs. Once the run has ended they would be its last
            step's (an ingest step reports 0 requests); the run's counts are its cells'. */}
        {executing ? (
          <>
            <div>
              <dt>Achieved rate (req/s, this step)</dt>
              <dd data-testid="progress-rate">{formatNumber(view.achievedRate)}</dd>
            </div>
            <div>
              <dt>Requests (this step)</dt>
              <dd data-testid="progress-requests">{formatNumber(view.requests)}</dd>
            </div>
            <div>
              <dt>Errors (this step)</dt>
              <dd data-testid="progress-errors">{formatNumber(view.errors)}</dd>
            </div>
          </>
        ) : null}
      </dl>
      {view.log.length ? (
        <details open={executing}>
          <summary>Runner log (last {view.log.length} lines)</summary>
          <pre aria-label="Runner log">{view.log.join('\n')}</pre>
        </details>
      ) : null}
      {executing ? (
        <div>
          <button type="button" onClick={() => cancel.mutate()} disabled={cancel.isPending || cancelRequested}>
            {cancelRequested ? 'Cancel requested…' : 'Cancel run'}
          </button>
          <NeedsToken role="uploader" action="Cancelling a run" />
          <WriteError error={cancel.error} action="Cancelling the run" />
        </div>
      ) : null}
    </section>
  );
}
