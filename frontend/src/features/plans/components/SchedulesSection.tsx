import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactElement } from 'react';
import type { ScheduleOut } from '@/api/client';
import { DataTable } from '@/components/DataTable';
import { Badge, Empty, ErrorState, Loading } from '@/components/StateViews';
import { NeedsToken, WriteError } from '@/components/WriteNotice';
import { formatDateTime } from '@/lib/format';
import type { Row, TableModel } from '@/lib/table';
import { createSchedule, schedulesQuery, updateSchedule } from '../api/queries';

function useScheduleUpdate(slug: string, schedule: ScheduleOut) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (patch: { cron?: string; enabled?: boolean }) => updateSchedule(slug, schedule.id, patch),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: schedulesQuery(slug).queryKey }),
  });
}

function CronForm({ slug, schedule }: { slug: string; schedule: ScheduleOut }): ReactElement {
  const [cron, setCron] = useState(schedule.cron);
  // Follow the server's cron when it changes elsewhere, but never overwrite what the user is typing.
  const [serverCron, setServerCron] = useState(schedule.cron);
  if (schedule.cron !== serverCron) {
    setServerCron(schedule.cron);
    if (cron === serverCron) setCron(schedule.cron);
  }
  const update = useScheduleUpdate(slug, schedule);
  return (
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
      <WriteError error={update.error} action="Changing the schedule" />
    </form>
  );
}

function EnableToggle({ slug, schedule }: { slug: string; schedule: ScheduleOut }): ReactElement {
  const update = useScheduleUpdate(slug, schedule);
  return (
    <>
      <button type="button" disabled={update.isPending} onClick={() => update.mutate({ enabled: !schedule.enabled })}>
        {schedule.enabled ? 'Disable' : 'Enable'}
      </button>
      <WriteError error={update.error} action="Changing the schedule" />
    </>
  );
}

type ScheduleRow = Row & { schedule: ScheduleOut };

function schedulesTable(schedules: ScheduleOut[]): TableModel<ScheduleRow> {
  return {
    title: 'Schedules',
    columns: [
      { key: 'plan', label: 'Plan', role: 'label' },
      { key: 'cron', label: 'Cron (UTC)', role: 'value', text: true },
      { key: 'state', label: 'State', role: 'value' },
      { key: 'next', label: 'Next run', role: 'value' },
      { key: 'last', label: 'Last run', role: 'value' },
      { key: 'action', label: 'Action', role: 'value' },
    ],
    rows: schedules.map((s) => ({
      id: String(s.id),
      schedule: s,
      values: {
        plan: s.plan,
        cron: s.cron,
        state: s.enabled ? 'enabled' : 'disabled',
        next: s.enabled ? formatDateTime(s.next_fire_at) : '—',
        last: formatDateTime(s.last_fired_at),
        action: null,
      },
    })),
  };
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
        <DataTable
          model={schedulesTable(schedules.data.items)}
          render={{
            cron: ({ schedule }) => <CronForm key={schedule.id} slug={slug} schedule={schedule} />,
            state: ({ schedule }) =>
              schedule.enabled ? <Badge tone="good">enabled</Badge> : <Badge tone="warn">disabled</Badge>,
            action: ({ schedule }) => <EnableToggle key={schedule.id} slug={slug} schedule={schedule} />,
          }}
        />
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
