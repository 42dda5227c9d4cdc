import { HISTORY_AXES, HISTORY_KINDS, type HistoryAxis, type HistoryKind } from '../historyModel';
import { historyMetrics } from '@/lib/metrics';
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

/** Metrics a trail can follow, as offered in the picker: the catalog's (`lib/metrics`). */
export const LOAD_TEST_METRICS: readonly string[] = historyMetrics('load');
export const JMH_METRICS: readonly string[] = historyMetrics('score');
