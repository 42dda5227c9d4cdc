import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';

export function projectsQuery() {
  return queryOptions({
    queryKey: ['projects'],
    queryFn: ({ signal }) => unwrap(api().GET('/api/v1/projects', { signal })),
  });
}

export function projectQuery(slug: string) {
  return queryOptions({
    queryKey: ['project', slug],
    queryFn: ({ signal }) => unwrap(api().GET('/api/v1/projects/{slug}', { params: { path: { slug } }, signal })),
  });
}

export interface RunFilters {
  environment?: string;
  agent_version?: string;
  branch?: string;
  status?: string;
  page?: number;
  per_page?: number;
}

export function projectRunsQuery(slug: string, filters: RunFilters) {
  return queryOptions({
    queryKey: ['project', slug, 'runs', filters],
    queryFn: ({ signal }) =>
      unwrap(api().GET('/api/v1/projects/{slug}/runs', { params: { path: { slug }, query: filters }, signal })),
  });
}
