import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactElement } from 'react';
import type { ScheduleOut } from '@/api/client';
import { Badge, Empty, ErrorState, Loading } from '@/components/StateViews';
import { NeedsToken, WriteError } from '@/components/WriteNotice';
import { formatDateTime } from '@/lib/format';
import { createSchedule, schedulesQuery, updateSchedule } from '../api/queries';

function ScheduleRow({ slug, schedule }: { slug: string; schedule: ScheduleOut }): ReactElement {
  const queryClient = useQueryClient();
  const [cron, setCron] = useState(schedule.cron);
  // Follow the server's cron when it changes elsewhere, but never overwrite what the user is typing.
  const [serverCron, setServerCron] = useState(schedule.cron);
  if (schedule.cron !== serverCron) {
    setServerCron(schedule.cron);
    if (cron === serverCron) setCron(schedule.cron);
  }
  const update = useMutation({
    mutationFn: (patch: { cron?: string; enabled?: boolean }) => updateSchedule(slug, schedule.id, patch),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: schedulesQuery(slug).queryKey }),
  });
  return (
    <>
      <tr>
        <th scope="row">{schedule.plan}</th>
        <td>
          <form
            aria-label={`Cron of schedule ${schedule.id}`}
            onSubmit={(e) => {
              e.preventDefault();
              update.mutate({ cron });
            }}
          >
            <input aria-label="Cron" value={cron} onChange={(e) => setCron(e.target.value)} size={14} />{' '}
            <button type="submit" disabled={cron === schedule.cron || update.isPending}>
              Save cron
            </button>
          </form>
        </td>
        <td>{schedule.enabled ? <Badge tone="good">enabled</Badge> : <Badge tone="warn">disabled</Badge>}</td>
        <td>{schedule.enabled ? formatDateTime(schedule.next_fire_at) : '—'}</td>
        <td>{formatDateTime(schedule.last_fired_at)}</td>
        <td>
          <button type="button" disabled={update.isPending} onClick={() => update.mutate({ enabled: !schedule.enabled })}>
            {schedule.enabled ? 'Disable' : 'Enable'}
          </button>
        </td>
      </tr>
      {update.error ? (
        <tr>
          <td colSpan={6}>
            <WriteError error={update.error} action="Changing the schedule" />
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** Cron + plan → runs; the latest version of the plan runs at each firing. */
export function SchedulesSection({ slug, planNames }: { slug: string; planNames: string[] }): ReactElement {
  const queryClient = useQueryClient();
  const schedules = useQuery(schedulesQuery(slug));
  const [plan, setPlan] = useState('');
  const [cron, setCron] = useState('0 2 * * *');
  const chosenPlan = planNames.includes(plan) ? plan : (planNames[0] ?? '');
  const create = useMutation({
    mutationFn: () => createSchedule(slug, chosenPlan, cron.trim(), true),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: schedulesQuery(slug).queryKey }),
  });
  return (
    <section aria-labelledby="schedules-h">
      <h2 id="schedules-h">Schedules</h2>
      {schedules.isPending ? <Loading what="schedules" /> : null}
      {schedules.error ? <ErrorState error={schedules.error} what="schedules" /> : null}
      {schedules.data && schedules.data.items.length === 0 ? (
        <Empty title="No schedules.">
          <p>Add one below to run a plan regularly, e.g. nightly at 02:00 UTC with <code>0 2 * * *</code>.</p>
        </Empty>
      ) : null}
      {schedules.data && schedules.data.items.length > 0 ? (
        <table aria-label="Schedules">
          <thead>
            <tr>
              <th scope="col">Plan</th>
              <th scope="col">Cron (UTC)</th>
              <th scope="col">State</th>
              <th scope="col">Next run</th>
              <th scope="col">Last run</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {schedules.data.items.map((s) => (
              <ScheduleRow key={s.id} slug={slug} schedule={s} />
            ))}
          </tbody>
        </table>
      ) : null}
      <h3>New schedule</h3>
      {planNames.length === 0 ? (
        <p className="muted">A schedule runs a plan: add a plan first.</p>
      ) : (
        <form
          aria-label="New schedule"
          className="form-grid"
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <label>
            Plan
            <select value={chosenPlan} onChange={(e) => setPlan(e.target.value)}>
              {planNames.map((p) => (
                <option key={p}>{p}</option>
              ))}
            </select>
          </label>
          <label>
            Cron (minute hour day month weekday, UTC)
            <input value={cron} onChange={(e) => setCron(e.target.value)} />
          </label>
          <button type="submit" disabled={create.isPending || !cron.trim()}>
            Add schedule
          </button>
          <div style={{ flexBasis: '100%' }}>
            <NeedsToken role="admin" action="Changing schedules" />
            <WriteError error={create.error} action="Adding the schedule" />
          </div>
        </form>
      )}
    </section>
  );
}
