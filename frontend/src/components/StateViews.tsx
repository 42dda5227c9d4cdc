import type { ReactElement, ReactNode } from 'react';
import { ApiError } from '@/api/client';

export function Loading({ what }: { what: string }): ReactElement {
  return (
    <p role="status" className="state loading">
      Loading {what}…
    </p>
  );
}

export function ErrorState({ error, what }: { error: unknown; what: string }): ReactElement {
  let hint = 'Check that the Benchtrail API is running and reachable, then reload the page.';
  let message = error instanceof Error ? error.message : String(error);
  if (error instanceof ApiError) {
    message = error.detail;
    if (error.status === 404) hint = `No ${what} at this address, or it is private: check the link or sign in with a token.`;
    else if (error.status === 401 || error.status === 403) hint = 'This needs a token with access to the project.';
    else if (error.status >= 500) hint = 'The server failed; its log has the details. Reload to try again.';
  }
  return (
    <div role="alert" className="state error">
      <strong>Could not load {what}.</strong> <span>{message}</span>
      <p>{hint}</p>
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }): ReactElement {
  return (
    <div className="state empty">
      <strong>{title}</strong>
      {children}
    </div>
  );
}

export function Badge({ tone, children, title }: { tone: 'good' | 'bad' | 'warn' | 'info'; children: ReactNode; title?: string }): ReactElement {
  return (
    <span className={`badge ${tone}`} title={title}>
      {children}
    </span>
  );
}
