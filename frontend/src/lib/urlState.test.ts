import { describe, expect, it } from 'vitest';
import { enumCodec, listCodec, rangeCodec, readState, stringCodec, writeState, type Schema } from './urlState';

interface S {
  scenarios: string[];
  p: 'p50' | 'p75' | 'p99';
  metric: string;
  range: readonly [number, number] | null;
}

const schema: Schema<S> = {
  scenarios: listCodec(),
  p: enumCodec(['p50', 'p75', 'p99'] as const, 'p75'),
  metric: stringCodec('throughput'),
  range: rangeCodec(),
};

describe('URL state', () => {
  it('round-trips through a query string, including separators inside names', () => {
    const state: S = { scenarios: ['GET /a,b', '100%', 'threads:10'], p: 'p99', metric: 'latency_p50', range: [1.5, 20] };
    const qs = writeState(new URLSearchParams(), schema, state).toString();
    expect(readState(new URLSearchParams(qs), schema)).toEqual(state);
  });

  it('leaves defaults out of the URL and keeps unrelated parameters', () => {
    const qs = writeState(new URLSearchParams('a=run1'), schema, { scenarios: [], p: 'p75', metric: 'throughput', range: null });
    expect(qs.toString()).toBe('a=run1');
  });

  it('falls back to defaults for invalid values', () => {
    const s = readState(new URLSearchParams('p=p42&range=5,1&scenarios='), schema);
    expect(s).toEqual({ scenarios: [], p: 'p75', metric: 'throughput', range: null });
    expect(rangeCodec().parse('1,x')).toBeNull();
  });

  it('writes only the patched keys', () => {
    const next = writeState(new URLSearchParams('p=p99&metric=x'), schema, { p: 'p50' });
    expect(next.get('p')).toBe('p50');
    expect(next.get('metric')).toBe('x');
  });
});
