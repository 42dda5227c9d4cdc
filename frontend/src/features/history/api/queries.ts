import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import { fromOverhead, fromTrail, type HistoryKind, type HistorySeries } from '../historyModel';

export function trailsQuery(slug: string) {
  return queryOptions({
    queryKey: ['project', slug, 'trails'],
    queryFn: ({ signal }) =>
      unwrap(api().GET('/api/v1/projects/{slug}/trails', { params: { path: { slug } }, signal })),
  });
}

/** A trail or its overhead trail, in one shape for the chart and the table. */
export function historySeriesQuery(trailId: number, metric: string, kind: HistoryKind) {
  return queryOptions({
    queryKey: ['trail', trailId, kind, metric],
    queryFn: async ({ signal }): Promise<HistorySeries> => {
      const params = { path: { trail_id: trailId }, query: { metric } };
      if (kind === 'overhead') {
        return fromOverhead(await unwrap(api().GET('/api/v1/trails/{trail_id}/overhead', { params, signal })));
      }
      return fromTrail(await unwrap(api().GET('/api/v1/trails/{trail_id}', { params, signal })));
    },
  });
}

export function annotationsQuery(slug: string) {
  return queryOptions({
    queryKey: ['project', slug, 'annotations'],
    queryFn: ({ signal }) =>
      unwrap(api().GET('/api/v1/projects/{slug}/annotations', { params: { path: { slug } }, signal })),
  });
}

export function analysisSettingsQuery(slug: string) {
  return queryOptions({
    queryKey: ['project', slug, 'settings'],
    queryFn: ({ signal }) =>
      unwrap(api().GET('/api/v1/projects/{slug}/settings', { params: { path: { slug } }, signal })),
  });
}
