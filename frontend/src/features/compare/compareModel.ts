/** Pure: two runs side by side, cells matched by variant, scenario, load level and mode. */
import type { RunDetail } from '@/api/client';
import { metricInfo } from '@/lib/metrics';
import { cellValue, compare, scenarioLabel, sortLoads } from '@/lib/cells';
import type { Column, Row, TableModel } from '@/lib/table';

export function buildRunComparison(a: RunDetail, b: RunDetail, metric: string): TableModel {
  const info = metricInfo(metric);
  const unit = info.unit === 'samples' ? '' : info.unit;
  const keyOf = (run: RunDetail, c: RunDetail['cells'][number]): string | null => {
    const v = run.variants.find((x) => x.id === c.variant_id)?.name;
    const s = run.scenarios.find((x) => x.id === c.scenario_id)?.name;
    const l = run.loads.find((x) => x.id === c.load_id)?.key;
    return v === undefined || s === undefined || l === undefined ? null : `${v}\u0000${s}\u0000${l}\u0000${c.mode}`;
  };
  const inB = new Map<string, RunDetail['cells'][number]>();
  for (const c of b.cells) {
    const k = keyOf(b, c);
    if (k) inB.set(k, c);
  }
  const loadOrder = new Map(sortLoads(a.loads).map((l, i) => [l.id, i]));
  const ordered = [...a.cells].sort(
    (x, y) =>
      x.variant_id - y.variant_id || x.scenario_id - y.scenario_id || (loadOrder.get(x.load_id) ?? 0) - (loadOrder.get(y.load_id) ?? 0),
  );
  const columns: Column[] = [
    { key: 'variant', label: 'Variant', role: 'label' },
    { key: 'scenario', label: 'Scenario', role: 'label' },
    { key: 'load', label: 'Load', role: 'label' },
    { key: 'a', label: `run ${a.slug}${a.agent_version ? ` (${a.agent_version})` : ''}`, role: 'reference', unit, group: info.title },
    { key: 'b', label: `run ${b.slug}${b.agent_version ? ` (${b.agent_version})` : ''}`, role: 'variant', unit, group: info.title },
    { key: 'diff', label: 'diff', role: 'diff', unit, group: info.title, direction: info.direction },
    { key: 'pct', label: 'Δ%', role: 'percent', group: info.title, direction: info.direction },
  ];
  const rows: Row[] = [];
  for (const c of ordered) {
    const k = keyOf(a, c);
    const other = k ? inB.get(k) : undefined;
    if (!k || !other) continue;
    const cmp = compare(cellValue(c, metric), cellValue(other, metric));
    if (cmp.reference === null && cmp.variant === null) continue;
    const scenario = a.scenarios.find((s) => s.id === c.scenario_id);
    rows.push({
      id: k,
      values: {
        variant: a.variants.find((v) => v.id === c.variant_id)?.name ?? '',
        scenario: scenario ? scenarioLabel(scenario) : '',
        load: (a.loads.find((l) => l.id === c.load_id)?.label ?? '') + (c.mode ? ` ${c.mode}` : ''),
        a: cmp.reference,
        b: cmp.variant,
        diff: cmp.diff,
        pct: cmp.pct,
      },
    });
  }
  return { title: `${info.title}: run ${a.slug} → run ${b.slug}`, columns, rows };
}
