/**
 * Hand-written runs in the API's shape for the unit tests, with the EaseAgent seed's published
 * numbers (10 threads: CPU 10.7/13.3, heap 246/289, P75 100/120, throughput 361/293) and the
 * Easegress seed's static-route throughputs, so expected values can be read straight off the seeds.
 */
import type { CellOut, RunDetail } from '@/api/client';

let nextId = 1;

export function cell(partial: Partial<CellOut> & Pick<CellOut, 'variant_id' | 'scenario_id' | 'load_id'>): CellOut {
  return {
    id: nextId++, trail_id: 1, mode: '', source: 'samples', is_transaction: false, count: null, errors: null,
    error_rate: null, throughput: null, duration_s: null, latency_mean: null, latency_min: null, latency_max: null,
    latency_p50: null, latency_p75: null, latency_p90: null, latency_p95: null, latency_p99: null, latency_p999: null,
    has_histogram: false, cpu_pct: null, cpu_s_per_1k: null, rss_mb: null, heap_mb: null, achieved_rate: null,
    score: null, score_error: null, score_unit: null, params: {}, replicates: [], extra: {},
    ...partial,
  };
}

function base(slug: string): Omit<RunDetail, 'variants' | 'scenarios' | 'loads' | 'cells'> {
  return {
    id: 1, slug, project: 'easeagent', source: 'upload', tool: 'jmeter', status: 'completed', is_valid: true,
    agent_version: '2.4.0', app_version: null, commit: null, branch: null, labels: {}, environment: 'm5',
    created_at: '2026-11-01T00:00:00Z', started_at: null, finished_at: null, permalink: `/r/${slug}`,
    status_detail: null, alerts: [], analysis_status: 'completed', validity: [], criteria: [], progress: {}, environment_detail: null, files: [], shares: [], meta: { cancel_requested: false, file_checks: false, generators: 1 },
    process_cells: [],
  };
}

export function easeagentRun(): RunDetail {
  const loads = [50, 10, 20].map((v, i) => ({
    id: i + 1, key: `threads:${v}`, kind: 'threads', value: v, requests: null, duration_s: null, label: `${v} threads`,
  }));
  const t10 = 2;
  const t20 = 3;
  return {
    ...base('ease1'),
    variants: [
      { id: 1, name: 'baseline', is_reference: true },
      { id: 2, name: 'agent', is_reference: false },
    ],
    scenarios: [
      { id: 1, name: '*' },
      { id: 2, name: 'API-URI-owner-3spans' },
      { id: 3, name: 'API-URI-vets-10spans' },
    ],
    loads,
    cells: [
      cell({ variant_id: 1, scenario_id: 2, load_id: t10, cpu_pct: 10.7, heap_mb: 246, latency_p75: 100, throughput: 361, errors: 0 }),
      cell({ variant_id: 2, scenario_id: 2, load_id: t10, cpu_pct: 13.3, heap_mb: 289, latency_p75: 120, throughput: 293, errors: 2 }),
      cell({ variant_id: 1, scenario_id: 3, load_id: t10, cpu_pct: 8.56, heap_mb: 261, latency_p75: 58.8, throughput: 361, errors: 0 }),
      cell({ variant_id: 2, scenario_id: 3, load_id: t10, cpu_pct: 11.3, heap_mb: 200, latency_p75: 88.8, throughput: 293, errors: 0 }),
      cell({ variant_id: 1, scenario_id: 1, load_id: t10, latency_p75: 80, throughput: 722 }),
      cell({ variant_id: 2, scenario_id: 1, load_id: t10, latency_p75: 104, throughput: 586 }),
      // 20 threads as the ingester stores it: the process's CPU and heap on the all-scenarios cell only.
      cell({ variant_id: 1, scenario_id: 2, load_id: t20, latency_p75: 43, latency_mean: 40, throughput: 332 }),
      cell({ variant_id: 2, scenario_id: 2, load_id: t20, latency_p75: 49, latency_mean: 45, throughput: 277 }),
      cell({ variant_id: 1, scenario_id: 3, load_id: t20, latency_p75: 26, latency_mean: 24, throughput: 332 }),
      cell({ variant_id: 2, scenario_id: 3, load_id: t20, latency_p75: 36, latency_mean: 33, throughput: 277 }),
      cell({ variant_id: 1, scenario_id: 1, load_id: t20, cpu_pct: 10.0, heap_mb: 244, cpu_s_per_1k: 0.301, latency_p75: 35, throughput: 664 }),
      cell({ variant_id: 2, scenario_id: 1, load_id: t20, cpu_pct: 12.8, heap_mb: 282, cpu_s_per_1k: 0.462, latency_p75: 44, throughput: 554 }),
    ],
  };
}

export function easegressRun(): RunDetail {
  const loads = [
    { id: 1, key: 'concurrency:50:n900', kind: 'concurrency', value: 50, requests: 900, duration_s: null, label: '50 concurrency, 900 requests' },
    { id: 2, key: 'concurrency:100:n90000', kind: 'concurrency', value: 100, requests: 90000, duration_s: null, label: '100 concurrency, 90000 requests' },
  ];
  const tps: Record<number, [number, number]> = { 1: [24068.3219, 26077.3742], 2: [25078.4517, 27391.6867], 3: [41687.5741, 65122.1171] };
  const cells: CellOut[] = [];
  for (const [variant, values] of Object.entries(tps)) {
    values.forEach((v, i) => cells.push(cell({ variant_id: Number(variant), scenario_id: 1, load_id: i + 1, throughput: v })));
  }
  return {
    ...base('eg1'),
    tool: 'hey',
    variants: [
      { id: 1, name: 'ordered-v1', is_reference: true },
      { id: 2, name: 'ordered-v2', is_reference: false },
      { id: 3, name: 'radixtree', is_reference: false },
    ],
    scenarios: [{ id: 1, name: 'static' }],
    loads,
    cells,
  };
}

export function jmhRun(): RunDetail {
  const load = { id: 1, key: 'none', kind: 'none', value: null, requests: null, duration_s: null, label: '—' };
  const score = (variant_id: number, scenario_id: number, mode: string, s: number, e: number, unit: string): CellOut =>
    cell({ variant_id, scenario_id, load_id: 1, mode, score: s, score_error: e, score_unit: unit });
  return {
    ...base('jmh1'),
    tool: 'jmh',
    variants: [
      { id: 1, name: 'no-instrumentation', is_reference: true },
      { id: 2, name: 'sdk-instrumentation', is_reference: false },
      { id: 3, name: 'auto-instrumentation', is_reference: false },
    ],
    scenarios: [
      { id: 1, name: 'SqlBenchmark.sqlQuery' },
      { id: 2, name: 'ServletBenchmark.serviceRequest' },
    ],
    loads: [load],
    cells: [
      score(1, 1, 'thrpt', 0.468, 0.015, 'ops/ms'),
      score(2, 1, 'thrpt', 0.452, 0.011, 'ops/ms'),
      score(3, 1, 'thrpt', 0.455, 0.012, 'ops/ms'),
      score(1, 1, 'sample', 2.137, 0.01, 'ms/op'),
      score(2, 1, 'sample', 2.207, 0.01, 'ms/op'),
      score(3, 1, 'sample', 2.197, 0.012, 'ms/op'),
      score(1, 2, 'sample', 2.17, 0.02, 'ms/op'),
      score(2, 2, 'sample', 2.27, 0.02, 'ms/op'),
    ],
  };
}
