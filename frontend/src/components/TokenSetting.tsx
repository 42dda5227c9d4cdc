import { useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type ReactElement } from 'react';
import { writeToken } from '@/lib/token';
import { useToken } from '@/lib/useToken';

/** Header control for the API token: kept in this tab's sessionStorage, sent with every request; a
 *  change refetches everything, since a token can reveal private projects. */
export function TokenSetting(): ReactElement {
  const token = useToken();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState('');
  const panel = useRef<HTMLDetailsElement>(null);
  const close = (): void => {
    if (panel.current) panel.current.open = false;
  };
  return (
    <details className="token-setting" ref={panel}>
      <summary>API token: {token ? 'set' : 'not set'}</summary>
      <form
        aria-label="API token"
        onSubmit={(e) => {
          e.preventDefault();
          writeToken(draft);
          setDraft('');
          close();
          void queryClient.invalidateQueries();
        }}
      >
        <p>
          Reading public projects needs no token; private projects, triage, plans, runs and schedules do: paste a
          project token (viewer to read, uploader or admin to write). It stays in this browser tab only and is never put in a link.
        </p>
        <label>
          Token{' '}
          <input type="password" autoComplete="off" value={draft} onChange={(e) => setDraft(e.target.value)} />
        </label>{' '}
        <button type="submit">Save token</button>{' '}
        {token ? (
          <button
            type="button"
            onClick={() => {
              writeToken('');
              close();
              queryClient.removeQueries();
            }}
          >
            Forget token
          </button>
        ) : null}
      </form>
    </details>
  );
}
