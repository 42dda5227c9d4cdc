/** Pure: two runs side by side, cells matched by variant, scenario, load level and mode. */
import type { CompareOut, RunDetail } from '@/api/client';
import { cellValue, compare, scenarioLabel, sortLoads } from '@/lib/cells';
import { metricInfo, scoreDirection } from '@/lib/metrics';
import type { Column, DiffStats, Row, TableModel } from '@/lib/table';

function key(variant: string, scenario: string, load: string, mode: string): string {
  return [variant, scenario, load, mode].join('\u0000');
}

/** GET /compare's items as a lookup by (variant, scenario, load key, mode). */
export function compareStats(out: CompareOut | undefined): Map<string, DiffStats> {
  const byKey = new Map<string, DiffStats>();
  const comparisons = (out?.items ?? []).filter((item) => item.p_adjusted != null).length;
  for (const item of out?.items ?? []) {
    const r = item.result;
    byKey.set(key(item.a_variant, item.cell.scenario, item.cell.load_key, item.cell.mode), {
      estimate: r.abs_diff,
      low: r.ci_low,
      high: r.ci_high,
      verdict: r.verdict,
      mde: r.mde,
      worse: r.worse,
      pValue: r.mw_p,
      method: r.method,
      pAdjusted: item.p_adjusted ?? null,
      comparisons,
    });
  }
  return byKey;
}

export function buildRunComparison(
  a: RunDetail,
  b: RunDetail,
  metric: string,
  stats: Map<string, DiffStats> = new Map(),
): TableModel {
  const info = metricInfo(metric);
  const unit = info.unit === 'samples' ? '' : info.unit;
  const parts = (run: RunDetail, c: RunDetail['cells'][number]) => ({
    v: run.variants.find((x) => x.id === c.variant_id)?.name,
    s: run.scenarios.find((x) => x.id === c.scenario_id),
    l: run.loads.find((x) => x.id === c.load_id),
  });
  const keyOf = (run: RunDetail, c: RunDetail['cells'][number]): string | null => {
    const { v, s, l } = parts(run, c);
    return v === undefined || s === undefined || l === undefined ? null : key(v, s.name, l.key, c.mode);
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
    { key: 'cmp', label: info.title, role: 'comparison', unit, direction: info.direction },
  ];
  const rows: Row[] = [];
  for (const c of ordered) {
    const k = keyOf(a, c);
    const other = k ? inB.get(k) : undefined;
    if (!k || !other) continue;
    const cmp = compare(cellValue(c, metric), cellValue(other, metric));
    if (cmp.reference === null && cmp.variant === null) continue;
    const { v, s, l } = parts(a, c);
    rows.push({
      id: k,
      values: {
        variant: v ?? '',
        scenario: s ? scenarioLabel(s) : '',
        // A JMH score's unit is its mode's (ops/ms, us/op, ...): each row says its own. A benchmark has no load.
        load: [l && l.kind !== 'none' ? l.label : '', c.mode, metric === 'score' && c.score_unit ? `(${c.score_unit})` : '']
          .filter(Boolean)
          .join(' ') || '—',
        cmp: {
          kind: 'comparison',
          ...cmp,
          stats: stats.get(k) ?? null,
          ...(metric === 'score' ? { direction: scoreDirection(c.score_unit) } : {}),
        },
      },
    });
  }
  const name = (r: RunDetail): string => `run ${r.slug}${r.agent_version ? ` (${r.agent_version})` : ''}`;
  return {
    title: `${info.title}: run ${a.slug} → run ${b.slug}`,
    columns,
    rows,
    sides: { reference: name(a), variant: name(b) },
  };
}
