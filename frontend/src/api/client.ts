import createClient, { type Middleware } from 'openapi-fetch';
import { readToken } from '@/lib/token';
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

export type TrailOut = Schemas['TrailOut'];
export type TrailDetail = Schemas['TrailDetail'];
export type TrailPoint = Schemas['TrailPoint'];
export type OverheadTrail = Schemas['OverheadTrail'];
export type OverheadPoint = Schemas['OverheadPoint'];
export type ChangePointOut = Schemas['ChangePointOut'];
export type AlertBrief = Schemas['AlertBrief'];
export type AnnotationOut = Schemas['AnnotationOut'];
export type AlertOut = Schemas['AlertOut'];
export type AlertDetail = Schemas['AlertDetail'];
export type AlertPatch = Schemas['AlertPatch'];
export type PlanOut = Schemas['PlanOut'];
export type ScheduleOut = Schemas['ScheduleOut'];
export type StartRun = Schemas['StartRun'];

export type ApiClient = ReturnType<typeof createClient<paths>>;

/** The error body every non-2xx answer carries (declared for every status in the OpenAPI document). */
export type ErrorBody = Schemas['ErrorBody'];

/** A metric a trail follows: the enum the server declares (and enforces with 422) for `metric`. */
export type TrailMetric = NonNullable<
  NonNullable<paths['/api/v1/trails/{trail_id}']['get']['parameters']['query']>['metric']
>;

/** A metric name from the UI (URL state, the catalog) as the API's type; the server refuses any
 *  name outside its enum with 422, which surfaces as an ApiError. */
export function trailMetric(name: string): TrailMetric {
  return name as TrailMetric;
}

/** Every request carries the token set for this tab, if any: it unlocks private projects for reads
 *  and is required for writes. Public projects need none. */
const bearerToken: Middleware = {
  onRequest({ request }) {
    const token = readToken();
    if (token) {
      request.headers.set('Authorization', `Bearer ${token}`);
    }
    return request;
  },
};

function makeClient(baseUrl: string): ApiClient {
  const c = createClient<paths>({ baseUrl });
  c.use(bearerToken);
  return c;
}

let apiBase = '';
let client: ApiClient = makeClient(apiBase);

export function configureApi(baseUrl: string): void {
  apiBase = baseUrl;
  client = makeClient(baseUrl);
}

/** An absolute API address for what the typed client cannot do, e.g. an EventSource. */
export function apiUrl(path: string): string {
  return `${apiBase}${path}`;
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

export type AbOut = Schemas['AbOut'];
export type RunOverheads = Schemas['RunOverheads'];
export type CompareOut = Schemas['CompareOut'];
