import type { ReactElement } from 'react';
import type { RunDetail } from '@/api/client';
import { PERCENTILES, percentileLabel, type PercentileKey } from '@/lib/metrics';
import { scenarioLabel, sortLoads } from '@/lib/cells';
import type { RunViewState } from './runViewState';

function toggle(list: readonly string[], all: readonly string[], item: string): string[] {
  const current = list.length ? list : all;
  const next = current.includes(item) ? current.filter((x) => x !== item) : [...current, item];
  // "everything selected" is stored as the empty default so the URL stays short.
  return next.length === all.length ? [] : next;
}

export function RunControls({
  run,
  state,
  setState,
}: {
  run: RunDetail;
  state: RunViewState;
  setState: (patch: Partial<RunViewState>) => void;
}): ReactElement {
  const scenarioNames = run.scenarios.map((s) => s.name);
  const loadKeys = sortLoads(run.loads).map((l) => l.key);
  const reference = run.variants.find((v) => v.name === state.ref) ?? run.variants.find((v) => v.is_reference);
  const compared = run.variants.filter((v) => v.id !== reference?.id);
  return (
    <form className="controls" aria-label="View options" onSubmit={(e) => e.preventDefault()}>
      {run.scenarios.length > 1 ? (
        <fieldset>
          <legend>Scenarios</legend>
          {run.scenarios.map((s) => (
            <label key={s.id}>
              <input
                type="checkbox"
                checked={!state.scenarios.length || state.scenarios.includes(s.name)}
                onChange={() => setState({ scenarios: toggle(state.scenarios, scenarioNames, s.name) })}
              />
              {scenarioLabel(s)}
            </label>
          ))}
        </fieldset>
      ) : null}
      {run.loads.length > 1 ? (
        <fieldset>
          <legend>Load levels</legend>
          {sortLoads(run.loads).map((l) => (
            <label key={l.id}>
              <input
                type="checkbox"
                checked={!state.loads.length || state.loads.includes(l.key)}
                onChange={() => setState({ loads: toggle(state.loads, loadKeys, l.key) })}
              />
              {l.label}
            </label>
          ))}
        </fieldset>
      ) : null}
      <fieldset>
        <legend>Variants</legend>
        <label>
          Reference
          <select value={reference?.name ?? ''} onChange={(e) => setState({ ref: e.target.value, variant: '' })}>
            {run.variants.map((v) => (
              <option key={v.id} value={v.name}>
                {v.name}
              </option>
            ))}
          </select>
        </label>
        {compared.length > 1 ? (
          <label>
            Compared variant
            <select value={state.variant || compared[0].name} onChange={(e) => setState({ variant: e.target.value })}>
              {compared.map((v) => (
                <option key={v.id} value={v.name}>
                  {v.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
      </fieldset>
      <fieldset>
        <legend>Latency</legend>
        <label>
          Percentile
          <select value={state.p} onChange={(e) => setState({ p: e.target.value as PercentileKey })}>
            {PERCENTILES.map((p) => (
              <option key={p.key} value={p.key}>
                {percentileLabel(p.key)}
              </option>
            ))}
          </select>
        </label>
      </fieldset>
    </form>
  );
}
