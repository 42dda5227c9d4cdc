import { useQuery } from '@tanstack/react-query';
import type { ReactElement } from 'react';
import { Link } from 'react-router';
import { intervalText } from '@/lib/table';
import { ProfileDiffView } from './ProfileViews';
import { statsOf, UNIT } from './profileModel';
import { profileDiffQuery, profilesQuery } from './queries';

/**
 * One run's profiles against another's (Compare: run b against run a; an alert: its change point's run against
 * the latest profiled run before it, `base` "previous"): the frames that grew, then the whole differential
 * profile. Nothing when the run has no profiles.
 */
export function ProfilesAcross({ run, base, variant, load, heading }: {
  run: string;
  base: string;
  variant?: string;
  load?: string;
  heading: string;
}): ReactElement | null {
  const profiles = useQuery(profilesQuery(run));
  const has = (profiles.data?.items.length ?? 0) > 0;
  const diff = useQuery(profileDiffQuery(run, variant ?? null, load ?? null, base, has));
  if (!has) return null;
  if (diff.isPending) return <p className="state loading">Loading the profiles' difference…</p>;
  if (diff.error || !diff.data) {
    return (
      <section aria-label={heading}>
        <h2>{heading}</h2>
        <p className="muted">No profiles to compare: {diff.error ? String((diff.error as Error).message ?? diff.error) : 'none'}.</p>
      </section>
    );
  }
  const d = diff.data;
  const grew = d.frames.filter((f) => (f.self.ci_low ?? -1) > 0 || (f.total.ci_low ?? -1) > 0).slice(0, 5);
  const top = grew.length ? grew : d.frames.slice(0, 5);
  return (
    <section aria-label={heading}>
      <h2>{heading}</h2>
      <p>
        Variant <strong>{d.variant}</strong> at {d.load}: run <Link to={`/r/${d.run}`}>{d.run}</Link> against run{' '}
        <Link to={`/r/${d.base}`}>{d.base}</Link>, {intervalText(statsOf(d.whole), UNIT)} per 1,000 requests.{' '}
        {grew.length ? 'Frames that grew (their interval excludes 0):' : 'No frame grew beyond its noise; the largest differences:'}
      </p>
      <ol aria-label="Frames that grew">
        {top.map((f) => (
          <li key={f.name}>
            <code>{f.name}</code>
            {f.agent ? ' (agent)' : ''}: self {intervalText(statsOf(f.self), UNIT)}, total {intervalText(statsOf(f.total), UNIT)}
          </li>
        ))}
      </ol>
      <details>
        <summary>The whole differential profile</summary>
        <ProfileDiffView diff={d} sides={{ reference: `${d.reference} (${d.base})`, variant: `${d.variant} (${d.run})` }} />
      </details>
    </section>
  );
}
