/**
 * The run document's cells addressed by variant, scenario, load level and mode, shared by every
 * feature that reads runs (run page, compare): lookups, ordering and the plain variant − reference arithmetic.
 */
import type { CellOut, LoadOut, RunDetail, ScenarioOut, VariantOut } from '@/api/client';

/** The scenario the ingester names for "all scenarios of a load level" (JMeter's TOTAL row). */
export const ALL_SCENARIOS = '*';

export interface Comparison {
  reference: number | null;
  variant: number | null;
  diff: number | null;
  ratio: number | null;
  pct: number | null;
}

export function compare(reference: number | null | undefined, variant: number | null | undefined): Comparison {
  const r = reference ?? null;
  const v = variant ?? null;
  if (r === null || v === null) return { reference: r, variant: v, diff: null, ratio: null, pct: null };
  const diff = v - r;
  const ratio = r === 0 ? null : v / r;
  return { reference: r, variant: v, diff, ratio, pct: ratio === null ? null : (ratio - 1) * 100 };
}

const LOAD_KIND_ORDER = ['threads', 'concurrency', 'rate', 'requests', 'duration', 'none'];

export function sortLoads(loads: readonly LoadOut[]): LoadOut[] {
  return [...loads].sort((a, b) => {
    const k = LOAD_KIND_ORDER.indexOf(a.kind) - LOAD_KIND_ORDER.indexOf(b.kind);
    if (k !== 0) return k;
    const v = (a.value ?? 0) - (b.value ?? 0);
    if (v !== 0) return v;
    return (a.requests ?? 0) - (b.requests ?? 0) || a.key.localeCompare(b.key);
  });
}

export function loadTitle(load: LoadOut): string {
  const kind: Record<string, string> = {
    threads: 'thread group',
    concurrency: 'concurrency',
    rate: 'target rate',
    requests: 'requests',
    duration: 'duration',
  };
  if (load.kind === 'none') return 'single load level';
  return `${kind[load.kind] ?? load.kind} ${load.label}`;
}

export function referenceVariant(run: RunDetail, preferred?: string): VariantOut | undefined {
  return (
    run.variants.find((v) => v.name === preferred) ?? run.variants.find((v) => v.is_reference) ?? run.variants[0]
  );
}

export function scenarioLabel(s: ScenarioOut): string {
  return s.name === ALL_SCENARIOS ? 'All scenarios' : s.name;
}

/** Scenarios in run order with the all-scenarios aggregate last, as a TOTAL row. */
export function orderedScenarios(run: RunDetail, selected: readonly string[] = []): ScenarioOut[] {
  const chosen = selected.length ? run.scenarios.filter((s) => selected.includes(s.name)) : run.scenarios;
  return [...chosen.filter((s) => s.name !== ALL_SCENARIOS), ...chosen.filter((s) => s.name === ALL_SCENARIOS)];
}

export function isJmhRun(run: RunDetail): boolean {
  return run.cells.some((c) => c.score !== null && c.score !== undefined);
}

export class CellIndex {
  private readonly byKey = new Map<string, CellOut>();

  constructor(cells: readonly CellOut[]) {
    for (const c of cells) {
      const key = CellIndex.key(c.variant_id, c.scenario_id, c.load_id, c.mode);
      // Several modes may share a position; the first (mode '' for load tests) wins for mode-less lookups.
      if (!this.byKey.has(key)) this.byKey.set(key, c);
      const any = CellIndex.key(c.variant_id, c.scenario_id, c.load_id, null);
      if (!this.byKey.has(any)) this.byKey.set(any, c);
    }
  }

  static key(variant: number, scenario: number, load: number, mode: string | null): string {
    return `${variant}/${scenario}/${load}/${mode ?? '*any*'}`;
  }

  get(variant: number, scenario: number, load: number, mode: string | null = null): CellOut | undefined {
    return this.byKey.get(CellIndex.key(variant, scenario, load, mode));
  }
}

type NumericCellKey = {
  [K in keyof CellOut]: CellOut[K] extends number | null | undefined ? K : never;
}[keyof CellOut];

export function cellValue(cell: CellOut | undefined, metric: string): number | null {
  if (!cell) return null;
  const v = (cell as unknown as Record<string, unknown>)[metric as NumericCellKey];
  return typeof v === 'number' ? v : null;
}
