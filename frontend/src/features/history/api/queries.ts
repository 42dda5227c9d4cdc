import { queryOptions } from '@tanstack/react-query';
import { api, trailMetric, unwrap } from '@/api/client';
import { fromOverhead, fromTrail, type HistoryKind, type HistorySeries } from '../historyModel';

export function trailsQuery(slug: string) {
  return queryOptions({
    queryKey: ['project', slug, 'trails'],
    queryFn: ({ signal }) =>
      unwrap(api().GET('/api/v1/projects/{slug}/trails', { params: { path: { slug } }, signal })),
  });
}

// The whole history, thinned by the server past this many points (change points, alerts and extremes kept).
const HISTORY_LIMIT = 20000;
const HISTORY_MAX_POINTS = 5000;

/** A trail or its overhead trail, in one shape for the chart and the table. */
export function historySeriesQuery(trailId: number, metric: string, kind: HistoryKind) {
  return queryOptions({
    queryKey: ['trail', trailId, kind, metric],
    queryFn: async ({ signal }): Promise<HistorySeries> => {
      const params = {
        path: { trail_id: trailId },
        query: { metric: trailMetric(metric), limit: HISTORY_LIMIT, max_points: HISTORY_MAX_POINTS },
      };
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

export type AnnotationFields = {
  kind: 'release' | 'jdk' | 'infra' | 'other';
  title: string;
  agent_version: string | null;
  at: string | null;
  known_change: boolean;
};

export function createAnnotation(slug: string, body: AnnotationFields) {
  return unwrap(api().POST('/api/v1/projects/{slug}/annotations', { params: { path: { slug } }, body }));
}

export function updateAnnotation(slug: string, id: number, body: Partial<AnnotationFields>) {
  return unwrap(
    api().PATCH('/api/v1/projects/{slug}/annotations/{annotation_id}', {
      params: { path: { slug, annotation_id: id } },
      body,
    }),
  );
}

export async function deleteAnnotation(slug: string, id: number): Promise<void> {
  const { error, response } = await api().DELETE('/api/v1/projects/{slug}/annotations/{annotation_id}', {
    params: { path: { slug, annotation_id: id } },
  });
  if (!response.ok) await unwrap(Promise.resolve({ data: undefined, error: error ?? {}, response }));
}
