import type { ReactElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { MemoryRouter } from 'react-router';
import { describe, expect, it } from 'vitest';
import type { ComparisonValue, Row, TableModel } from '@/lib/table';
import { DataTable } from './DataTable';

function html(table: ReactElement): string {
  return renderToStaticMarkup(<MemoryRouter>{table}</MemoryRouter>);
}

/** The `<tr>` elements of the body, in order. */
function bodyRows(markup: string): string[] {
  const body = markup.slice(markup.indexOf('<tbody>'), markup.indexOf('</tbody>'));
  return body.split('<tr').slice(1);
}

function cmp(reference: number, variant: number, extra: Partial<ComparisonValue> = {}): ComparisonValue {
  return { kind: 'comparison', reference, variant, diff: variant - reference, pct: ((variant - reference) / reference) * 100, ratio: null, ...extra };
}

describe('DataTable', () => {
  it('draws a seed cell as "baseline / agent / diff" over a detail line, toned by the interval', () => {
    const model: TableModel = {
      title: 'thread group 10',
      columns: [
        { key: 'scenario', label: 'Scenario', role: 'label' },
        { key: 'latency_p75', label: 'P75 latency', role: 'comparison', unit: 'ms', direction: 'lower' },
      ],
      rows: [
        {
          id: 'owner',
          values: {
            scenario: 'API-URI-owner-3spans',
            // 100 → 120 ms, interval [15, 26] excludes 0 and a higher latency is worse.
            latency_p75: cmp(100, 120, { stats: { low: 15, high: 26, verdict: 'large', mde: 4, worse: true, pValue: null, method: 'bootstrap' } }),
          },
        },
      ],
    };
    const out = html(<DataTable model={model} fit />);
    expect(out).toContain('<table aria-label="thread group 10">');
    expect(out).toContain('<th scope="row">API-URI-owner-3spans</th>');
    const [row] = bodyRows(out);
    expect(row).toContain('class="cmp worse" data-col="latency_p75"');
    expect(row).toContain('<span data-part="reference">100</span> / <span data-part="variant">120</span> / <span data-part="diff" class="cmp-diff">+20</span>');
    expect(row).toContain('aria-label="interval excludes 0"');
    // Second line: +20% (20 of 100), the interval and the verdict.
    expect(row).toContain('<span class="cmp-detail" data-part="detail">+20.0% · [+15, +26] · large</span>');
    expect(out.startsWith('<div class="table-fit">')).toBe(true);
  });

  it('lets a long series name wrap at its dots, never inside a number', () => {
    const model: TableModel = {
      title: 'trend',
      columns: [
        { key: 'x', label: 'Agent version', role: 'label' },
        { key: 't0', label: 'auto-instrumentation · AwsSdkBenchmark.awsV1Request · sample', role: 'percent' },
        { key: 't1', label: 'P99.9 latency', role: 'value', unit: 'ms' },
      ],
      rows: [{ id: '2.7.x', values: { x: '2.7.x', t0: 3.1, t1: 12 } }],
    };
    const out = html(<DataTable model={model} />);
    expect(out).toContain('>auto-instrumentation · AwsSdkBenchmark.<wbr/>awsV1Request · sample</th>');
    expect(out).toContain('>P99.9 latency (ms)</th>');
    expect(out).toContain('aria-label="auto-instrumentation · AwsSdkBenchmark.awsV1Request · sample"');
  });

  it('spans grouped headers and a process-wide value shared by consecutive rows', () => {
    const shared = cmp(10, 12, { processWide: true });
    const model: TableModel = {
      title: 'grouped',
      columns: [
        { key: 'scenario', label: 'Scenario', role: 'label' },
        { key: 'a', label: 'baseline', role: 'reference', group: 'Throughput', unit: 'req/s' },
        { key: 'b', label: 'agent', role: 'variant', group: 'Throughput', unit: 'req/s' },
        { key: 'cpu', label: 'CPU', role: 'comparison', unit: '%' },
      ],
      rows: [
        { id: 'x', values: { scenario: 'x', a: 1, b: 2, cpu: shared } },
        { id: 'y', values: { scenario: 'y', a: 3, b: 4, cpu: shared } },
      ],
    };
    const out = html(<DataTable model={model} />);
    expect(out).toContain('<th colSpan="1" scope="colgroup"></th><th colSpan="2" scope="colgroup">Throughput</th>');
    expect(out).toContain('aria-label="Throughput baseline (req/s)"');
    const [first, second] = bodyRows(out);
    expect(first).toContain('rowSpan="2"');
    expect(second).not.toContain('data-col="cpu"');
    // Scrolling tables can be scrolled from the keyboard.
    expect(out.startsWith('<div class="table-scroll" tabindex="0">')).toBe(true);
  });

  it('renders cells of a screen (links, controls) by column key, names rows by the chosen column, keeps a caption', () => {
    type RunRow = Row & { slug: string };
    const model: TableModel<RunRow> = {
      title: 'Runs',
      rowHeader: 'run',
      columns: [
        { key: 'pick', label: 'Compare', role: 'label' },
        { key: 'run', label: 'Run', role: 'label' },
        { key: 'requests', label: 'Requests', role: 'value' },
        { key: 'note', label: 'Note', role: 'value', text: true },
      ],
      rows: [{ id: 'r1', slug: 'r1', values: { pick: null, run: 'r1', requests: 1200, note: 'a long note' } }],
    };
    const out = html(
      <DataTable
        model={model}
        caption="Runs of the project"
        render={{
          pick: (row) => <input type="checkbox" aria-label={`Pick run ${row.slug}`} />,
          run: (row) => <a href={`/r/${row.slug}`}>{row.slug}</a>,
        }}
      />,
    );
    expect(out).toContain('<caption>Runs of the project</caption>');
    const [row] = bodyRows(out);
    expect(row).toContain('<td data-col="pick"><input type="checkbox" aria-label="Pick run r1"/></td>');
    expect(row).toContain('<th scope="row"><a href="/r/r1">r1</a></th>');
    expect(row).toContain('<td data-col="requests" title="1200">1200</td>');
    expect(row).toContain('<td class="text" data-col="note">a long note</td>');
    expect(row.match(/scope="row"/g)).toHaveLength(1);
  });

  it('says what an empty body means', () => {
    const model: TableModel = { title: 'Alerts', columns: [{ key: 'a', label: 'Alert', role: 'label' }], rows: [] };
    expect(html(<DataTable model={model} empty="No alerts." />)).toContain('<td colSpan="1">No alerts.</td>');
  });
});
