import { useMutation } from '@tanstack/react-query';
import type { ReactElement } from 'react';
import { Link, useLocation } from 'react-router';
import { api, unwrap, type Schemas } from '@/api/client';

/** What is frozen: exactly one of a run, a comparison or a history (see POST /snapshots). */
export type FreezeTarget =
  | { run: string }
  | { compare: Schemas['CompareSpec'] }
  | { history: Schemas['HistorySpec'] };

/** Freezes this view (the data as it is now, and the view state in the URL) under a permalink of its own. */
export function FreezeButton({ target }: { target: FreezeTarget }): ReactElement {
  const location = useLocation();
  const freeze = useMutation({
    mutationFn: () =>
      unwrap(
        api().POST('/api/v1/snapshots', {
          body: { ...target, view: { path: location.pathname, query: location.search.replace(/^\?/, '') } },
        }),
      ),
  });
  return (
    <span className="freeze">
      <button type="button" onClick={() => freeze.mutate()} disabled={freeze.isPending}>
        Freeze this view
      </button>
      {freeze.data ? (
        <span role="status">
          {' '}
          Frozen: <Link to={`/s/${freeze.data.slug}`}>{freeze.data.permalink}</Link>
        </span>
      ) : null}
      {freeze.error ? (
        <span role="alert" className="error">
          {' '}
          {freeze.error.message}
        </span>
      ) : null}
    </span>
  );
}
