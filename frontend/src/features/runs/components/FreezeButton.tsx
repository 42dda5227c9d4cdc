import type { ReactElement } from 'react';
import { FreezeButton as Freeze } from '@/components/FreezeButton';

/** Freezes this run view (the run's data as it is now, and the view state in the URL) under a permalink of its own. */
export function FreezeButton({ runSlug }: { runSlug: string }): ReactElement {
  return <Freeze target={{ run: runSlug }} />;
}
