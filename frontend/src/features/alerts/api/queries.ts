import { queryOptions } from '@tanstack/react-query';
import { api, unwrap, type AlertDetail, type AlertPatch } from '@/api/client';

/** States people set; `confirmed`, `fixed` and `wontfix` make the change a known change point. */
export const ALERT_STATES = ['new', 'acknowledged', 'investigating', 'confirmed', 'fixed', 'wontfix', 'invalid'] as const;
export type AlertState = (typeof ALERT_STATES)[number];
/** Every state an alert can be in: `withdrawn` is set by the analysis when the trail stops showing the change. */
export const ALERT_FILTER_STATES = [...ALERT_STATES, 'withdrawn'] as const;

export interface AlertFilters {
  state?: (typeof ALERT_FILTER_STATES)[number];
  metric?: string;
  direction?: string;
  kind?: string;
}

export function alertsQuery(slug: string, filters: AlertFilters) {
  return queryOptions({
    queryKey: ['project', slug, 'alerts', filters],
    queryFn: ({ signal }) =>
      unwrap(api().GET('/api/v1/projects/{slug}/alerts', { params: { path: { slug }, query: filters }, signal })),
  });
}

export function alertQuery(id: number) {
  return queryOptions({
    queryKey: ['alert', id],
    queryFn: ({ signal }) => unwrap(api().GET('/api/v1/alerts/{alert_id}', { params: { path: { alert_id: id } }, signal })),
  });
}

export function patchAlert(id: number, body: AlertPatch): Promise<AlertDetail> {
  return unwrap(api().PATCH('/api/v1/alerts/{alert_id}', { params: { path: { alert_id: id } }, body }));
}
