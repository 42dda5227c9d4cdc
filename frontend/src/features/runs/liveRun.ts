/**
 * What the run page shows of a run being executed: its progress reports (stored on the run and
 * pushed as server-sent events) reduced to a small, checked view model.
 */
export const TERMINAL_STATES = ['completed', 'failed', 'cancelled'] as const;

export interface RunEvent {
  slug: string;
  status: string;
  progress: Record<string, unknown>;
  status_detail: Record<string, unknown> | null;
  is_valid: boolean;
}

/** One `data:` payload of GET /runs/{slug}/events; null for anything that is not a run event. */
export function parseRunEvent(data: string): RunEvent | null {
  let raw: unknown;
  try {
    raw = JSON.parse(data);
  } catch {
    return null;
  }
  if (!raw || typeof raw !== 'object') return null;
  const r = raw as Record<string, unknown>;
  if (typeof r.slug !== 'string' || typeof r.status !== 'string') return null;
  return {
    slug: r.slug,
    status: r.status,
    progress: r.progress && typeof r.progress === 'object' ? (r.progress as Record<string, unknown>) : {},
    status_detail: r.status_detail && typeof r.status_detail === 'object' ? (r.status_detail as Record<string, unknown>) : null,
    is_valid: r.is_valid !== false,
  };
}

export function isTerminal(status: string): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(status);
}

export interface ProgressView {
  /** 0–100, or null before the runner has said anything measurable. */
  percent: number | null;
  step: string | null;
  runner: string | null;
  achievedRate: number | null;
  requests: number | null;
  errors: number | null;
  log: string[];
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

export function progressView(progress: Record<string, unknown> | null | undefined, logLines = 30): ProgressView {
  const p = progress ?? {};
  const percent = num(p.percent);
  const index = num(p.step_index);
  const total = num(p.steps_total);
  const name = typeof p.step === 'string' && p.step ? p.step : null;
  let step: string | null = name;
  // step_index is 0-based in the runner's reports; people count from 1.
  if (index !== null && total !== null && total > 0) step = `step ${Math.min(index + 1, total)} of ${total}${name ? `: ${name}` : ''}`;
  const log = Array.isArray(p.log) ? p.log.filter((l): l is string => typeof l === 'string') : [];
  return {
    percent: percent === null ? null : Math.min(100, Math.max(0, percent)),
    step,
    runner: typeof p.runner === 'string' ? p.runner : null,
    achievedRate: num(p.achieved_rate),
    requests: num(p.requests),
    errors: num(p.errors),
    log: log.slice(-logLines),
  };
}
