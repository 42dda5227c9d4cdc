import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { toYaml } from './yaml';

const PLAN = {
  version: 1,
  name: 'quick demo against the Go target',
  tool: 'hey',
  pool: 'local',
  variants: [{ name: 'target', role: 'reference', target: 'http://127.0.0.1:18080', resources: { source: 'process' } }],
  scenarios: [{ name: 'ok', path: '/ok' }, { name: 'slow', path: '/slow' }],
  loads: [{ concurrency: 10, requests: 2000 }],
  criteria: [{ metric: 'latency_p95', op: '<', value: 50 }],
  labels: {},
  tags: [],
};

describe('toYaml', () => {
  it('writes a plan in block style', () => {
    expect(toYaml({ name: 'ok', loads: [{ concurrency: 10, requests: 2000 }] })).toBe(
      'name: ok\nloads:\n  - concurrency: 10\n    requests: 2000\n',
    );
  });

  it('parses back to the same value with an independent YAML parser', () => {
    expect(load(toYaml(PLAN))).toEqual(PLAN);
  });

  it('quotes strings YAML would read as other types or syntax', () => {
    const tricky = { url: 'http://127.0.0.1:8080/x', colon: 'ends:', 'k: v': 1, a: 'true', b: '10', c: 'null', d: 'x: y', e: '', f: '- item', g: 'a # b', h: '0x1F', i: 'yes', dot5: '.5', inf: '.inf', path: './x', j: [1.5, false, null] };
    expect(load(toYaml(tricky))).toEqual(tricky);
    expect(toYaml({ a: 'true' })).toBe('a: "true"\n');
    expect(toYaml({ target: 'http://127.0.0.1:8080' })).toBe('target: http://127.0.0.1:8080\n');
  });
});
