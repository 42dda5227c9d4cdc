import { queryOptions } from '@tanstack/react-query';
import { api, unwrap, type ScheduleOut, type StartRun } from '@/api/client';

export function plansQuery(slug: string) {
  return queryOptions({
    queryKey: ['project', slug, 'plans'],
    queryFn: ({ signal }) => unwrap(api().GET('/api/v1/projects/{slug}/plans', { params: { path: { slug } }, signal })),
  });
}

export function planVersionsQuery(slug: string, name: string) {
  return queryOptions({
    queryKey: ['project', slug, 'plans', name],
    queryFn: ({ signal }) =>
      unwrap(api().GET('/api/v1/projects/{slug}/plans/{name}', { params: { path: { slug, name } }, signal })),
  });
}

export function schedulesQuery(slug: string) {
  return queryOptions({
    queryKey: ['project', slug, 'schedules'],
    queryFn: ({ signal }) =>
      unwrap(api().GET('/api/v1/projects/{slug}/schedules', { params: { path: { slug } }, signal })),
  });
}

export async function startRun(slug: string, name: string, body: StartRun): Promise<string> {
  const run = await unwrap(
    api().POST('/api/v1/projects/{slug}/plans/{name}/runs', { params: { path: { slug, name } }, body }),
  );
  return run.slug;
}

export function createSchedule(slug: string, plan: string, cron: string, enabled: boolean): Promise<ScheduleOut> {
  return unwrap(api().POST('/api/v1/projects/{slug}/schedules', { params: { path: { slug } }, body: { plan, cron, enabled } }));
}

export function updateSchedule(slug: string, id: number, patch: { cron?: string; enabled?: boolean }): Promise<ScheduleOut> {
  return unwrap(
    api().PATCH('/api/v1/projects/{slug}/schedules/{schedule_id}', {
      params: { path: { slug, schedule_id: id } },
      body: patch,
    }),
  );
}
