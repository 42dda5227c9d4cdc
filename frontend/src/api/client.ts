import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];
export type ProjectOut = Schemas['ProjectOut'];
export type RunSummary = Schemas['RunSummary'];
export type RunDetail = Schemas['RunDetail'];
export type RunPage = Schemas['RunPage'];
export type CellOut = Schemas['CellOut'];
export type LoadOut = Schemas['LoadOut'];
export type VariantOut = Schemas['VariantOut'];
export type ScenarioOut = Schemas['ScenarioOut'];
export type SeriesOut = Schemas['SeriesOut'];
export type CellPercentiles = Schemas['CellPercentiles'];

/** The API's error body {"error", "detail"} with the HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly kind: string,
    readonly detail: string,
  ) {
    super(`${status} ${kind}: ${detail}`);
  }
}

export type ApiClient = ReturnType<typeof createClient<paths>>;

let client: ApiClient = createClient<paths>({ baseUrl: '' });

export function configureApi(baseUrl: string): void {
  client = createClient<paths>({ baseUrl });
}

export function api(): ApiClient {
  return client;
}

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export async function unwrap<T>(pending: Promise<FetchResult<T>>): Promise<T> {
  const { data, error, response } = await pending;
  if (error !== undefined || data === undefined) {
    const body = (error ?? {}) as { error?: unknown; detail?: unknown };
    const kind = typeof body.error === 'string' ? body.error : response.statusText || 'Error';
    const detail = typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail ?? error ?? '');
    throw new ApiError(response.status, kind, detail);
  }
  return data;
}
