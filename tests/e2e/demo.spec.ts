import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test, type Locator } from '@playwright/test';
import { api, baseUrl, getRun, ok, REPO, type Schemas } from './support/api';
import { expectShownNumber } from './support/numbers';
import { adminToken, manualShot, shot } from './support/page';

/**
 * The recorded demo `make up` shows (examples/data/, docs/how-to/demo.md), as `make test-e2e` loads it (`stack.py
 * ephemeral --demo`, the command `make up` runs), and each seed's shape on its run page: the EaseAgent lead
 * tables, the Easegress matrix with ratios, the PTS per-process columns. Shown numbers are compared with the
 * API's cells; the screenshots (artifacts/screenshots/demo-*.png) are the dashboard as a new user finds it after
 * `make up`. The spec loads the demo again first, as a second `make up` does: that must add no run (and loads
 * it when the stack was started without --demo).
 */
type Run = Schemas['RunDetail'];
type Cell = Schemas['CellOut'];

const URIS = ['API-URI-owner-3spans', 'API-URI-vets-10spans'];
/** The runs each recorded project holds (examples/data/<project>/project.json). */
const RECORDED_RUNS: Record<string, number> = Object.fromEntries(
  ['easeagent', 'easegress-router', 'pts-go'].map((p) => [
    p, (JSON.parse(readFileSync(resolve(REPO, 'examples/data', p, 'project.json'), 'utf8')) as { runs: string[] }).runs.length,
  ]));

function loadDemo(): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(resolve(REPO, '.venv/bin/python'),
      [resolve(REPO, 'infra/scripts/demo.py'), 'recorded', '--url', baseUrl()],
      { env: { ...process.env, BENCHTRAIL_TOKEN: adminToken() }, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 ? done() : fail(new Error(`demo.py recorded exited with ${code}`))));
  });
}

async function runOf(project: string, agentVersion?: string): Promise<Run> {
  const runs = await ok(api().GET('/api/v1/projects/{slug}/runs', { params: { path: { slug: project } } }));
  const found = runs.items.find((r) => agentVersion === undefined || r.agent_version === agentVersion);
  if (!found) throw new Error(`no run of ${project} ${agentVersion ?? ''}`);
  return getRun(found.slug);
}

function cellOf(run: Run, variant: string, scenario: string, loadKey: string): Cell {
  const v = run.variants.find((x) => x.name === variant)!;
  const s = run.scenarios.find((x) => x.name === scenario)!;
  const l = run.loads.find((x) => x.key === loadKey)!;
  const c = run.cells.find((x) => x.variant_id === v.id && x.scenario_id === s.id && x.load_id === l.id);
  if (!c) throw new Error(`no cell ${variant}/${scenario}/${loadKey}`);
  return c;
}

function value(c: Cell | Schemas['ProcessCellOut'], metric: string): number {
  const v = (c as unknown as Record<string, unknown>)[metric];
  if (typeof v !== 'number') throw new Error(`cell ${c.id} has no ${metric}`);
  return v;
}

/** "reference / variant / diff" of one lead-table cell against the API's two values. */
async function expectComparison(cell: Locator, reference: number, variant: number): Promise<void> {
  await expectShownNumber(cell.locator('[data-part="reference"]'), reference);
  await expectShownNumber(cell.locator('[data-part="variant"]'), variant);
  await expectShownNumber(cell.locator('[data-part="diff"]'), variant - reference);
}

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({}, info) => {
  info.setTimeout(300_000);
  await loadDemo();
  for (const [project, count] of Object.entries(RECORDED_RUNS)) {
    const runs = await ok(api().GET('/api/v1/projects/{slug}/runs', { params: { path: { slug: project } } }));
    expect(runs.total, `runs of ${project} after loading the demo twice`).toBe(count);
  }
});

test('EaseAgent shape: thread groups 10/20/50 × two URIs, baseline / agent / diff of CPU, heap, P75, throughput', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const run = await runOf('easeagent', '2.10.0');
  await page.goto(`/r/${run.slug}`);
  await expect(page.getByRole('heading', { name: 'baseline vs agent per load level' })).toBeVisible();
  expect(run.loads.map((l) => l.label).sort()).toEqual(['10 threads', '20 threads', '50 threads']);
  for (const load of run.loads) {
    const table = page.getByRole('region', { name: `thread group ${load.label}` }).getByRole('table');
    await expect(table).toBeVisible();
    for (const header of ['CPU (%)', 'Heap (MB)', 'P75 latency (ms)', 'Throughput (req/s)']) {
      await expect(table.getByRole('columnheader', { name: header })).toBeVisible();
    }
    for (const uri of URIS) {
      const row = table.getByRole('row', { name: new RegExp(`^${uri}`) });
      for (const metric of ['latency_p75', 'throughput']) {
        await expectComparison(row.locator(`td[data-col="${metric}"]`),
          value(cellOf(run, 'baseline', uri, load.key), metric), value(cellOf(run, 'agent', uri, load.key), metric));
      }
    }
    // CPU and heap are the JVMs' own, measured once per thread group: the all-URIs cell's values.
    const cpu = table.locator('td[data-col="cpu_pct"]').first();
    await expectComparison(cpu, value(cellOf(run, 'baseline', '*', load.key), 'cpu_pct'),
      value(cellOf(run, 'agent', '*', load.key), 'cpu_pct'));
  }
  // Baseline and agent over time, one chart per thread group (the seed's per-thread-group images).
  await page.getByRole('combobox', { name: 'Series metric' }).selectOption('throughput');
  await expect(page.getByRole('heading', { name: 'Over time: all variants per load level' })).toBeVisible();
  await expect(page.locator('.js-plotly-plot').first()).toBeVisible();
  await shot(page, 'demo-easeagent-run');
  // The README's picture: the seed's table, drawn from the recorded demo.
  await manualShot(page.getByRole('region', { name: 'baseline vs agent per load level' }), 'demo-easeagent-lead');

  // The three agent versions are a trail: History opens on them.
  await page.goto('/p/easeagent/history');
  await expect(page.getByRole('figure').first()).toBeVisible();
  await shot(page, 'demo-easeagent-history');
  expect(errors).toEqual([]);
});

test('Easegress shape: three router variants × static/prefix/regexp × concurrency 50/100/120, with ratios', async ({ page }) => {
  const run = await runOf('easegress-router');
  expect(run.variants.map((v) => v.name)).toEqual(['ordered-v1', 'ordered-v2', 'radixtree']);
  await page.goto(`/r/${run.slug}?metric=throughput`);
  const matrix = page.getByRole('region', { name: 'All variants × scenario × load' });
  await expect(matrix.getByRole('combobox', { name: 'Metric' })).toHaveValue('throughput');
  const table = matrix.getByRole('table');
  for (const scenario of ['static', 'prefix', 'regexp']) {
    for (const load of run.loads) {
      const row = table.getByRole('row').filter({ hasText: scenario }).filter({ hasText: load.label });
      await expect(row).toHaveCount(1);
      const ref = value(cellOf(run, 'ordered-v1', scenario, load.key), 'throughput');
      await expectShownNumber(row.locator(`td[data-col="${run.variants[0].id}.value"]`), ref);
      for (const v of run.variants.slice(1)) {
        const ratio = value(cellOf(run, v.name, scenario, load.key), 'throughput') / ref;
        await expectShownNumber(row.locator(`td[data-col="${v.id}.cmp"] [data-part="ratio"]`), ratio);
      }
    }
  }
  await shot(page, 'demo-easegress-run');
});

test('PTS shape: consumer and provider CPU and memory, without and with the agent, at 1000 req/s', async ({ page }) => {
  const run = await runOf('pts-go');
  expect(run.loads.map((l) => l.label)).toEqual(['1000 req/s']);
  await page.goto(`/r/${run.slug}`);
  const lead = page.getByRole('region', { name: 'target rate 1000 req/s' });
  const row = lead.getByRole('row', { name: /^echo/ });
  const variant = (name: string) => run.variants.find((v) => v.name === name)!.id;
  for (const process of ['consumer', 'provider']) {
    for (const [metric, label] of [['cpu_pct', 'CPU (%)'], ['rss_mb', 'RSS (MB)']] as const) {
      await expect(lead.getByRole('columnheader', { name: `${process} ${label}` })).toBeVisible();
      const of = (v: string) => run.process_cells.find((c) => c.process === process && c.variant_id === variant(v))!;
      await expectComparison(row.locator(`td[data-col="process.${process}.${metric}"]`),
        value(of('no-agent'), metric), value(of('agent'), metric));
    }
  }
  await expectComparison(row.locator('td[data-col="latency_mean"]'),
    value(cellOf(run, 'no-agent', 'echo', run.loads[0].key), 'latency_mean'),
    value(cellOf(run, 'agent', 'echo', run.loads[0].key), 'latency_mean'));
  await shot(page, 'demo-pts-run');
});
