import { useQuery } from '@tanstack/react-query';
import type { ReactElement } from 'react';
import { Link, useParams } from 'react-router';
import type { AlertOut } from '@/api/client';
import { CopyLinkButton } from '@/components/CopyLinkButton';
import { DataTable } from '@/components/DataTable';
import { ProjectTabs } from '@/components/ProjectTabs';
import { Badge, Empty, ErrorState, Loading } from '@/components/StateViews';
import { formatDateTime, formatSigned } from '@/lib/format';
import { metricInfo, metricsAt } from '@/lib/metrics';
import type { Row, TableModel } from '@/lib/table';
import { stringCodec, type Schema } from '@/lib/urlState';
import { useUrlState } from '@/lib/useUrlState';
import { ALERT_FILTER_STATES, alertsQuery } from '../api/queries';
import { historyLink, stateTone, trailText } from './alertLinks';

interface AlertListState {
  state: string;
  metric: string;
  direction: string;
  kind: string;
}

const SCHEMA: Schema<AlertListState> = {
  state: stringCodec(),
  metric: stringCodec(),
  direction: stringCodec(),
  kind: stringCodec(),
};

// The metrics a project analyses unless its settings say otherwise (the catalog's).
const METRICS = metricsAt('default');

type AlertRow = Row & { alert: AlertOut };

function alertsTable(alerts: AlertOut[]): TableModel<AlertRow> {
  return {
    title: 'Alerts',
    columns: [
      { key: 'alert', label: 'Alert', role: 'label' },
      { key: 'state', label: 'State', role: 'value' },
      { key: 'direction', label: 'Direction', role: 'value' },
      { key: 'kind', label: 'Kind', role: 'value' },
      { key: 'metric', label: 'Metric', role: 'value' },
      { key: 'trail', label: 'Trail', role: 'value', text: true },
      { key: 'run', label: 'Run', role: 'value' },
      { key: 'magnitude_abs', label: 'Change', role: 'value' },
      { key: 'magnitude_rel', label: 'Change (%)', role: 'value' },
      { key: 'assignee', label: 'Assignee', role: 'value' },
      { key: 'raised', label: 'Raised', role: 'value' },
    ],
    rowHeader: 'alert',
    rows: alerts.map((a) => ({
      id: String(a.id),
      alert: a,
      values: {
        alert: `#${a.id}`,
        state: a.state,
        direction: a.direction,
        kind: a.kind,
        metric: metricInfo(a.metric).title,
        trail: trailText(a),
        run: a.agent_version ?? a.run,
        magnitude_abs: a.magnitude_abs,
        magnitude_rel:
          a.magnitude_rel !== null && a.magnitude_rel !== undefined ? formatSigned(a.magnitude_rel * 100) : '—',
        assignee: a.assignee || '—',
        raised: formatDateTime(a.created_at),
      },
    })),
  };
}

export function AlertsPage(): ReactElement {
  const { slug = '' } = useParams();
  const [filters, setFilters] = useUrlState(SCHEMA);
  const query = {
    state: ALERT_FILTER_STATES.find((s) => s === filters.state),
    metric: filters.metric || undefined,
    direction: filters.direction || undefined,
    kind: filters.kind || undefined,
  };
  const alerts = useQuery(alertsQuery(slug, query));
  const filtered = Boolean(query.state || query.metric || query.direction || query.kind);
  const select = (key: keyof AlertListState, label: string, options: readonly string[], text = (o: string) => o): ReactElement => (
    <label>
      {label}
      <select value={filters[key]} onChange={(e) => setFilters({ [key]: e.target.value })}>
        <option value="">any</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {text(o)}
          </option>
        ))}
      </select>
    </label>
  );
  const metricOptions = [...new Set([...METRICS, ...(filters.metric ? [filters.metric] : [])])];

  return (
    <section>
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link to="/">Projects</Link> / <Link to={`/p/${encodeURIComponent(slug)}`}>{slug}</Link> / <span>Alerts</span>
      </nav>
      <h1>Alerts</h1>
      <ProjectTabs slug={slug} />
      <form className="filters" aria-label="Alert filters" onSubmit={(e) => e.preventDefault()}>
        {select('state', 'state', ALERT_FILTER_STATES)}
        {select('metric', 'metric', metricOptions, (m) => metricInfo(m).title)}
        {select('direction', 'direction', ['regression', 'improvement'])}
        {select('kind', 'kind', ['trail', 'overhead'], (k) => (k === 'trail' ? 'value trail' : 'overhead'))}
        <CopyLinkButton />
      </form>
      {alerts.isPending ? <Loading what="alerts" /> : null}
      {alerts.error ? <ErrorState error={alerts.error} what={`the alerts of '${slug}'`} /> : null}
      {alerts.data && alerts.data.items.length === 0 ? (
        filtered ? (
          <Empty title="No alert matches these filters.">
            <p>Set a filter back to “any” to see more.</p>
          </Empty>
        ) : (
          <Empty title="No alerts.">
            <p>
              Alerts are raised when a run changes a trail or an overhead beyond the project's thresholds. See the trails
              under <Link to={`/p/${encodeURIComponent(slug)}/history`}>History</Link>.
            </p>
          </Empty>
        )
      ) : null}
      {alerts.data && alerts.data.items.length > 0 ? (
        <DataTable
          model={alertsTable(alerts.data.items)}
          render={{
            alert: ({ alert: a }) => (
              <Link to={`/p/${encodeURIComponent(slug)}/alerts/${a.id}`} title={a.summary}>
                #{a.id}
              </Link>
            ),
            state: ({ alert: a }) => <Badge tone={stateTone(a.state)}>{a.state}</Badge>,
            direction: ({ alert: a }) => (
              <Badge tone={a.direction === 'regression' ? 'bad' : 'good'}>{a.direction}</Badge>
            ),
            trail: ({ alert: a }) => <Link to={historyLink(a)}>{trailText(a)}</Link>,
            run: ({ alert: a }) => <Link to={`/r/${encodeURIComponent(a.run)}`}>{a.agent_version ?? a.run}</Link>,
            // Overhead alerts change by percentage points of the reference, trails in the metric's unit.
            magnitude_abs: ({ alert: a }) =>
              a.kind === 'overhead' ? `${formatSigned(a.magnitude_abs)} pts` : formatSigned(a.magnitude_abs),
          }}
        />
      ) : null}
      {alerts.data && alerts.data.groups.length > 1 ? (
        <p className="muted">
          Raised by {alerts.data.groups.length} runs:{' '}
          {alerts.data.groups.map((g) => `${g.agent_version ?? g.run} (${g.alert_ids.length})`).join(', ')}.
        </p>
      ) : null}
      <p className="muted">
        Change is the level after minus the level before, in the metric's unit; for overhead alerts in percentage points
        of the reference.
      </p>
    </section>
  );
}
