import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactElement } from 'react';
import type { RunDetail } from '@/api/client';
import { NeedsToken, WriteError } from '@/components/WriteNotice';
import { setExclusion } from '../api/events';

/** The validity row that says who excluded the run from its trails and why (PUT /runs/{run}/exclusion). */
export function exclusionOf(run: RunDetail): { by: string; reason: string } | null {
  const row = run.validity.find((v) => v.source === 'manual' && v.check === 'excluded');
  return row ? { by: String(row.by ?? ''), reason: String(row.reason ?? '') } : null;
}

/**
 * Takes a completed run out of its trails (it stays, marked invalid with who and why, and never alerts),
 * or puts it back. The run's trails are judged again around it either way.
 */
export function ExclusionControl({ run }: { run: RunDetail }): ReactElement | null {
  const queryClient = useQueryClient();
  const [reason, setReason] = useState('');
  const change = useMutation({
    mutationFn: (why: string | null) => setExclusion(run.slug, why),
    // The run, its overheads, trails and alerts all change: read them again.
    onSuccess: () => queryClient.invalidateQueries(),
  });
  if (run.status !== 'completed') return null;
  const excluded = exclusionOf(run);
  return (
    <section className="exclusion" aria-label="History">
      {excluded ? (
        <p role="status">
          Excluded from its trails by {excluded.by}: {excluded.reason}{' '}
          <button type="button" onClick={() => change.mutate(null)} disabled={change.isPending}>
            Put back in history
          </button>
        </p>
      ) : (
        <details>
          <summary>Exclude from history…</summary>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              if (reason.trim()) change.mutate(reason.trim());
            }}
          >
            <p className="muted">
              For a run that measured something else (a noisy host, the wrong build): it stays here, marked invalid
              with your reason, its points leave its trails and it raises no alert.
            </p>
            <label>
              Reason{' '}
              <input value={reason} onChange={(e) => setReason(e.target.value)} required maxLength={500} size={50} />
            </label>{' '}
            <button type="submit" disabled={change.isPending || !reason.trim()}>
              Exclude
            </button>
          </form>
          <NeedsToken role="uploader" action="Excluding the run" />
        </details>
      )}
      <WriteError error={change.error} action={excluded ? 'Putting the run back' : 'Excluding the run'} />
    </section>
  );
}
