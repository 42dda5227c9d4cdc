import { useQuery } from '@tanstack/react-query';
import { useState, type ReactElement, type ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import type { RunSummary } from '@/api/client';
import { CopyLinkButton } from '@/components/CopyLinkButton';
import { ProjectTabs } from '@/components/ProjectTabs';
import { DataTable } from '@/components/DataTable';
import { Badge, Empty, ErrorState, Loading } from '@/components/StateViews';
import { formatDateTime } from '@/lib/format';
import type { Column, Row, TableModel } from '@/lib/table';
import { stringCodec, type Schema } from '@/lib/urlState';
import { useUrlState } from '@/lib/useUrlState';
import { projectQuery, projectRunsQuery } from '../api/queries';

interface Filters {
  agent_version: string;
  branch: string;
  environment: string;
  status: string;
  page: string;
}

const SCHEMA: Schema<Filters> = {
  agent_version: stringCodec(),
  branch: stringCodec(),
  environment: stringCodec(),
  status: stringCodec(),
  page: stringCodec('1'),
};

const PER_PAGE = 25;

function statusTone(status: string): 'good' | 'bad' | 'warn' | 'info' {
  if (status === 'completed') return 'good';
  if (status === 'failed' || status === 'cancelled') return 'bad';
  return 'info';
}

type RunRow = Row & { run: RunSummary };

function runsTable(runs: RunSummary[]): TableModel<RunRow> {
  const label = (key: string, text: string): Column => ({ key, label: text, role: 'label' });
  return {
    title: 'Runs',
    rowHeader: 'run',
    columns: [
      label('compare', 'Compare'),
      label('run', 'Run'),
      label('created', 'Created'),
      label('status', 'Status'),
      label('agent_version', 'Agent version'),
      label('app_version', 'App version'),
      label('branch', 'Branch'),
      label('commit', 'Commit'),
      label('tool', 'Tool'),
      label('environment', 'Environment'),
    ],
    rows: runs.map((r) => ({
      id: r.slug,
      run: r,
      values: {
        compare: null,
        run: r.slug,
        created: formatDateTime(r.created_at),
        status: r.is_valid ? r.status : `${r.status} (invalid)`,
        agent_version: r.agent_version ?? '—',
        app_version: r.app_version ?? '—',
        branch: r.branch ?? '—',
        commit: r.commit ? r.commit.slice(0, 12) : '—',
        tool: r.tool ?? '—',
        environment: r.environment ?? '—',
      },
    })),
  };
}

export function UploadHint({ slug }: { slug: string }): ReactElement {
  const origin = window.location.origin;
  return (
    <>
      <p>Upload the raw output of your load tool, one file per variant, with the CLI:</p>
      <pre>{`benchtrail upload --url ${origin} --token $BENCHTRAIL_TOKEN --project ${slug} \\
  --variant baseline=baseline.jtl --variant agent=agent.jtl \\
  --agent-version 2.4.0 --commit $(git rev-parse HEAD) --wait`}</pre>
      <p>
        The token needs the uploader role on <code>{slug}</code>. JMeter, hey, wrk, k6, Locust, Gatling and JMH output
        are recognised; options per file follow the file name, e.g. <code>agent=hey.txt;concurrency=50;scenario=static</code>.
      </p>
    </>
  );
}

/** `overview`: what other features show at the top of a project (composed by the app, not imported here). */
export function ProjectPage({ overview }: { overview?: ReactNode }): ReactElement {
  const { slug = '' } = useParams();
  const [filters, setFilters] = useUrlState(SCHEMA);
  const [picked, setPicked] = useState<string[]>([]);
  const project = useQuery(projectQuery(slug));
  const query = {
    agent_version: filters.agent_version || undefined,
    branch: filters.branch || undefined,
    environment: filters.environment || undefined,
    status: filters.status || undefined,
    page: Number(filters.page) || 1,
    per_page: PER_PAGE,
  };
  const runs = useQuery(projectRunsQuery(slug, query));

  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorState error={project.error} what={`project '${slug}'`} />;
  const p = project.data;
  const togglePick = (run: RunSummary): void =>
    setPicked((prev) => (prev.includes(run.slug) ? prev.filter((s) => s !== run.slug) : [...prev, run.slug].slice(-2)));
  const filtered = Boolean(filters.agent_version || filters.branch || filters.environment || filters.status);
  const page = runs.data;

  return (
    <section>
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link to="/">Projects</Link> / <span>{p.name}</span>
      </nav>
      <h1>{p.name}</h1>
      {p.description ? <p>{p.description}</p> : null}
      <dl className="facts">
        <div>
          <dt>Runs</dt>
          <dd>{p.run_count}</dd>
        </div>
        <div>
          <dt>Latest run</dt>
          <dd>{formatDateTime(p.latest_run_at)}</dd>
        </div>
        <div>
          <dt>Open alerts</dt>
          <dd>
            {p.open_alerts ? (
              <Link to={`/p/${encodeURIComponent(slug)}/alerts`}>
                <Badge tone="bad">{p.open_alerts} open</Badge>
              </Link>
            ) : (
              'none'
            )}
          </dd>
        </div>
      </dl>
      <ProjectTabs slug={slug} />
      {overview}

      <h2>Runs</h2>
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Run filters">
        {(['agent_version', 'branch', 'environment', 'status'] as const).map((key) => (
          <label key={key}>
            {key.replace('_', ' ')}
            <input
              value={filters[key]}
              onChange={(e) => setFilters({ [key]: e.target.value, page: '1' })}
              placeholder="any"
            />
          </label>
        ))}
        <CopyLinkButton />
      </form>
      {picked.length === 2 ? (
        <p>
          <Link to={`/compare?a=${encodeURIComponent(picked[0])}&b=${encodeURIComponent(picked[1])}`}>
            Compare {picked[0]} → {picked[1]}
          </Link>
        </p>
      ) : (
        <p className="muted">Tick two runs to compare them.</p>
      )}
      {runs.isPending ? <Loading what="runs" /> : null}
      {runs.error ? <ErrorState error={runs.error} what="runs" /> : null}
      {page && page.items.length === 0 ? (
        filtered ? (
          <Empty title="No run matches these filters.">
            <p>Clear a filter above to see more runs.</p>
          </Empty>
        ) : (
          <Empty title="No runs yet.">
            <UploadHint slug={slug} />
          </Empty>
        )
      ) : null}
      {page && page.items.length > 0 ? (
        <>
          <DataTable
            model={runsTable(page.items)}
            render={{
              compare: ({ run: r }) => (
                <input
                  type="checkbox"
                  aria-label={`Pick run ${r.slug} for comparison`}
                  checked={picked.includes(r.slug)}
                  onChange={() => togglePick(r)}
                />
              ),
              run: ({ run: r }) => <Link to={`/r/${encodeURIComponent(r.slug)}`}>{r.slug}</Link>,
              status: ({ run: r }) => (
                <>
                  <Badge tone={statusTone(r.status)}>{r.status}</Badge>
                  {r.is_valid ? null : <Badge tone="warn">invalid</Badge>}
                </>
              ),
              commit: ({ run: r }) => <code>{r.commit ? r.commit.slice(0, 12) : '—'}</code>,
            }}
          />
          <div className="pager">
            <button type="button" disabled={page.page <= 1} onClick={() => setFilters({ page: String(page.page - 1) })}>
              Newer
            </button>
            <span>
              page {page.page} of {Math.max(1, Math.ceil(page.total / page.per_page))} ({page.total} runs)
            </span>
            <button
              type="button"
              disabled={page.page * page.per_page >= page.total}
              onClick={() => setFilters({ page: String(page.page + 1) })}
            >
              Older
            </button>
          </div>
        </>
      ) : null}
    </section>
  );
}
