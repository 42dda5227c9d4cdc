import { describe, expect, it } from 'vitest';
import { buildBreakdown } from './runModel';
import { toCsv, toJson, toMarkdown, type TableModel } from './table';
import { easeagentRun } from './testRuns';

const seedTable = (): TableModel => {
  const run = easeagentRun();
  return buildBreakdown(run, {
    load: run.loads.find((l) => l.key === 'threads:10')!,
    reference: run.variants[0],
    variant: run.variants[1],
    percentile: 'p75',
  });
};

describe('toMarkdown', () => {
  it('writes the seed shape "baseline / agent / diff" per metric', () => {
    const md = toMarkdown(seedTable());
    const lines = md.trim().split('\n');
    expect(lines[0]).toBe('**thread group 10 threads: baseline / agent / diff**');
    expect(lines[2]).toBe(
      '| Scenario | CPU (baseline / agent / diff / Δ%) | Heap (baseline / agent / diff / Δ%) | P75 latency (baseline / agent / diff / Δ%) | Throughput (baseline / agent / diff / Δ%) | Errors (baseline / agent / diff / Δ%) |',
    );
    expect(lines[3]).toBe('| :--- | ---: | ---: | ---: | ---: | ---: |');
    expect(lines[4]).toBe(
      '| API-URI-owner-3spans | 10.70% / 13.30% / +2.60% / +24.3% | 246MB / 289MB / +43MB / +17.5% | 100ms / 120ms / +20ms / +20.0% | 361 req/s / 293 req/s / -68 req/s / -18.8% | 0 / 2 / +2 / — |',
    );
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
    expect(csv[0].split(',').slice(0, 5)).toEqual(['Scenario', 'baseline (%)', 'agent (%)', 'diff (%)', 'Δ%']);
    const owner = csv[1].split(',');
    expect(owner[0]).toBe('API-URI-owner-3spans');
    expect(Number(owner[3])).toBeCloseTo(13.3 - 10.7, 12);
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
    expect(doc.rows).toHaveLength(3);
  });
});
