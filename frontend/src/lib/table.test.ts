import { describe, expect, it } from 'vitest';
import { comparisonDetail, comparisonTone, toCsv, toJson, toMarkdown, type Column, type ComparisonValue, type TableModel } from './table';

function c(reference: number | null, variant: number | null, extra: Partial<ComparisonValue> = {}): ComparisonValue {
  const diff = reference !== null && variant !== null ? variant - reference : null;
  const pct = diff !== null && reference ? (diff / reference) * 100 : null;
  return { kind: 'comparison', reference, variant, diff, pct, ratio: null, ...extra };
}

/** The EaseAgent seed's 10-thread table, written by hand. */
const seedTable = (): TableModel => ({
  title: 'thread group 10 threads: baseline / agent / diff',
  sides: { reference: 'baseline', variant: 'agent' },
  columns: [
    { key: 'scenario', label: 'Scenario', role: 'label' },
    { key: 'cpu_pct', label: 'CPU', role: 'comparison', unit: '%', direction: 'lower' },
    { key: 'heap_mb', label: 'Heap', role: 'comparison', unit: 'MB', direction: 'lower' },
    { key: 'latency_p75', label: 'P75 latency', role: 'comparison', unit: 'ms', direction: 'lower' },
    { key: 'throughput', label: 'Throughput', role: 'comparison', unit: 'req/s', direction: 'higher' },
  ],
  rows: [
    {
      id: 'owner',
      values: {
        scenario: 'API-URI-owner-3spans',
        cpu_pct: c(10.7, 13.3),
        heap_mb: c(246, 289),
        latency_p75: c(100, 120, { stats: { low: 15, high: 26, verdict: 'large', mde: 4, worse: true, pValue: null, method: 'bootstrap' } }),
        throughput: c(361, 293),
      },
    },
    { id: 'vets', values: { scenario: 'API-URI-vets-10spans', cpu_pct: c(8.56, 11.3), heap_mb: c(261, 200), latency_p75: c(58.8, 88.8), throughput: c(361, 293) } },
    { id: '*', values: { scenario: 'All scenarios', cpu_pct: null, heap_mb: null, latency_p75: c(80, 104), throughput: c(722, 586) } },
  ],
});

describe('toMarkdown', () => {
  it('writes the seed shape "baseline / agent / diff" per metric', () => {
    const md = toMarkdown(seedTable());
    const lines = md.trim().split('\n');
    expect(lines[0]).toBe('**thread group 10 threads: baseline / agent / diff**');
    expect(lines[2]).toBe(
      '| Scenario | CPU (baseline / agent / diff) | Heap (baseline / agent / diff) | P75 latency (baseline / agent / diff) | Throughput (baseline / agent / diff) |',
    );
    expect(lines[3]).toBe('| :--- | ---: | ---: | ---: | ---: |');
    expect(lines[4]).toBe(
      '| API-URI-owner-3spans | 10.7% / 13.3% / +2.60% | 246MB / 289MB / +43MB | 100ms / 120ms / +20ms | 361 req/s / 293 req/s / -68 req/s |',
    );
    expect(lines[6]).toBe('| All scenarios | — | — | 80ms / 104ms / +24ms | 722 req/s / 586 req/s / -136 req/s |');
  });

  it('escapes pipes in names', () => {
    const md = toMarkdown({ title: 't', columns: [{ key: 'a', label: 'A|B', role: 'label' }], rows: [{ id: '1', values: { a: 'x|y' } }] });
    expect(md).toContain('| A\\|B |');
    expect(md).toContain('| x\\|y |');
  });
});

describe('toCsv', () => {
  it('has one column per number with units in the header and full precision', () => {
    const csv = toCsv(seedTable()).trim().split('\n');
    const header = csv[0].split(',');
    expect(header.slice(0, 5)).toEqual(['Scenario', 'CPU reference (%)', 'CPU variant (%)', 'CPU diff (%)', 'CPU pct']);
    expect(header).toContain('P75 latency ci_low (ms)');
    expect(header.indexOf('P75 latency diff_repetitions (ms)')).toBe(header.indexOf('P75 latency ci_low (ms)') - 1);
    const owner = csv[1].split(',');
    expect(owner[0]).toBe('API-URI-owner-3spans');
    expect(Number(owner[3])).toBeCloseTo(13.3 - 10.7, 12);
    expect(Number(owner[header.indexOf('P75 latency ci_high (ms)')])).toBe(26);
    expect(owner[header.indexOf('P75 latency verdict')]).toBe('large');
    expect(csv[3].split(',')[1]).toBe(''); // the aggregate row has no CPU: an empty field, not 0
  });

  it('quotes fields with commas, quotes and newlines', () => {
    const csv = toCsv({
      title: 't',
      columns: [{ key: 'a', label: 'name', role: 'label' }],
      rows: [{ id: '1', values: { a: 'GET /a, "b"' } }],
    });
    expect(csv).toBe('name\n"GET /a, ""b"""\n');
  });
});

describe('toJson', () => {
  it('keys rows by column label and unit', () => {
    const doc = JSON.parse(toJson(seedTable())) as { title: string; rows: Record<string, unknown>[] };
    expect(doc.rows[0]['Scenario']).toBe('API-URI-owner-3spans');
    expect(doc.rows[0]['Throughput (req/s)']).toMatchObject({ reference: 361, variant: 293, diff: -68 });
    expect(doc.rows).toHaveLength(3);
  });
});

describe('comparisonDetail', () => {
  const p75: Column = { key: 'latency_p75', label: 'P75 latency', role: 'comparison', unit: 'ms', direction: 'lower' };
  const stats = { low: -0.0885, high: 0.1135, verdict: 'too noisy to tell', mde: 0.139, worse: null, pValue: null, method: 'paired-t-repetitions' };

  it('shows the difference over repetitions the interval is of, beside the cells\' difference', () => {
    // The cells' P75 over all samples are equal; the repetitions' P75s differ by 0.0125 ms on average.
    const text = comparisonDetail(p75, c(0.3, 0.3, { stats: { ...stats, estimate: 0.0125 } }));
    expect(text).toBe('0% · +0.013 [-0.088, +0.114] · too noisy to tell (MDE ±0.139)');
    expect(comparisonDetail(p75, c(0.3, 0.3, { stats }))).toBe('0% · [-0.088, +0.114] · too noisy to tell (MDE ±0.139)');
  });

  it('marks a difference the interval shows although the cells\' values are equal', () => {
    const worse = { ...stats, low: 0.0035, high: 0.1965, verdict: 'large', worse: true, estimate: 0.1 };
    expect(comparisonTone(c(0.3, 0.3, { stats: worse }), 'lower')).toBe('worse');
    expect(comparisonTone(c(0.3, 0.3, { stats: { ...stats, estimate: 0.0125 } }), 'lower')).toBeUndefined();
  });
});
