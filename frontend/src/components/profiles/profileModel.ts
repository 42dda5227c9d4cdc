/**
 * What the profile views draw: flame graph bars and the tables of the same numbers, from the profiles API
 * (CPU-ms per 1,000 requests). Agent code is violet, other code warm by package; in a differential graph red
 * frames grew and blue ones shrank, the stronger the more.
 */
import type { Schemas } from '@/api/client';
import type { DiffStats, Row, TableModel } from '@/lib/table';
import type { FlameInput } from '@/components/charts/flame';

export type FlameOut = Schemas['FlameOut'];
export type FlameNode = Schemas['FlameNodeOut'];
export type ProfileDiff = Schemas['ProfileDiffOut'];
export type CpuRow = Schemas['CpuRowOut'];
export type AbOut = Schemas['AbOut'];

export const UNIT = 'ms/1k req';
const AGENT = '#8e6bd8';
const WARM = ['#f2a65a', '#f6c177', '#e9895f', '#f4d06f', '#eaa37a', '#f1b36b', '#e27c5a', '#f3c58b'];

function hash(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
  return Math.abs(h);
}

function fmt(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : v.toFixed(v !== 0 && Math.abs(v) < 1 ? 3 : 1);
}

function hoverOf(n: FlameNode): string {
  const lines = [n.name, `package ${n.package || '—'}${n.agent ? ' (agent)' : ''}`,
    `total ${fmt(n.total)} ${UNIT}`, `self ${fmt(n.self)} ${UNIT}`];
  if (n.delta_total !== null && n.delta_total !== undefined) {
    lines.push(`reference total ${fmt(n.reference_total)} ${UNIT}`, `Δ total ${n.delta_total >= 0 ? '+' : ''}${fmt(n.delta_total)}`,
      `Δ self ${(n.delta_self ?? 0) >= 0 ? '+' : ''}${fmt(n.delta_self)}`);
  }
  return lines.join('<br>');
}

export function flameBars(flame: FlameOut): FlameInput[] {
  return flame.nodes.map((n) => ({
    id: n.id, parent: n.parent ?? null, name: n.name, value: n.total, hover: hoverOf(n),
    color: n.parent === null ? '#c9ced6' : n.agent ? AGENT : WARM[hash(n.package) % WARM.length],
  }));
}

/** Red for added CPU, blue for removed, by |Δ total| against the largest one in the graph. */
export function diffBars(flame: FlameOut): FlameInput[] {
  const max = Math.max(1e-12, ...flame.nodes.filter((n) => n.parent !== null).map((n) => Math.abs(n.delta_total ?? 0)));
  return flame.nodes.map((n) => {
    const d = n.delta_total ?? 0;
    const strength = Math.min(1, Math.abs(d) / max);
    const light = Math.round(95 - 45 * strength);
    const color = n.parent === null ? '#c9ced6' : d >= 0 ? `hsl(0, 75%, ${light}%)` : `hsl(215, 75%, ${light}%)`;
    return { id: n.id, parent: n.parent ?? null, name: n.name, value: n.total, hover: hoverOf(n), color };
  });
}

/** Every node of a flame graph, widest first: the chart's numbers as a table. */
export function flameTable(flame: FlameOut, title: string): TableModel {
  const differential = flame.nodes.some((n) => n.delta_total !== null && n.delta_total !== undefined);
  const columns: TableModel['columns'] = [
    { key: 'frame', label: 'Frame', role: 'label', text: true },
    { key: 'package', label: 'Package', role: 'label', text: true },
    { key: 'total', label: 'Total', role: 'value', unit: UNIT },
    { key: 'self', label: 'Self', role: 'value', unit: UNIT },
  ];
  if (differential) {
    columns.push({ key: 'reference', label: 'Reference total', role: 'reference', unit: UNIT },
      { key: 'delta', label: 'Δ total', role: 'diff', unit: UNIT, direction: 'lower' },
      { key: 'delta_self', label: 'Δ self', role: 'diff', unit: UNIT, direction: 'lower' });
  }
  const rows: Row[] = [...flame.nodes].sort((a, b) => b.total - a.total).map((n) => ({
    id: String(n.id),
    values: {
      frame: n.name, package: n.agent ? `${n.package} (agent)` : n.package, total: n.total, self: n.self,
      reference: n.reference_total ?? null, delta: n.delta_total ?? null, delta_self: n.delta_self ?? null,
    },
  }));
  return { title, columns, rows, rowHeader: 'frame' };
}

export function statsOf(ab: AbOut): DiffStats {
  return {
    estimate: ab.abs_diff, low: ab.ci_low, high: ab.ci_high, verdict: ab.verdict, mde: ab.mde, worse: ab.worse,
    pValue: ab.p_value ?? null, method: ab.method,
  };
}

function comparison(ab: AbOut): Row['values'][string] {
  return {
    kind: 'comparison', reference: ab.reference, variant: ab.variant, diff: ab.abs_diff,
    pct: ab.rel_diff === null ? null : ab.rel_diff * 100, ratio: ab.reference ? ab.variant / ab.reference : null,
    direction: 'lower', stats: statsOf(ab),
  };
}

/** The packages or frames that add CPU: reference / variant / Δ with its interval over the repetitions. */
export function cpuTable(rows: readonly CpuRow[], title: string, what: 'Package' | 'Frame', sides: { reference: string; variant: string }): TableModel {
  return {
    title,
    sides,
    rowHeader: 'name',
    columns: [
      { key: 'name', label: what, role: 'label', text: true },
      ...(what === 'Frame' ? [{ key: 'group', label: 'Package', role: 'label' as const, text: true }] : []),
      { key: 'agent', label: 'Agent code', role: 'label' },
      ...(what === 'Package' ? [{ key: 'attributed', label: 'Attributed CPU', role: 'comparison' as const, unit: UNIT, direction: 'lower' as const }] : []),
      { key: 'self', label: 'Self CPU', role: 'comparison', unit: UNIT, direction: 'lower' },
      { key: 'total', label: 'Total CPU', role: 'comparison', unit: UNIT, direction: 'lower' },
    ],
    rows: rows.map((r, i) => ({
      id: `${i}-${r.name}`,
      values: {
        name: r.name, group: r.group, agent: r.agent ? 'agent' : '', total: comparison(r.total), self: comparison(r.self),
        attributed: r.attributed ? comparison(r.attributed) : null,
      },
    })),
  };
}
