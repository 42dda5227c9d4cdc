import { useIsFetching, useQueries } from '@tanstack/react-query';
import type { RunDetail, VariantOut } from '@/api/client';
import { isLive, overheadsQuery } from '../api/queries';
import { NO_STATS, overheadLookup, type StatsLookup } from '../runModel';

/**
 * Intervals and verdicts of the given metrics from GET /runs/{run}/overheads, one request per metric;
 * the tables show their numbers at once and their statistics when these arrive. Only against the
 * run's own reference variant (the API's), so another reference picked on the page shows none.
 */
export function useRunStats(run: RunDetail, reference: VariantOut | undefined, metrics: readonly string[]): StatsLookup {
  // Asked once the page's series and spectrum have arrived: the statistics are heavier for the API
  // and the numbers they annotate are already on screen.
  const chartsLoading = useIsFetching({ queryKey: ['run', run.slug, 'series'] }) + useIsFetching({ queryKey: ['run', run.slug, 'percentiles'] });
  const enabled = Boolean(reference?.is_reference) && !isLive(run.status) && run.cells.length > 0 && chartsLoading === 0;
  const results = useQueries({ queries: metrics.map((m) => overheadsQuery(run.slug, m, enabled)) });
  if (!enabled || !reference) return NO_STATS;
  return overheadLookup(results.map((r) => r.data), reference.name);
}
