import type { ReactElement } from 'react';
import { NavLink } from 'react-router';

/** The project's sections; each is its own permalinked page. */
export function ProjectTabs({ slug }: { slug: string }): ReactElement {
  const base = `/p/${encodeURIComponent(slug)}`;
  return (
    <nav aria-label="Project" className="tabs">
      <NavLink to={base} end>
        Runs
      </NavLink>
      <NavLink to={`${base}/history`}>History</NavLink>
      <NavLink to={`${base}/alerts`}>Alerts</NavLink>
      <NavLink to={`${base}/plans`}>Plans &amp; schedules</NavLink>
    </nav>
  );
}
