import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';

/** Same key as the run page's query, so a run opened there is not fetched again. */
export function compareRunQuery(slug: string) {
  return queryOptions({
    queryKey: ['run', slug],
    queryFn: ({ signal }) => unwrap(api().GET('/api/v1/runs/{slug}', { params: { path: { slug } }, signal })),
    enabled: slug.length > 0,
  });
}
