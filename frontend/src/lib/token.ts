/**
 * The API token used for writes. It lives in sessionStorage (this tab only, gone when it closes)
 * and never in the URL, so permalinks can be shared without leaking it.
 */
const KEY = 'benchtrail.apiToken';
const listeners = new Set<() => void>();

function storage(): Storage | null {
  try {
    return typeof sessionStorage === 'undefined' ? null : sessionStorage;
  } catch {
    return null;
  }
}

export function readToken(): string {
  return storage()?.getItem(KEY) ?? '';
}

export function writeToken(token: string): void {
  const s = storage();
  const trimmed = token.trim();
  if (trimmed) s?.setItem(KEY, trimmed);
  else s?.removeItem(KEY);
  listeners.forEach((l) => l());
}

export function subscribeToken(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
