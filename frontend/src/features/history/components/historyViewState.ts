import { HISTORY_AXES, HISTORY_KINDS, type HistoryAxis, type HistoryKind } from '../historyModel';
import { enumCodec, listCodec, stringCodec, type Schema } from '@/lib/urlState';

/** The trail picked, how it is drawn and along which axis: all in the URL, so a history view is a permalink. */
export interface HistoryViewState {
  env: string;
  scenario: string;
  variant: string;
  mode: string;
  loads: string[];
  metric: string;
  kind: HistoryKind;
  x: HistoryAxis;
  /** A trail id from an alert link: fixes the selection it belongs to when the rest is left open. */
  trail: string;
}

export const HISTORY_VIEW_SCHEMA: Schema<HistoryViewState> = {
  env: stringCodec(),
  scenario: stringCodec(),
  variant: stringCodec(),
  mode: stringCodec(),
  loads: listCodec(),
  metric: stringCodec(),
  kind: enumCodec(HISTORY_KINDS, 'trail'),
  x: enumCodec(HISTORY_AXES, 'version'),
  trail: stringCodec(),
};

/** Metrics a trail can follow, as offered in the picker (the API accepts every cell metric). */
export const LOAD_TEST_METRICS = [
  'latency_p50', 'latency_p75', 'latency_p90', 'latency_p95', 'latency_p99', 'latency_p999', 'latency_mean',
  'throughput', 'errors', 'cpu_pct', 'cpu_s_per_1k', 'rss_mb', 'heap_mb', 'achieved_rate',
] as const;
export const JMH_METRICS = ['score', 'score_error'] as const;
