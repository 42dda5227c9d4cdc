/**
 * The profile views the run page, Compare and the alert page share: a flame graph with its table, and the
 * differential profile (where the added CPU goes) with the packages and frames that add it.
 */
import type { ReactElement } from 'react';
import { ChartWithTable } from '@/components/charts/Chart';
import { flameTrace, layoutFlame } from '@/components/charts/flame';
import { DataTable } from '@/components/DataTable';
import { intervalText } from '@/lib/table';
import { cpuTable, diffBars, flameBars, flameTable, statsOf, UNIT, type FlameOut, type ProfileDiff } from './profileModel';

function fmt(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : v.toFixed(Math.abs(v) < 1 ? 3 : 1);
}

export function FlameGraph({ flame, title, differential = false }: {
  flame: FlameOut;
  title: string;
  differential?: boolean;
}): ReactElement {
  const bars = layoutFlame(differential ? diffBars(flame) : flameBars(flame));
  const depth = bars.reduce((m, b) => Math.max(m, b.depth), 0);
  return (
    <ChartWithTable
      stacked
      pageSize={15}
      firstPage
      chart={{
        title,
        data: flameTrace(bars),
        flame: true,
        xTitle: `CPU-ms per 1,000 requests (${flame.repetitions} repetition${flame.repetitions === 1 ? '' : 's'})`,
        yTitle: 'stack depth',
        height: Math.min(900, 120 + 18 * (depth + 1)),
        filename: `flame-${flame.run}-${flame.variant}${differential ? '-diff' : ''}`,
      }}
      table={flameTable(flame, `${title}: frames`)}
    />
  );
}

/** Where the added CPU goes: the whole difference, the check against sampled CPU, tables and the graph. */
export function ProfileDiffView({ diff, sides }: { diff: ProfileDiff; sides: { reference: string; variant: string } }): ReactElement {
  const whole = statsOf(diff.whole);
  const c = diff.consistency;
  return (
    <section aria-label="Where the added CPU goes">
      <p>
        The profiles of <strong>{sides.variant}</strong> spend{' '}
        <strong>{intervalText(whole, UNIT)}</strong> more CPU per 1,000 requests than <strong>{sides.reference}</strong> (
        {whole.verdict}, {diff.whole.method}).
      </p>
      {c ? (
        <p role="note" aria-label="Profile against sampled CPU">
          {c.sampled ? (
            <>
              Sampled process CPU says {intervalText(statsOf(c.sampled), UNIT)}
              {c.gap_pct !== null && c.gap_pct !== undefined
                ? `; the profiles' difference is ${Math.abs(c.gap_pct).toFixed(0)}% ${c.gap_pct >= 0 ? 'above' : 'below'} it`
                : ''}
              {c.coverage_pct !== null && c.coverage_pct !== undefined ? `; the profiler saw ${c.coverage_pct.toFixed(0)}% of ${sides.variant}'s process CPU` : ''}.{' '}
              {c.agree === false ? (
                <strong className="worse">They disagree by more than their intervals allow.</strong>
              ) : c.agree ? (
                'They agree within their intervals.'
              ) : (
                'Too few repetitions to tell whether they agree.'
              )}
            </>
          ) : (
            'This run sampled no process CPU to check the profiles against.'
          )}
        </p>
      ) : null}
      <DataTable model={cpuTable(diff.packages, "Packages adding CPU (per 1,000 requests)", "Package", sides)} caption="Packages adding CPU (per 1,000 requests), most added attributed CPU first: each stack counted once, to the agent code on it, else to the code running" pageSize={12} firstPage />
      <DataTable model={cpuTable(diff.frames, "Frames adding the most self or total CPU (per 1,000 requests)", "Frame", sides)} caption="Frames adding the most self or total CPU (per 1,000 requests)" pageSize={12} firstPage />
      <FlameGraph flame={diff.flame} differential title={`Differential flame graph: ${sides.variant} − ${sides.reference} (red: added CPU)`} />
      <p className="muted">
        Widths are {sides.variant}'s CPU-ms per 1,000 requests; colours its difference to {sides.reference}. Frames under
        0.2% of the total are left out ({fmt(diff.flame.hidden)} {UNIT}).
      </p>
    </section>
  );
}
