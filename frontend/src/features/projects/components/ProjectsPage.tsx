import { useQuery } from '@tanstack/react-query';
import type { ReactElement } from 'react';
import { Link } from 'react-router';
import { Badge, Empty, ErrorState, Loading } from '@/components/StateViews';
import { formatDateTime } from '@/lib/format';
import { projectsQuery } from '../api/queries';

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
        <table aria-label="Projects">
          <thead>
            <tr>
              <th scope="col">Project</th>
              <th scope="col">Description</th>
              <th scope="col">Runs</th>
              <th scope="col">Latest run</th>
              <th scope="col">Open alerts</th>
            </tr>
          </thead>
          <tbody>
            {data.items.map((p) => (
              <tr key={p.slug}>
                <th scope="row">
                  <Link to={`/p/${encodeURIComponent(p.slug)}`}>{p.name}</Link>
                  {p.is_public ? null : <Badge tone="info">private</Badge>}
                </th>
                <td>{p.description}</td>
                <td>{p.run_count}</td>
                <td>{formatDateTime(p.latest_run_at)}</td>
                <td>{p.open_alerts ? <Badge tone="bad">{p.open_alerts}</Badge> : '0'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
