import { stringify } from 'yaml';
import type { PlanOut } from '@/api/client';

export interface PlanText {
  text: string;
  /** 'saved': the YAML exactly as written (comments, key order); 'rendered': made from the stored body. */
  origin: 'saved' | 'rendered';
}

/** A plan as YAML (its saved text when it was saved as YAML) or as JSON. */
export function planText(plan: Pick<PlanOut, 'body' | 'source_yaml'>, format: 'yaml' | 'json'): PlanText {
  if (format === 'json') return { text: JSON.stringify(plan.body, null, 2) + '\n', origin: 'rendered' };
  if (plan.source_yaml) return { text: plan.source_yaml, origin: 'saved' };
  return { text: stringify(plan.body, { lineWidth: 0 }), origin: 'rendered' };
}
