// Our k6 script for tests/corpus/k6-*: two endpoints of the loopback demo target, a group, checks and
// thresholds (one meant to fail), and handleSummary writing the summary data as JSON when SUMMARY_JSON is set.
import http from 'k6/http';
import { check, group, sleep } from 'k6';

const base = __ENV.TARGET || 'http://127.0.0.1:18491';

export const options = {
  vus: Number(__ENV.VUS || 4),
  duration: __ENV.DURATION || '3s',
  thresholds: {
    http_req_duration: ['p(95)<2000'],
    'http_req_duration{name:slow}': ['p(99)<1'],
    checks: ['rate>0.5'],
  },
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
};

export default function () {
  group('browse', () => {
    const r = http.get(`${base}/`, { tags: { name: 'home' } });
    check(r, { 'status is 200': (res) => res.status === 200 });
  });
  http.get(`${base}/slow`, { tags: { name: 'slow' } });
  http.post(`${base}/echo`, JSON.stringify({ note: 'ünïcødé' }), { tags: { name: 'echo' }, headers: { 'Content-Type': 'application/json' } });
  sleep(0.05);
}

export function handleSummary(data) {
  const out = { stdout: '' };
  if (__ENV.SUMMARY_JSON) out[__ENV.SUMMARY_JSON] = JSON.stringify(data, null, __ENV.INDENT ? 2 : 0);
  return out;
}
