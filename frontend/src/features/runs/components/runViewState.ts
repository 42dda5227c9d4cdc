import { PERCENTILE_KEYS, type PercentileKey } from '@/lib/metrics';
import { enumCodec, listCodec, rangeCodec, stringCodec, type Range, type Schema } from '@/lib/urlState';

/** Everything a run view shows is chosen here and lives in the URL. */
export interface RunViewState {
  scenarios: string[];
  loads: string[];
  ref: string;
  variant: string;
  p: PercentileKey;
  metric: string;
  series: string;
  range: Range | null;
  /** The scenario whose CPU profiles are shown (runs whose steps loaded one scenario at a time). */
  pscenario: string;
}

export const RUN_VIEW_SCHEMA: Schema<RunViewState> = {
  scenarios: listCodec(),
  loads: listCodec(),
  ref: stringCodec(),
  variant: stringCodec(),
  p: enumCodec(PERCENTILE_KEYS, 'p75'),
  metric: stringCodec(),
  series: stringCodec(),
  range: rangeCodec(),
  pscenario: stringCodec(),
};
