import { useCallback, useMemo } from 'react';
import { useSearchParams } from 'react-router';
import { readState, writeState, type Schema } from './urlState';

/**
 * View state read from and written to the query string (replace, so Back leaves the page rather
 * than undoing a filter). flushSync: a controlled checkbox or radio shows its new state in the same
 * frame as the click, instead of flicking back until the router's navigation settles.
 */
export function useUrlState<S>(schema: Schema<S>): [S, (patch: Partial<S>) => void] {
  const [params, setParams] = useSearchParams();
  const state = useMemo(() => readState(params, schema), [params, schema]);
  const update = useCallback(
    (patch: Partial<S>) => setParams((prev) => writeState(prev, schema, patch), { replace: true, flushSync: true }),
    [setParams, schema],
  );
  return [state, update];
}
