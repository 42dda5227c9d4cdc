/** Query options of the profiles API, shared by the run page, Compare and the alert page. */
import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';

/** The run's CPU profiles (empty for a run without profiles). */
export function profilesQuery(slug: string) {
  return queryOptions({
    queryKey: ['run', slug, 'profiles'],
    queryFn: ({ signal }) => unwrap(api().GET('/api/v1/runs/{slug}/profiles', { params: { path: { slug } }, signal })),
    staleTime: 60_000,
  });
}

/** A variant's flame graph at a load level (CPU-ms per 1,000 requests). */
export function flameQuery(slug: string, variant: string, load: string | null, enabled = true, scenario: string | null = null) {
  return queryOptions({
    queryKey: ['run', slug, 'profiles', 'flame', variant, load, scenario],
    queryFn: ({ signal }) =>
      unwrap(
        api().GET('/api/v1/runs/{slug}/profiles/flame', {
          params: { path: { slug }, query: { variant, ...(load ? { load } : {}), ...(scenario ? { scenario } : {}) } },
          signal,
        }),
      ),
    enabled,
    staleTime: 60_000,
  });
}

/** Variant minus reference (of this run, or of run `base`): the differential profile. */
export function profileDiffQuery(slug: string, variant: string | null, load: string | null, base: string | null = null, enabled = true,
  scenario: string | null = null) {
  return queryOptions({
    queryKey: ['run', slug, 'profiles', 'diff', variant, load, base, scenario],
    queryFn: ({ signal }) =>
      unwrap(
        api().GET('/api/v1/runs/{slug}/profiles/diff', {
          params: {
            path: { slug },
            query: {
              ...(variant ? { variant } : {}), ...(load ? { load } : {}), ...(base ? { base } : {}), ...(scenario ? { scenario } : {}),
            },
          },
          signal,
        }),
      ),
    enabled,
    staleTime: 60_000,
  });
}
