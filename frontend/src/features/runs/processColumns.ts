/**
 * A variant's named processes (plan `processes`: a consumer and a provider, as in the PTS seeds) as
 * their own lead-table columns: "consumer CPU", "provider RSS", each "reference / variant / diff" of
 * the process's resource cell at the load level, spanning the load's scenarios like the other
 * process metrics. Their intervals come from /overheads (items whose cell names the process).
 */
import type { LoadOut, RunDetail, VariantOut } from '@/api/client';
import { compare } from '@/lib/cells';
import { metricInfo } from '@/lib/metrics';
import type { Column, ComparisonValue } from '@/lib/table';
import type { StatsLookup } from './runModel';

export type ProcessCell = RunDetail['process_cells'][number];

/** The resource metrics a process column can show, in the seeds' order (CPU, then memory). */
export const PROCESS_METRICS: readonly { metric: 'cpu_pct' | 'rss_mb' | 'heap_mb'; label: string }[] = [
  { metric: 'cpu_pct', label: 'CPU' },
  { metric: 'rss_mb', label: 'RSS' },
  { metric: 'heap_mb', label: 'Heap' },
];

/** The `mode` slot of the stats lookup for a process's overheads (see overheadLookup). */
export function processStatsMode(process: string): string {
  return `process:${process}`;
}

/** Process names of the run in first-seen order. */
export function processNames(run: RunDetail): string[] {
  return [...new Set((run.process_cells ?? []).map((c) => c.process))];
}

/** Metrics some process cell of the run carries (for the /overheads requests). */
export function processMetrics(run: RunDetail): string[] {
  return PROCESS_METRICS.map((m) => m.metric).filter((m) =>
    (run.process_cells ?? []).some((c) => typeof c[m] === 'number'),
  );
}

export interface ProcessColumn {
  column: Column;
  value: ComparisonValue;
}

/** One column per (process, metric) that a cell at this load carries, with its shared value. */
export function processColumns(
  run: RunDetail,
  opts: { load: LoadOut; reference: VariantOut; variant: VariantOut; stats: StatsLookup },
): ProcessColumn[] {
  const atLoad = (run.process_cells ?? []).filter((c) => c.load_id === opts.load.id);
  const out: ProcessColumn[] = [];
  for (const process of processNames(run)) {
    const ref = atLoad.find((c) => c.process === process && c.variant_id === opts.reference.id);
    const v = atLoad.find((c) => c.process === process && c.variant_id === opts.variant.id);
    for (const { metric, label } of PROCESS_METRICS) {
      const a = ref?.[metric] ?? null;
      const b = v?.[metric] ?? null;
      if (a === null && b === null) continue;
      const info = metricInfo(metric);
      out.push({
        column: {
          key: `process.${process}.${metric}`,
          label: `${process} ${label}`,
          role: 'comparison',
          unit: info.unit,
          direction: info.direction,
        },
        value: {
          kind: 'comparison',
          ...compare(a, b),
          processWide: true,
          stats: opts.stats(metric, opts.variant.name, '*', opts.load.key, processStatsMode(process)),
        },
      });
    }
  }
  return out;
}
