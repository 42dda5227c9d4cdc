import type { AlertOut } from '@/api/client';
import { listCodec } from '@/lib/urlState';

/** The alert's trail in History, narrowed to its load level, drawn as values or as overhead like the alert. */
export function historyLink(a: AlertOut): string {
  const q = new URLSearchParams({
    trail: String(a.trail.id),
    scenario: a.trail.scenario,
    variant: a.trail.variant,
    loads: listCodec().serialize([a.trail.load_key]) ?? '',
    metric: a.metric,
  });
  if (a.trail.mode) q.set('mode', a.trail.mode);
  if (a.kind === 'overhead') q.set('kind', 'overhead');
  return `/p/${encodeURIComponent(a.project)}/history?${q.toString()}`;
}

export function stateTone(state: string): 'good' | 'bad' | 'warn' | 'info' {
  if (state === 'new') return 'bad';
  if (state === 'acknowledged' || state === 'investigating') return 'warn';
  if (state === 'fixed') return 'good';
  return 'info';
}

export function trailText(a: AlertOut): string {
  return [a.trail.variant, a.trail.scenario === '*' ? 'all scenarios' : a.trail.scenario, a.trail.load_key, a.trail.mode]
    .filter(Boolean)
    .join(' · ');
}
