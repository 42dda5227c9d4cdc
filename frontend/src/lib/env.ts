/** Runtime configuration, validated once at start so a bad deployment fails loudly, not later. */
export interface AppEnv {
  /** Origin (and optional prefix) of the API; '' means the page's own origin, as when the API serves the app. */
  apiBaseUrl: string;
}

export class EnvError extends Error {}

export function parseEnv(raw: Record<string, unknown>): AppEnv {
  const value = raw.VITE_API_BASE_URL;
  if (value === undefined || value === '') {
    return { apiBaseUrl: '' };
  }
  if (typeof value !== 'string') {
    throw new EnvError('VITE_API_BASE_URL must be a string');
  }
  const trimmed = value.replace(/\/+$/, '');
  if (trimmed.startsWith('/')) {
    return { apiBaseUrl: trimmed };
  }
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new EnvError(`VITE_API_BASE_URL is not a URL: '${value}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EnvError(`VITE_API_BASE_URL must be http(s), got '${url.protocol}'`);
  }
  return { apiBaseUrl: trimmed };
}
