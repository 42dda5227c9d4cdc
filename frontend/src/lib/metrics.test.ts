import { describe, expect, it } from 'vitest';

import { scoreDirection } from './metrics';

describe('scoreDirection', () => {
  it('reads a JMH unit by its mode and a marked unit by its mark', () => {
    expect(scoreDirection('ops/ms')).toBe('higher');
    expect(scoreDirection('us/op')).toBe('lower');
    expect(scoreDirection('MB/s ↑')).toBe('higher'); // Go's b.SetBytes rate
    expect(scoreDirection('points ↓')).toBe('lower');
    expect(scoreDirection('↑')).toBe('higher'); // a customBiggerIsBetter bench without a unit
    expect(scoreDirection('MB/sec')).toBe('lower'); // JMH's gc.alloc.rate: unmarked, better lower
    expect(scoreDirection(null)).toBe('lower');
  });
});
