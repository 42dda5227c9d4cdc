import { queryOptions } from '@tanstack/react-query';
import { api, trailMetric, unwrap } from '@/api/client';

/** Same key as the run page's query, so a run opened there is not fetched again. */
export function compareRunQuery(slug: string) {
  return queryOptions({
    queryKey: ['run', slug],
    queryFn: ({ signal }) => unwrap(api().GET('/api/v1/runs/{slug}', { params: { path: { slug } }, signal })),
    enabled: slug.length > 0,
  });
}

/** The API's A/B statistics of run b − run a, cell by cell, for one metric. */
export function compareStatsQuery(a: string, b: string, metric: string) {
  return queryOptions({
    queryKey: ['compare', a, b, metric],
    queryFn: ({ signal }) => unwrap(api().GET('/api/v1/compare', { params: { query: { a, b, metric: trailMetric(metric) } }, signal })),
    enabled: a.length > 0 && b.length > 0,
    staleTime: 60_000,
  });
}
