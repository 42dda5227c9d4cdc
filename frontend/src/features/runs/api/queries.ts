import { queryOptions } from '@tanstack/react-query';
import { api, trailMetric, unwrap, type RunDetail } from '@/api/client';

const LIVE_STATES = new Set(['queued', 'running', 'ingesting', 'analysing', 'pending']);

export function isLive(status: string): boolean {
  return LIVE_STATES.has(status);
}

/** `poll`: refetch every 2 s while the run is live; off while server-sent events keep it current. */
export function runQuery(slug: string, poll = true) {
  return queryOptions({
    queryKey: ['run', slug],
    queryFn: ({ signal }) => unwrap(api().GET('/api/v1/runs/{slug}', { params: { path: { slug } }, signal })),
    // A run still being ingested or executed is polled until it settles; while server-sent events
    // keep it current, a slow poll still catches an event the stream missed (the server subscribes
    // after reading the run's state, so a change in between is never sent).
    refetchInterval: (query) => {
      const data = query.state.data as RunDetail | undefined;
      if (!data || !isLive(data.status)) return false;
      return poll ? 2000 : 10_000;
    },
  });
}

export function seriesQuery(slug: string, metric: string | null) {
  return queryOptions({
    queryKey: ['run', slug, 'series', metric],
    queryFn: ({ signal }) =>
      unwrap(
        api().GET('/api/v1/runs/{slug}/series', {
          params: { path: { slug }, query: metric ? { metric } : {} },
          signal,
        }),
      ),
  });
}

export function percentilesQuery(slug: string, percentiles: readonly number[] = []) {
  return queryOptions({
    queryKey: ['run', slug, 'percentiles', percentiles],
    queryFn: ({ signal }) =>
      unwrap(
        api().GET('/api/v1/runs/{slug}/percentiles', {
          params: { path: { slug }, query: percentiles.length ? { p: [...percentiles] } : {} },
          signal,
        }),
      ),
  });
}

/** The API's A/B statistics of every cell of a run against its reference variant, for one metric. */
export function overheadsQuery(slug: string, metric: string, enabled = true) {
  return queryOptions({
    queryKey: ['run', slug, 'overheads', metric],
    queryFn: ({ signal }) =>
      unwrap(api().GET('/api/v1/runs/{slug}/overheads', { params: { path: { slug }, query: { metric: trailMetric(metric) } }, signal })),
    enabled,
    staleTime: 60_000,
  });
}
