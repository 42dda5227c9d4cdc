import { describe, expect, it } from 'vitest';
import { isTerminal, parseRunEvent, progressView } from './liveRun';

describe('parseRunEvent', () => {
  it('reads the API event payload', () => {
    const e = parseRunEvent('{"slug":"abc","status":"running","progress":{"percent":40},"status_detail":null,"is_valid":true}');
    expect(e).toEqual({ slug: 'abc', status: 'running', progress: { percent: 40 }, status_detail: null, is_valid: true });
  });

  it('ignores keep-alives and foreign data', () => {
    expect(parseRunEvent('')).toBeNull();
    expect(parseRunEvent('not json')).toBeNull();
    expect(parseRunEvent('{"status":"running"}')).toBeNull();
    expect(parseRunEvent('[1,2]')).toBeNull();
  });
});

describe('progressView', () => {
  it('numbers steps from 1 and keeps the last log lines', () => {
    const log = Array.from({ length: 50 }, (_, i) => `line ${i}`);
    const v = progressView({ step: 'concurrency 2', step_index: 1, steps_total: 3, percent: 55.5, achieved_rate: 812.4, errors: 0, requests: 120, runner: 'local', log }, 10);
    expect(v.step).toBe('step 2 of 3: concurrency 2');
    expect(v.percent).toBe(55.5);
    expect(v.achievedRate).toBe(812.4);
    expect(v.errors).toBe(0);
    expect(v.requests).toBe(120);
    expect(v.runner).toBe('local');
    expect(v.log).toEqual(log.slice(40));
  });

  it('clamps the percentage and drops values that are not numbers', () => {
    expect(progressView({ percent: 140 }).percent).toBe(100);
    expect(progressView({ percent: -3 }).percent).toBe(0);
    const v = progressView({ percent: 'x', achieved_rate: null, log: ['a', 3, 'b'] });
    expect(v.percent).toBeNull();
    expect(v.achievedRate).toBeNull();
    expect(v.log).toEqual(['a', 'b']);
    expect(progressView(undefined).step).toBeNull();
  });

  it('knows the terminal states', () => {
    expect(['completed', 'failed', 'cancelled'].every(isTerminal)).toBe(true);
    expect(['queued', 'running', 'ingesting'].some(isTerminal)).toBe(false);
  });
});
