import { useQuery } from '@tanstack/react-query';
import type { ReactElement } from 'react';
import type { RunDetail } from '@/api/client';
import { FlameGraph, ProfileDiffView } from '@/components/profiles/ProfileViews';
import { flameQuery, profileDiffQuery, profilesQuery } from '@/components/profiles/queries';
import { ErrorState, Loading } from '@/components/StateViews';

function VariantFlame({ slug, variant, load, scenario }: { slug: string; variant: string; load: string; scenario: string }): ReactElement {
  const { data, error, isPending } = useQuery(flameQuery(slug, variant, load, true, scenario));
  if (isPending) return <Loading what={`the flame graph of ${variant}`} />;
  if (error) return <ErrorState error={error} what={`the flame graph of ${variant}`} />;
  return <FlameGraph flame={data} title={`Flame graph: ${variant} (CPU-ms per 1,000 requests)`} />;
}

function Differential({ slug, load, scenario, reference, variant }: {
  slug: string; load: string; scenario: string; reference: string; variant: string;
}): ReactElement {
  const { data, error, isPending } = useQuery(profileDiffQuery(slug, variant, load, null, true, scenario));
  if (isPending) return <Loading what="the differential profile" />;
  if (error) return <ErrorState error={error} what="the differential profile" />;
  return <ProfileDiffView diff={data} sides={{ reference, variant }} />;
}

/** CPU profiles of the run's variants (plan `profile`): nothing at all for a run without them. */
export function ProfilesSection({ run, variant, load, scenario, onScenario }: {
  run: RunDetail;
  variant?: string;
  load?: string;
  scenario?: string;
  onScenario: (scenario: string) => void;
}): ReactElement | null {
  const { data } = useQuery(profilesQuery(run.slug));
  const items = data?.items ?? [];
  if (!items.length) return null;
  const loads = [...new Set(items.map((p) => p.load))];
  const chosenLoad = load && loads.includes(load) ? load : loads[0];
  const scenarios = [...new Set(items.filter((p) => p.load === chosenLoad).map((p) => p.scenario))];
  const chosenScenario = scenario && scenarios.includes(scenario) ? scenario : scenarios.includes('*') ? '*' : scenarios[0];
  const here = items.filter((p) => p.load === chosenLoad && p.scenario === chosenScenario);
  const profiled = run.variants.map((v) => v.name).filter((v) => here.some((p) => p.variant === v));
  const reference = run.variants.find((v) => v.is_reference)?.name;
  const compared = variant && variant !== reference && profiled.includes(variant) ? variant : profiled.find((v) => v !== reference);
  const label = run.loads.find((l) => l.key === chosenLoad)?.label ?? chosenLoad;
  const runtimes = [...new Set(items.map((p) => `${p.runtime} (${p.source})`))].join(', ');
  return (
    <section aria-labelledby="profiles-heading" className="profiles">
      <h2 id="profiles-heading">Where the CPU goes: profiles at {label}</h2>
      {scenarios.length > 1 ? (
        <label>
          Scenario{' '}
          <select value={chosenScenario} onChange={(e) => onScenario(e.target.value)}>
            {scenarios.map((s) => (
              <option key={s} value={s}>
                {s === '*' ? 'every scenario at once' : s}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <p className="muted">
        {items.length} profiles ({runtimes}) of the measured steps; each normalised by its step's requests.
      </p>
      {data?.profiler_cost.length ? (
        <ul aria-label="The profiler's own cost">
          {data.profiler_cost.map((c) => (
            <li key={`${c.variant}-${c.scenario}-${c.load}`}>
              The profiler's own cost on {c.variant} ({c.scenario}): throughput of profiled against unprofiled repetitions{' '}
              {c.throughput.rel_diff === null || c.throughput.rel_diff === undefined ? '—' : `${(c.throughput.rel_diff * 100).toFixed(1)}%`}
              {c.throughput.ci_low_rel != null && c.throughput.ci_high_rel != null
                ? ` [${(c.throughput.ci_low_rel * 100).toFixed(1)}%, ${(c.throughput.ci_high_rel * 100).toFixed(1)}%]`
                : ''}{' '}
              ({c.throughput.verdict}).
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">
          The profiler's own cost is not measured in this run (profile every other repetition, <code>repetitions: odd</code>,
          to measure it here); <code>make bench-profile</code> measures it on the demo, profiling on against off.
        </p>
      )}
      {reference && compared && profiled.includes(reference) ? (
        <Differential slug={run.slug} load={chosenLoad} scenario={chosenScenario} reference={reference} variant={compared} />
      ) : null}
      {profiled.map((v) => (
        <VariantFlame key={v} slug={run.slug} variant={v} load={chosenLoad} scenario={chosenScenario} />
      ))}
      <details>
        <summary>Raw profiles ({items.length})</summary>
        <ul>
          {items.map((p) => (
            <li key={p.id}>
              {p.variant}, {p.load}, repetition {p.repetition}: {p.samples} samples, {p.cpu_ms.toFixed(0)} CPU-ms over {p.requests ?? '?'} requests
              {p.raw_files.map((f) => (
                <span key={f.id}>
                  {' '}
                  <a href={f.download_url} download>
                    {f.filename}
                  </a>
                </span>
              ))}
            </li>
          ))}
        </ul>
      </details>
    </section>
  );
}
