import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { api, apiUrl, unwrap, type RunDetail, type Schemas } from '@/api/client';
import { isTerminal, parseRunEvent } from '../liveRun';
import { runQuery } from './queries';

/**
 * Follows a live run over server-sent events and writes each event into the cached run, so the
 * page re-renders from one source. EventSource cannot send headers: this works for public
 * projects; when it fails (private project, proxy without streaming) `onStreaming(false)` puts the
 * run query back on its 2 s polling.
 */
export function useRunEvents(slug: string, live: boolean, onStreaming: (streaming: boolean) => void): void {
  const queryClient = useQueryClient();
  useEffect(() => {
    if (!live || typeof EventSource === 'undefined') {
      onStreaming(false);
      return;
    }
    const key = runQuery(slug).queryKey;
    const source = new EventSource(apiUrl(`/api/v1/runs/${encodeURIComponent(slug)}/events`));
    let lastStatus: string | null = null;
    source.onmessage = (message: MessageEvent<string>) => {
      const event = parseRunEvent(message.data);
      if (!event) return;
      onStreaming(true);
      queryClient.setQueryData<RunDetail>(key, (old) =>
        old ? { ...old, status: event.status, progress: event.progress, status_detail: event.status_detail, is_valid: event.is_valid } : old,
      );
      // A new status brings more than the event carries (cells after ingest, finish time): refetch.
      if (lastStatus !== null && event.status !== lastStatus) void queryClient.invalidateQueries({ queryKey: key, exact: true });
      lastStatus = event.status;
      if (isTerminal(event.status)) {
        source.close();
        void queryClient.invalidateQueries({ queryKey: key, exact: true });
      }
    };
    source.onerror = () => {
      // The browser would reconnect forever; polling is the dependable fallback.
      source.close();
      onStreaming(false);
    };
    return () => source.close();
  }, [slug, live, queryClient, onStreaming]);
}

export function cancelRun(slug: string): Promise<{ [key: string]: string }> {
  return unwrap(api().POST('/api/v1/runs/{slug}/cancel', { params: { path: { slug } } }));
}

/** Excludes a completed run from its trails (`reason` given) or restores it (null). */
export function setExclusion(slug: string, reason: string | null): Promise<Schemas['ExclusionOut']> {
  const path = { params: { path: { slug } } };
  return unwrap(
    reason === null
      ? api().DELETE('/api/v1/runs/{slug}/exclusion', path)
      : api().PUT('/api/v1/runs/{slug}/exclusion', { ...path, body: { reason } }),
  );
}
