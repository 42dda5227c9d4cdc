import type { ReactElement } from 'react';
import { Link } from 'react-router';
import type { RunDetail } from '@/api/client';
import { CopyLinkButton } from '@/components/CopyLinkButton';
import { Badge } from '@/components/StateViews';
import { DataTable } from '@/components/DataTable';
import { formatDateTime } from '@/lib/format';
import type { TableModel } from '@/lib/table';

function describeEnvironment(run: RunDetail): string {
  const e = run.environment_detail;
  if (!e) return run.environment ?? 'not recorded';
  const hw = [
    e.instance_type,
    e.cpus !== null ? `${e.cpus} CPU` : null,
    e.memory_mb !== null ? `${(e.memory_mb / 1024).toFixed(e.memory_mb % 1024 ? 1 : 0)} GB` : null,
  ].filter(Boolean);
  return [e.name, hw.join(' '), e.os, e.runtime].filter(Boolean).join(' · ');
}

function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function FailureDetail({ detail }: { detail: Record<string, unknown> }): ReactElement {
  const where = [detail.file ? `file ${text(detail.file)}` : '', detail.line ? `line ${text(detail.line)}` : '',
    detail.field ? `field ${text(detail.field)}` : ''].filter(Boolean).join(', ');
  return (
    <div role="alert" className="state error">
      <strong>This run failed{where ? ` at ${where}` : ''}.</strong>
      <p>{text(detail.reason ?? detail.detail ?? JSON.stringify(detail))}</p>
      <p>
        Nothing was stored from the rejected files. Fix the file (or pass <code>format=</code> / load options for it) and
        upload again; the raw files below can be downloaded to check.
      </p>
    </div>
  );
}

type Check = RunDetail['validity'][number];

function CheckList({ title, label, checks }: { title: string; label?: string; checks: Check[] }): ReactElement | null {
  if (!checks.length) return null;
  return (
    <div className="state warn" role="note" aria-label={label}>
      <strong>{title}</strong>
      <ul>
        {checks.map((v, i) => (
          <li key={i}>
            {text(v.check)}
            {v.load ? ` at ${text(v.load)}` : ''}: {text(v.detail)}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Criteria and validity checks as one line ("criteria 10/12 pass · validity ok") that expands to the detail. */
function ChecksSummary({ run }: { run: RunDetail }): ReactElement | null {
  const failed = run.validity.filter((v) => v.ok === false || v.valid === false);
  // Warnings (severity "warning", e.g. the delayed-ACK plateau) leave the run valid but say why to doubt it.
  const invalid = failed.filter((v) => v.severity !== 'warning');
  const warnings = failed.filter((v) => v.severity === 'warning');
  if (!run.criteria.length && !run.validity.length) return null;
  const failedCriteria = run.criteria.filter((c) => c.ok === false).length;
  const passed = run.criteria.filter((c) => c.ok === true).length;
  const criteria: TableModel = {
    title: 'Pass/fail criteria',
    columns: [
      { key: 'criterion', label: 'Criterion', role: 'label' },
      { key: 'variant', label: 'Variant', role: 'value' },
      { key: 'scenario', label: 'Scenario', role: 'value' },
      { key: 'load', label: 'Load', role: 'value' },
      { key: 'observed', label: 'Observed', role: 'value' },
      { key: 'result', label: 'Result', role: 'value' },
    ],
    rows: run.criteria.map((c, i) => ({
      id: String(i),
      values: {
        criterion: text(c.criterion),
        variant: text(c.variant ?? 'all'),
        scenario: text(c.scenario ?? 'all'),
        load: text(c.load ?? '—'),
        observed: typeof c.observed === 'number' ? c.observed : null,
        result: c.ok === true ? 'pass' : c.ok === false ? 'FAIL' : '—',
      },
    })),
  };
  return (
    <details className="summary-line" open={invalid.length > 0 || warnings.length > 0}>
      <summary>
        {run.criteria.length ? (
          <>
            Criteria: {passed} of {run.criteria.length} pass
            {failedCriteria ? <Badge tone="bad">{failedCriteria} failed</Badge> : <Badge tone="good">all pass</Badge>}
          </>
        ) : (
          'No criteria'
        )}
        {' · '}
        Validity: {run.validity.length} check{run.validity.length === 1 ? '' : 's'}
        {invalid.length ? <Badge tone="bad">{invalid.length} failed</Badge> : <Badge tone="good">ok</Badge>}
        {warnings.length ? <Badge tone="warn">{warnings.length} warning{warnings.length === 1 ? '' : 's'}</Badge> : null}
      </summary>
      <CheckList title="Validity checks failed:" checks={invalid} />
      <CheckList title="Validity warnings:" label="Validity warnings" checks={warnings} />
      {run.criteria.length ? <DataTable model={criteria} /> : null}
    </details>
  );
}

export function RunHeader({ run }: { run: RunDetail }): ReactElement {
  return (
    <header className="run-header">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link to="/">Projects</Link> / <Link to={`/p/${encodeURIComponent(run.project)}`}>{run.project}</Link> /{' '}
        <span>run {run.slug}</span>
      </nav>
      <h1>
        Run {run.slug}{' '}
        <Badge tone={run.status === 'completed' ? 'good' : run.status === 'failed' ? 'bad' : 'info'}>{run.status}</Badge>{' '}
        {run.is_valid ? <Badge tone="good">valid</Badge> : <Badge tone="warn">invalid</Badge>}
      </h1>
      <CopyLinkButton />
      <dl className="facts">
        <div>
          <dt>Environment</dt>
          <dd>{describeEnvironment(run)}</dd>
        </div>
        <div>
          <dt>Tool</dt>
          <dd>{run.tool ?? '—'}</dd>
        </div>
        <div>
          <dt>Agent version</dt>
          <dd>{run.agent_version ?? '—'}</dd>
        </div>
        <div>
          <dt>App version</dt>
          <dd>{run.app_version ?? '—'}</dd>
        </div>
        <div>
          <dt>Commit</dt>
          <dd>
            <code>{run.commit ?? '—'}</code>
            {run.branch ? ` on ${run.branch}` : ''}
          </dd>
        </div>
        <div>
          <dt>Source</dt>
          <dd>{run.source}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{formatDateTime(run.started_at ?? run.created_at)}</dd>
        </div>
        {run.remeasured_at ? (
          <div>
            <dt>Measured again</dt>
            <dd title="Its cells were read again from its stored files by a newer Benchtrail (benchtrail admin reingest)">
              {formatDateTime(run.remeasured_at)}, from its stored files
            </dd>
          </div>
        ) : null}
        <div>
          <dt>Variants</dt>
          <dd>
            {run.variants.map((v) => (
              <span key={v.id} className="chip">
                {v.name}
                {v.is_reference ? ' (reference)' : ''}
              </span>
            ))}
          </dd>
        </div>
        {run.shares?.length ? (
          <div>
            <dt>Load generators</dt>
            <dd aria-label="Load generators">
              {run.shares.map((s) => (
                <span key={s.index} className="chip" title={s.reason ?? undefined}>
                  share {s.index + 1}/{run.shares.length}: {s.runner ?? 'not claimed'}
                  {s.host ? ` on ${s.host}` : ''} · {s.status}
                </span>
              ))}
            </dd>
          </div>
        ) : null}
        {Object.keys(run.labels).length ? (
          <div>
            <dt>Labels</dt>
            <dd>
              {Object.entries(run.labels).map(([k, v]) => (
                <span key={k} className="chip">
                  {k}: {v}
                </span>
              ))}
            </dd>
          </div>
        ) : null}
      </dl>
      {run.status === 'failed' && run.status_detail ? <FailureDetail detail={run.status_detail} /> : null}
      <ChecksSummary run={run} />
      {run.alerts?.length ? (
        <div className="state warn" role="note" aria-label="Alerts raised by this run">
          <strong>
            {run.alerts.length} alert{run.alerts.length > 1 ? 's' : ''} raised by this run:
          </strong>
          <ul>
            {run.alerts.map((a) => (
              <li key={a.id}>
                <Badge tone={a.state === 'open' || a.state === 'new' ? 'bad' : 'info'}>{a.state}</Badge>{' '}
                <Link to={`/p/${encodeURIComponent(run.project)}/alerts/${a.id}`}>{a.summary}</Link>
                {a.magnitude_rel !== null ? ` (${(a.magnitude_rel * 100).toFixed(1)}%)` : ''}
                {a.p_value !== null ? `, p = ${a.p_value.toPrecision(2)}` : ''}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {run.files.length ? (
        <details className="files">
          <summary>Raw files ({run.files.length})</summary>
          <ul>
            {run.files.map((f) => (
              <li key={f.id}>
                <a href={f.download_url} download={f.filename}>
                  {f.filename}
                </a>{' '}
                <span className="muted">
                  {f.variant} · {f.format}
                  {f.share !== null && f.share !== undefined ? ` · share ${f.share + 1}` : ''} · {(f.size / 1024).toFixed(1)} KiB · sha256 {f.sha256.slice(0, 12)}
                </span>
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </header>
  );
}
