import { useQuery } from '@tanstack/react-query';
import { useState, type ReactElement } from 'react';
import { Link, useParams } from 'react-router';
import { apiUrl } from '@/api/client';
import { ErrorState, Loading } from '@/components/StateViews';
import { snapshotQuery } from '../api/queries';
import { metricsAt } from '@/lib/metrics';

// Charts drawn on the server from the frozen data, in the order the run page shows its metrics.
const CHART_METRICS = metricsAt('chart');

/** A frozen view: what a run, compare or history page showed when someone froze it, never changed by later analysis. */
export function SnapshotPage(): ReactElement {
  const { snapshotSlug = '' } = useParams();
  const { data, error, isPending } = useQuery(snapshotQuery(snapshotSlug));
  const [copied, setCopied] = useState(false);
  if (isPending) return <Loading what={`snapshot ${snapshotSlug}`} />;
  if (error) return <ErrorState error={error} what={`snapshot '${snapshotSlug}'`} />;
  const run = data.kind === 'run' ? (data.data.run as { slug: string; cells: Record<string, unknown>[] }) : null;
  const metrics = run ? CHART_METRICS.filter((m) => run.cells.some((c) => c[m] !== null && c[m] !== undefined)) : [];
  const viewPath = typeof data.view.path === 'string' && data.view.path ? data.view.path : run ? `/r/${run.slug}` : '/';
  const live = `${viewPath}${data.view.query ? `?${String(data.view.query)}` : ''}`;
  const copy = async (): Promise<void> => {
    await navigator.clipboard?.writeText(data.markdown).catch(() => undefined);
    setCopied(true);
  };
  return (
    <article>
      <h1>{data.title}</h1>
      <p>
        Frozen on {new Date(data.created_at).toLocaleString()} by {data.created_by}. This page keeps these numbers even if the
        {data.kind === 'run' ? ' run is ' : ' runs are '}
        analysed again; <Link to={live}>open the live view</Link>.
      </p>
      <section aria-labelledby="snapshot-md">
        <h2 id="snapshot-md">Tables (Markdown)</h2>
        <button type="button" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy Markdown'}
        </button>{' '}
        <a href={apiUrl(`/api/v1/snapshots/${snapshotSlug}/markdown`)}>Download .md</a>
        <pre className="markdown" tabIndex={0} aria-label="The snapshot's tables as Markdown">
          {data.markdown}
        </pre>
      </section>
      <section aria-labelledby="snapshot-charts">
        <h2 id="snapshot-charts">Charts</h2>
        {run
          ? metrics.map((m) => (
              <FrozenImage key={m} path={`/api/v1/snapshots/${snapshotSlug}/charts/${m}.svg`} alt={`${m} of each scenario and load, per variant (frozen)`} />
            ))
          : (
              <FrozenImage
                path={`/api/v1/snapshots/${snapshotSlug}/chart.svg`}
                alt={data.kind === 'compare' ? `${data.title}: change per cell with its 95% interval (frozen)` : `${data.title} (frozen)`}
              />
            )}
      </section>
    </article>
  );
}

function FrozenImage({ path, alt }: { path: string; alt: string }): ReactElement {
  const src = apiUrl(path);
  return (
    <figure>
      <img src={src} alt={alt} loading="lazy" />
      <figcaption>
        Embed: <code>{`![${alt}](${new URL(src, window.location.href).href})`}</code>
      </figcaption>
    </figure>
  );
}
