import { useQuery } from '@tanstack/react-query';
import type { ReactElement, ReactNode } from 'react';
import type { ProjectOut } from '@/api/client';
import { Link } from 'react-router';
import { DataTable } from '@/components/DataTable';
import { Badge, Empty, ErrorState, Loading } from '@/components/StateViews';
import { formatDateTime } from '@/lib/format';
import type { Row, TableModel } from '@/lib/table';
import { projectsQuery } from '../api/queries';

type ProjectRow = Row & { project: ProjectOut };

function projectsTable(projects: ProjectOut[]): TableModel<ProjectRow> {
  return {
    title: 'Projects',
    columns: [
      { key: 'project', label: 'Project', role: 'label' },
      { key: 'description', label: 'Description', role: 'value', text: true },
      { key: 'runs', label: 'Runs', role: 'value' },
      { key: 'latest', label: 'Latest run', role: 'value' },
      { key: 'alerts', label: 'Open alerts', role: 'value' },
    ],
    rows: projects.map((p) => ({
      id: p.slug,
      project: p,
      values: {
        project: p.name,
        description: p.description,
        runs: p.run_count,
        latest: formatDateTime(p.latest_run_at),
        alerts: p.open_alerts,
      },
    })),
  };
}

const PROJECT_CELLS: Partial<Record<string, (row: ProjectRow) => ReactNode>> = {
  project: ({ project: p }) => (
    <>
      <Link to={`/p/${encodeURIComponent(p.slug)}`}>{p.name}</Link>
      {p.is_public ? null : <Badge tone="info">private</Badge>}
    </>
  ),
  alerts: ({ project: p }) => (p.open_alerts ? <Badge tone="bad">{p.open_alerts}</Badge> : '0'),
};

export function ProjectsPage(): ReactElement {
  const { data, error, isPending } = useQuery(projectsQuery());
  if (isPending) return <Loading what="projects" />;
  if (error) return <ErrorState error={error} what="projects" />;
  return (
    <section>
      <h1>Projects</h1>
      {data.items.length === 0 ? (
        <Empty title="No projects yet.">
          <p>A site admin creates one on the server host:</p>
          <pre>benchtrail admin create-project my-agent</pre>
          <p>or through the API with a site admin token:</p>
          <pre>{`curl -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \\
  -d '{"slug":"my-agent"}' ${window.location.origin}/api/v1/projects`}</pre>
        </Empty>
      ) : (
        <DataTable model={projectsTable(data.items)} render={PROJECT_CELLS} />
      )}
    </section>
  );
}
