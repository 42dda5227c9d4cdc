import { useQuery } from '@tanstack/react-query';
import { useState, type ReactElement } from 'react';
import { Link, useParams } from 'react-router';
import { apiUrl } from '@/api/client';
import { ErrorState, Loading } from '@/components/StateViews';
import { snapshotQuery } from '../api/queries';

// Charts drawn on the server from the frozen data, in the order the run page shows its metrics.
const CHART_METRICS = ['latency_p75', 'latency_mean', 'throughput', 'cpu_pct', 'heap_mb', 'score'];

/** A frozen view: what a run page showed when someone froze it, never changed by later analysis. */
export function SnapshotPage(): ReactElement {
  const { snapshotSlug = '' } = useParams();
  const { data, error, isPending } = useQuery(snapshotQuery(snapshotSlug));
  const [copied, setCopied] = useState(false);
  if (isPending) return <Loading what={`snapshot ${snapshotSlug}`} />;
  if (error) return <ErrorState error={error} what={`snapshot '${snapshotSlug}'`} />;
  const run = data.data.run as { slug: string; cells: Record<string, unknown>[] };
  const metrics = CHART_METRICS.filter((m) => run.cells.some((c) => c[m] !== null && c[m] !== undefined));
  const live = typeof data.view.path === 'string' ? `${data.view.path}${data.view.query ? `?${String(data.view.query)}` : ''}` : `/r/${run.slug}`;
  const copy = async (): Promise<void> => {
    await navigator.clipboard?.writeText(data.markdown).catch(() => undefined);
    setCopied(true);
  };
  return (
    <article>
      <h1>{data.title}</h1>
      <p>
        Frozen on {new Date(data.created_at).toLocaleString()} by {data.created_by}. This page keeps these numbers even if the run is
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
        {metrics.map((m) => {
          const src = apiUrl(`/api/v1/snapshots/${snapshotSlug}/charts/${m}.svg`);
          return (
            <figure key={m}>
              <img src={src} alt={`${m} of each scenario and load, per variant (frozen)`} loading="lazy" />
              <figcaption>
                Embed: <code>{`![${m}](${new URL(src, window.location.href).href})`}</code>
              </figcaption>
            </figure>
          );
        })}
      </section>
    </article>
  );
}
