import { useQuery } from '@tanstack/react-query';
import type { ReactElement } from 'react';
import { Link, useParams } from 'react-router';
import type { PlanOut } from '@/api/client';
import { CopyLinkButton } from '@/components/CopyLinkButton';
import { ProjectTabs } from '@/components/ProjectTabs';
import { Empty, ErrorState, Loading } from '@/components/StateViews';
import { DataTable } from '@/components/DataTable';
import { planText } from '../planText';
import { formatDateTime } from '@/lib/format';
import { enumCodec, stringCodec, type Schema } from '@/lib/urlState';
import { useUrlState } from '@/lib/useUrlState';
import { plansQuery, planVersionsQuery } from '../api/queries';
import { SchedulesSection } from './SchedulesSection';
import { StartRunForm } from './StartRunForm';

interface PlansViewState {
  plan: string;
  version: string;
  format: 'yaml' | 'json';
}

const SCHEMA: Schema<PlansViewState> = {
  plan: stringCodec(),
  version: stringCodec(),
  format: enumCodec(['yaml', 'json'] as const, 'yaml'),
};

function PlanDetail({ slug, latest, state, setState }: {
  slug: string;
  latest: PlanOut;
  state: PlansViewState;
  setState: (patch: Partial<PlansViewState>) => void;
}): ReactElement {
  const versions = useQuery(planVersionsQuery(slug, latest.name));
  const all = versions.data?.items ?? [latest];
  const plan = all.find((p) => String(p.version) === state.version) ?? all.find((p) => p.version === latest.version) ?? latest;
  const body = planText(plan, state.format);
  return (
    <section aria-labelledby="plan-h">
      <h2 id="plan-h">
        Plan {plan.name} <span className="muted">version {plan.version}</span>
      </h2>
      {versions.error ? <ErrorState error={versions.error} what="the plan's versions" /> : null}
      <div className="form-grid">
        <label>
          Version
          <select value={String(plan.version)} onChange={(e) => setState({ version: e.target.value })}>
            {all.map((p) => (
              <option key={p.version} value={String(p.version)}>
                {p.version} — {formatDateTime(p.created_at)}
                {p.version === latest.version ? ' (latest)' : ''}
              </option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>Show as</legend>
          <label>
            <input type="radio" name="format" checked={state.format === 'yaml'} onChange={() => setState({ format: 'yaml' })} /> YAML
          </label>{' '}
          <label>
            <input type="radio" name="format" checked={state.format === 'json'} onChange={() => setState({ format: 'json' })} /> JSON
          </label>
        </fieldset>
      </div>
      <p className="muted">
        {state.format === 'json'
          ? 'The stored body as JSON.'
          : body.origin === 'saved'
            ? 'The YAML as it was saved, comments and key order included.'
            : 'This version was saved as JSON; shown here as YAML.'}
      </p>
      <pre aria-label="Plan body" tabIndex={0}>{body.text}</pre>
      <h3>Start a run</h3>
      <p className="muted">
        The run is queued for a runner on pool <code>{plan.pool}</code>; its page shows progress live.
      </p>
      <StartRunForm slug={slug} plan={plan.name} version={plan.version} />
    </section>
  );
}

export function PlansPage(): ReactElement {
  const { slug = '' } = useParams();
  const [state, setState] = useUrlState(SCHEMA);
  const plans = useQuery(plansQuery(slug));
  const header = (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link to="/">Projects</Link> / <Link to={`/p/${encodeURIComponent(slug)}`}>{slug}</Link> / <span>Plans</span>
      </nav>
      <h1>Plans &amp; schedules</h1>
      <ProjectTabs slug={slug} />
    </>
  );
  if (plans.isPending) return <section>{header}<Loading what="plans" /></section>;
  if (plans.error) return <section>{header}<ErrorState error={plans.error} what={`the plans of '${slug}'`} /></section>;
  const items = plans.data.items;
  const selected = items.find((p) => p.name === state.plan) ?? items[0];
  return (
    <section>
      {header}
      <h2>Plans</h2>
      {items.length === 0 ? (
        <Empty title="No plans yet.">
          <p>A plan says how to run a benchmark (tool, targets per variant, scenarios, load levels). Store one as YAML or JSON with an admin token:</p>
          <pre>{`curl -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/yaml' \\
  --data-binary @plan.yaml ${window.location.origin}/api/v1/projects/${slug}/plans`}</pre>
          <p>
            Examples are in <code>examples/plans/</code>; the schema is <code>docs/plans/plan-v1.schema.json</code>.
          </p>
        </Empty>
      ) : (
        <>
          <DataTable
            model={{
              title: 'Plans',
              columns: [
                { key: 'name', label: 'Plan', role: 'label' },
                { key: 'version', label: 'Latest version', role: 'value' },
                { key: 'tool', label: 'Tool', role: 'value' },
                { key: 'pool', label: 'Pool', role: 'value' },
                { key: 'variants', label: 'Variants', role: 'value' },
                { key: 'saved', label: 'Saved', role: 'value' },
              ],
              rows: items.map((p) => ({
                id: p.name,
                href: `?plan=${encodeURIComponent(p.name)}`,
                values: {
                  name: p.name,
                  version: p.version,
                  tool: String(p.body.tool ?? '—'),
                  pool: p.pool,
                  variants: Array.isArray(p.body.variants) ? p.body.variants.length : null,
                  saved: formatDateTime(p.created_at),
                },
              })),
            }}
          />
          <CopyLinkButton />
          {selected ? (
            <PlanDetail
              key={selected.name}
              slug={slug}
              latest={selected}
              state={state}
              setState={(patch) => setState({ plan: selected.name, ...patch })}
            />
          ) : null}
        </>
      )}
      <SchedulesSection slug={slug} planNames={items.map((p) => p.name)} />
    </section>
  );
}
