import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { planText } from './planText';

const BODY = {
  version: 1,
  name: 'quick demo against the Go target',
  tool: 'hey',
  pool: 'local',
  variants: [{ name: 'target', role: 'reference', target: 'http://127.0.0.1:18080', resources: { source: 'process' } }],
  scenarios: [{ name: 'ok', path: '/ok' }, { name: 'slow: tail', path: '/slow' }],
  loads: [{ concurrency: 10, requests: 2000 }],
  criteria: [{ metric: 'latency_p95', op: '<', value: 50 }],
  labels: {},
  tags: [],
};

describe('planText', () => {
  it('shows the saved YAML text as written, comments included', () => {
    const source = '# nightly\nname: x   # the name\ntool: hey\n';
    expect(planText({ body: { name: 'x', tool: 'hey' }, source_yaml: source }, 'yaml')).toEqual({ text: source, origin: 'saved' });
  });

  it('renders a plan saved as JSON to YAML that parses back to the same body, keys in stored order', () => {
    const { text, origin } = planText({ body: BODY, source_yaml: null }, 'yaml');
    expect(origin).toBe('rendered');
    // Parsed by another library than the one that wrote it.
    expect(load(text)).toEqual(BODY);
    expect(text.split('\n')[0]).toBe('version: 1');
  });

  it('shows JSON when asked', () => {
    expect(JSON.parse(planText({ body: BODY, source_yaml: 'name: x\n' }, 'json').text)).toEqual(BODY);
  });
});
