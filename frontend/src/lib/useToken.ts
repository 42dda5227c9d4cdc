import { useSyncExternalStore } from 'react';
import { readToken, subscribeToken } from './token';

/** Whether a write token is set; components use it to say up front that a write needs one. */
export function useToken(): string {
  return useSyncExternalStore(subscribeToken, readToken, () => '');
}
