import type { ReactElement } from 'react';
import { ApiError } from '@/api/client';
import { useToken } from '@/lib/useToken';

/** Said before a write is attempted: which role it needs, and where to set the token. */
export function NeedsToken({ role, action }: { role: 'uploader' | 'admin'; action: string }): ReactElement | null {
  const token = useToken();
  if (token) return null;
  return (
    <p className="state warn" role="note">
      {action} needs a token with the <strong>{role}</strong> role on this project. Set it under{' '}
      <em>API token</em> at the top right.
    </p>
  );
}

/** A failed write, with what to do about it. */
export function WriteError({ error, action }: { error: unknown; action: string }): ReactElement | null {
  if (!error) return null;
  let hint = 'Check the values and try again.';
  let message = error instanceof Error ? error.message : String(error);
  if (error instanceof ApiError) {
    message = error.detail;
    if (error.status === 401) hint = 'The token is missing or not valid: set it under API token at the top right.';
    else if (error.status === 403) hint = 'The token does not have a role that allows this on the project.';
    else if (error.status === 409) hint = 'Something changed meanwhile; reload to see the current state.';
    else if (error.status >= 500) hint = 'The server failed; its log has the details.';
  }
  return (
    <div role="alert" className="state error">
      <strong>{action} failed.</strong> <span>{message}</span>
      <p>{hint}</p>
    </div>
  );
}
