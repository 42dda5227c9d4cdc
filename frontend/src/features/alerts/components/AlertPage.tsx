import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactElement } from 'react';
import { Link, useParams } from 'react-router';
import type { AlertDetail } from '@/api/client';
import { CopyLinkButton } from '@/components/CopyLinkButton';
import { DataTable } from '@/components/DataTable';
import { ProfilesAcross } from '@/components/profiles/ProfilesAcross';
import { ProjectTabs } from '@/components/ProjectTabs';
import { Badge, ErrorState, Loading } from '@/components/StateViews';
import { NeedsToken, WriteError } from '@/components/WriteNotice';
import { formatDateTime, formatNumber, formatSigned } from '@/lib/format';
import { metricInfo } from '@/lib/metrics';
import type { TableModel } from '@/lib/table';
import { ALERT_STATES, alertQuery, patchAlert } from '../api/queries';
import { historyLink, stateTone, trailText } from './alertLinks';

function eventsTable(a: AlertDetail): TableModel {
  return {
    title: 'State changes',
    columns: [
      { key: 'when', label: 'When', role: 'label' },
      { key: 'from', label: 'From', role: 'value' },
      { key: 'to', label: 'To', role: 'value' },
      { key: 'by', label: 'By', role: 'value' },
      { key: 'note', label: 'Note', role: 'value', text: true },
    ],
    rows: a.events.map((e) => ({
      id: String(e.id),
      values: {
        when: formatDateTime(e.created_at),
        from: e.from_state ?? '—',
        to: e.to_state,
        by: e.actor,
        note: e.note,
      },
    })),
  };
}

function Triage({ alert }: { alert: AlertDetail }): ReactElement {
  const queryClient = useQueryClient();
  const [state, setState] = useState(alert.state);
  const [assignee, setAssignee] = useState(alert.assignee ?? '');
  const [notes, setNotes] = useState(alert.notes);
  const [note, setNote] = useState('');
  const save = useMutation({
    mutationFn: () =>
      patchAlert(alert.id, {
        state: state !== alert.state ? (state as (typeof ALERT_STATES)[number]) : undefined,
        assignee: assignee !== (alert.assignee ?? '') ? assignee : undefined,
        notes: notes !== alert.notes ? notes : undefined,
        note: note || undefined,
      }),
    onSuccess: (updated) => {
      queryClient.setQueryData(alertQuery(alert.id).queryKey, updated);
      void queryClient.invalidateQueries({ queryKey: ['project', alert.project] });
      setNote('');
    },
  });
  const dirty = state !== alert.state || assignee !== (alert.assignee ?? '') || notes !== alert.notes || note !== '';
  return (
    <form
      className="triage"
      aria-label="Triage"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <label>
        State
        <select value={state} onChange={(e) => setState(e.target.value)}>
          {ALERT_STATES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <label>
        Assignee
        <input value={assignee} onChange={(e) => setAssignee(e.target.value)} placeholder="nobody" />
      </label>
      <label>
        Notes
        <textarea value={notes} onChange={(e) => setNotes(e.target.value)} />
      </label>
      <label>
        Comment for this change
        <input value={note} onChange={(e) => setNote(e.target.value)} placeholder="optional" />
      </label>
      <div>
        <button type="submit" disabled={!dirty || save.isPending}>
          {save.isPending ? 'Saving…' : 'Save triage'}
        </button>
        {save.isSuccess && !dirty ? <span role="status"> Saved.</span> : null}
      </div>
      <div style={{ gridColumn: '1 / -1' }}>
        <NeedsToken role="uploader" action="Triage" />
        <WriteError error={save.error} action="Saving the triage" />
      </div>
    </form>
  );
}

export function AlertPage(): ReactElement {
  const { slug = '', alertId = '' } = useParams();
  const id = Number(alertId);
  const { data: a, error, isPending } = useQuery({ ...alertQuery(id), enabled: Number.isInteger(id) && id > 0 });
  const crumbs = (
    <nav aria-label="Breadcrumb" className="crumbs">
      <Link to="/">Projects</Link> / <Link to={`/p/${encodeURIComponent(slug)}`}>{slug}</Link> /{' '}
      <Link to={`/p/${encodeURIComponent(slug)}/alerts`}>Alerts</Link> / <span>#{alertId}</span>
    </nav>
  );
  if (!Number.isInteger(id) || id <= 0) return <section>{crumbs}<ErrorState error={new Error(`'${alertId}' is not an alert number`)} what="the alert" /></section>;
  if (isPending) return <section>{crumbs}<Loading what={`alert #${id}`} /></section>;
  if (error) return <section>{crumbs}<ErrorState error={error} what={`alert #${id}`} /></section>;
  const info = metricInfo(a.metric);
  const unit = a.kind === 'overhead' ? '% of the reference' : info.unit;
  return (
    <article>
      {crumbs}
      <h1>
        Alert #{a.id} <Badge tone={stateTone(a.state)}>{a.state}</Badge>{' '}
        <Badge tone={a.direction === 'regression' ? 'bad' : 'good'}>{a.direction}</Badge>
      </h1>
      <ProjectTabs slug={slug} />
      <p>{a.summary}</p>
      {a.state_reason ? <p role="note">{a.state_reason}</p> : null}
      <CopyLinkButton />
      <dl className="facts">
        <div>
          <dt>Trail</dt>
          <dd>
            <Link to={historyLink(a)}>{trailText(a)}</Link> ({a.kind === 'overhead' ? 'overhead' : 'values'})
          </dd>
        </div>
        <div>
          <dt>Metric</dt>
          <dd>{info.title}</dd>
        </div>
        <div>
          <dt>Starts at</dt>
          <dd>
            <Link to={`/r/${encodeURIComponent(a.run)}`}>run {a.run}</Link>
            {a.agent_version ? ` (agent ${a.agent_version})` : ''}
          </dd>
        </div>
        {a.detected_by && a.detected_by !== a.run ? (
          <div>
            <dt>Detected by</dt>
            <dd>
              <Link to={`/r/${encodeURIComponent(a.detected_by)}`}>run {a.detected_by}</Link>
            </dd>
          </div>
        ) : null}
        <div>
          <dt>Before → after ({unit})</dt>
          <dd>
            <span data-testid="before">{formatNumber(a.before_value)}</span> →{' '}
            <span data-testid="after">{formatNumber(a.after_value)}</span>
          </dd>
        </div>
        <div>
          <dt>Change</dt>
          <dd>
            {formatSigned(a.magnitude_abs)}
            {a.magnitude_rel !== null && a.magnitude_rel !== undefined ? ` (${formatSigned(a.magnitude_rel * 100)}%)` : ''}
          </dd>
        </div>
        <div>
          <dt>Confidence</dt>
          <dd>
            {a.p_value !== null && a.p_value !== undefined ? `p = ${a.p_value.toPrecision(2)}` : '—'}
            {a.effect_sigma !== null && a.effect_sigma !== undefined ? `, ${a.effect_sigma.toFixed(1)} σ` : ''}
          </dd>
        </div>
        <div>
          <dt>Raised</dt>
          <dd>{formatDateTime(a.created_at)}</dd>
        </div>
      </dl>
      {a.direction === 'regression' ? (
        <ProfilesAcross
          run={a.run}
          base="previous"
          variant={a.trail.variant}
          load={a.trail.load_key}
          heading="Where the CPU went at this change point"
        />
      ) : null}
      <h2>Triage</h2>
      <Triage key={a.id} alert={a} />
      <h2>History of this alert</h2>
      {a.events.length === 0 ? (
        <p className="muted">No changes yet: the alert is as the analysis raised it.</p>
      ) : (
        <DataTable model={eventsTable(a)} />
      )}
    </article>
  );
}
