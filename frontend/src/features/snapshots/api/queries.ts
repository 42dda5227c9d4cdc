import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';

export function snapshotQuery(slug: string) {
  return queryOptions({
    queryKey: ['snapshot', slug],
    queryFn: ({ signal }) => unwrap(api().GET('/api/v1/snapshots/{slug}', { params: { path: { slug } }, signal })),
    // A snapshot never changes.
    staleTime: Infinity,
  });
}
