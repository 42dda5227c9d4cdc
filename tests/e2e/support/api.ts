/** A small client of the real Benchtrail API, used to seed data and to read the numbers the UI must show. */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import createClient from 'openapi-fetch';
import type { components, paths } from '../../../frontend/src/api/schema';

/** The API's own types, generated from its OpenAPI document (`make openapi`): specs never restate them. */
export type Schemas = components['schemas'];

export const REPO = resolve(__dirname, '../../..');
// The shared fixtures sit beside the repository; BENCHTRAIL_SHARED points elsewhere (e.g. from a git worktree).
export const SHARED = process.env.BENCHTRAIL_SHARED ?? resolve(REPO, '../shared');
export const STATE_FILE = resolve(REPO, 'artifacts/e2e-state.json');
export const SCREENSHOTS = resolve(REPO, 'artifacts/screenshots');

/** Every X-Ray agent version in examples/data, in release order, so the history spans all six. */
export const XRAY_VERSIONS = ['2.7.x', '2.8.x', '2.9.x', '2.18.x', '2.21.0', '2.21.x'] as const;

export function baseUrl(): string {
  const url = process.env.BENCHTRAIL_E2E_URL;
  if (!url) throw new Error('BENCHTRAIL_E2E_URL is not set');
  return url.replace(/\/+$/, '');
}

/** A client of the generated API types: paths, parameters, bodies and answers are checked by `npm run lint`. */
export function api(token?: string): ReturnType<typeof createClient<paths>> {
  return createClient<paths>({ baseUrl: baseUrl(), headers: token ? { Authorization: `Bearer ${token}` } : {} });
}

/** The body of a 2xx answer; any other answer fails the test with the API's error body. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) {
    throw new Error(`${response.url} → ${response.status}: ${JSON.stringify(error)}`);
  }
  return data;
}

/** For bodies the typed client does not build (multipart uploads, YAML): the caller names the answer's schema. */
export async function apiJson<T>(path: string, init: RequestInit = {}, token?: string): Promise<T> {
  const headers = new Headers(init.headers);
  if (token) headers.set('Authorization', `Bearer ${token}`);
  const res = await fetch(`${baseUrl()}${path}`, { ...init, headers });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path} → ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

export interface UploadFile {
  name: string;
  content: Buffer | string;
  spec: Record<string, unknown>;
}

export async function upload(
  project: string,
  token: string,
  metadata: Record<string, unknown>,
  files: UploadFile[],
): Promise<Schemas['UploadAccepted']> {
  const form = new FormData();
  form.set('metadata', JSON.stringify({ ...metadata, files: files.map((f) => f.spec) }));
  for (const f of files) form.append('files', new Blob([typeof f.content === 'string' ? f.content : new Uint8Array(f.content)]), f.name);
  return apiJson(`/api/v1/projects/${project}/runs`, { method: 'POST', body: form }, token);
}

export function fixture(...parts: string[]): UploadFile['content'] {
  return readFileSync(resolve(SHARED, 'fixtures/real', ...parts));
}

export function fixtureName(...parts: string[]): string {
  return basename(parts[parts.length - 1]);
}

export function getRun(slug: string): Promise<Schemas['RunDetail']> {
  return ok(api().GET('/api/v1/runs/{slug}', { params: { path: { slug } } }));
}

export async function waitForRuns(slugs: string[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const slug of slugs) {
    for (;;) {
      const run = await getRun(slug);
      if (run.status === 'completed') break;
      if (run.status === 'failed' || run.status === 'cancelled') {
        throw new Error(`run ${slug} ${run.status}: ${JSON.stringify(run.status_detail)}`);
      }
      if (Date.now() > deadline) throw new Error(`run ${slug} still ${run.status} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Alerts are raised by the analysis task after ingest; wait until it has looked at every run. */
export async function waitForAnalysis(slugs: string[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const slug of slugs) {
    for (;;) {
      const run = await getRun(slug);
      if (run.analysis_status === 'done' || run.analysis_status === 'failed') break;
      if (Date.now() > deadline) throw new Error(`run ${slug} analysis still ${run.analysis_status}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

export interface E2EState {
  project: string;
  jmhProject: string;
  heyProject: string;
  planProject: string;
  alertProject: string;
  alertRuns: string[];
  plan: string;
  targetUrl: string;
  jtlRuns: string[];
  heyRun: string;
  jmhRuns: Record<string, string>;
}

export function saveState(state: E2EState): void {
  mkdirSync(dirname(STATE_FILE), { recursive: true });
  writeFileSync(STATE_FILE, JSON.stringify(state, null, 2));
}

export function loadState(): E2EState {
  return JSON.parse(readFileSync(STATE_FILE, 'utf8')) as E2EState;
}
