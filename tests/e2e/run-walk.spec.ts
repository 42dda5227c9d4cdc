import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import type { paths } from '../../frontend/src/api/schema';
import { api, getRun, loadState, ok, SCREENSHOTS, type Schemas } from './support/api';
import { expectShownNumber } from './support/numbers';
import { manualShot } from './support/page';

type Run = Schemas['RunDetail'];
type Cell = Schemas['CellOut'];
type AbResult = Schemas['AbOut'];
/** The metrics the overheads endpoint declares (and refuses others of with 422). */
type OverheadMetric = NonNullable<NonNullable<paths['/api/v1/runs/{slug}/overheads']['get']['parameters']['query']>['metric']>;

const state = loadState();
mkdirSync(SCREENSHOTS, { recursive: true });

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage: true });
}

function cellOf(run: Run, variant: string, scenario: string, loadKey: string): Cell {
  const v = run.variants.find((x) => x.name === variant)!;
  const s = run.scenarios.find((x) => x.name === scenario)!;
  const l = run.loads.find((x) => x.key === loadKey)!;
  const c = run.cells.find((x) => x.variant_id === v.id && x.scenario_id === s.id && x.load_id === l.id);
  if (!c) throw new Error(`no cell ${variant}/${scenario}/${loadKey}`);
  return c;
}

function num(c: Cell, metric: string): number {
  const v = (c as unknown as Record<string, unknown>)[metric];
  if (typeof v !== 'number') throw new Error(`cell ${c.id} has no ${metric}`);
  return v;
}

/** The shown "estimate [low, high]" of a cell's detail line equals the API's, within its rounding. */
async function expectInterval(detail: Locator, result: AbResult | undefined): Promise<void> {
  const text = (await detail.innerText()).trim();
  if (!result || result.ci_low === null || result.ci_high === null) return;
  const m = /(\S+) \[([^,\]]+), ([^\]]+)\]/.exec(text);
  expect(m, `estimate and interval in '${text}'`).not.toBeNull();
  const pairs = [[m![1], result.abs_diff], [m![2], result.ci_low], [m![3], result.ci_high]] as const;
  for (const [shown, api] of pairs) {
    const decimals = (shown.replace(/[+]/g, '').split('.')[1] ?? '').length;
    const value = Number(shown.replace('+', ''));
    expect(Math.abs(value - api), `${shown} in "${text}"`).toBeLessThanOrEqual(0.5 * 10 ** -decimals + 1e-9);
  }
  expect(text).toContain(result.verdict);
  if (result.verdict === 'too noisy to tell' && result.mde !== null) expect(text).toMatch(/MDE ±/);
}

async function expectBreakdownMatches(page: Page, run: Run, metric: OverheadMetric): Promise<void> {
  const overheads = await ok(api().GET('/api/v1/runs/{slug}/overheads', { params: { path: { slug: run.slug }, query: { metric } } }));
  for (const load of run.loads) {
    const section = page.getByRole('region', { name: `thread group ${load.label}` });
    const table = section.getByRole('table');
    await expect(table).toBeVisible();
    for (const scenario of ['API-URI-owner-3spans', 'API-URI-vets-10spans']) {
      const row = table.getByRole('row', { name: new RegExp(`^${scenario}`) });
      const cell = row.locator(`td[data-col="${metric}"]`);
      const ref = num(cellOf(run, 'baseline', scenario, load.key), metric);
      const agent = num(cellOf(run, 'agent', scenario, load.key), metric);
      await expectShownNumber(cell.locator('[data-part="reference"]'), ref);
      await expectShownNumber(cell.locator('[data-part="variant"]'), agent);
      // The difference is recomputed here from the API's two values, not read from the page's model.
      await expectShownNumber(cell.locator('[data-part="diff"]'), agent - ref);
      const api = overheads.items.find(
        (i) => i.variant === 'agent' && i.cell.scenario === scenario && i.cell.load_key === load.key,
      )?.result;
      expect(api, `overhead of ${scenario} at ${load.key}`).toBeDefined();
      // The statistics arrive after the values: wait for the verdict, then compare the interval.
      await expect(cell.locator('[data-part="detail"]')).toContainText(api!.verdict);
      await expectInterval(cell.locator('[data-part="detail"]'), api);
      const significant = api!.ci_low !== null && api!.ci_high !== null && (api!.ci_low > 0 || api!.ci_high < 0);
      await expect(cell.getByRole('img', { name: 'interval excludes 0' })).toHaveCount(significant ? 1 : 0);
    }
  }
}

test('projects → project → run → breakdown → overlay → permalink → compare', async ({ page, browser }) => {
  // Three metrics × three loads × two scenarios of values, intervals and verdicts checked against the API.
  test.setTimeout(150_000);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const [slugA, slugB] = state.jtlRuns;
  const run = await getRun(slugA);

  await page.goto('/');
  const projects = page.getByRole('table', { name: 'Projects' });
  const projectRow = projects.getByRole('row', { name: new RegExp(state.project.replace('e2e-easeagent-', 'EaseAgent petclinic ')) });
  await expect(projectRow.getByRole('cell').nth(1)).toHaveText('2');
  await shot(page, '01-projects');
  await manualShot(page, 'projects');

  await projectRow.getByRole('link').click();
  await expect(page).toHaveURL(new RegExp(`/p/${state.project}$`));
  const runs = page.getByRole('table', { name: 'Runs' });
  await expect(runs.getByRole('row')).toHaveCount(3);
  await shot(page, '02-project');

  await runs.getByRole('link', { name: slugA }).click();
  await expect(page).toHaveURL(new RegExp(`/r/${slugA}$`));
  await expect(page.getByRole('heading', { level: 1 })).toContainText(`Run ${slugA}`);
  await expect(page.getByText('m5.xlarge 4 CPU 16 GB')).toBeVisible();
  await expectBreakdownMatches(page, run, 'latency_p75');
  await expectBreakdownMatches(page, run, 'throughput');
  await expectBreakdownMatches(page, run, 'latency_mean');

  // At 1280 px the whole lead table is on screen: no sideways scrolling, right edge inside the viewport.
  await page.setViewportSize({ width: 1280, height: 900 });
  for (const load of run.loads) {
    const table = page.getByRole('region', { name: `thread group ${load.label}` }).getByRole('table');
    const box = (await table.boundingBox())!;
    expect(box.x + box.width, `right edge of ${load.label}`).toBeLessThanOrEqual(1280);
  }
  // The charts drawn at the wider viewport follow the resize on Plotly's own (asynchronous) resize handler.
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
  await page.getByRole('region', { name: `thread group ${run.loads[0].label}` }).screenshot({
    path: resolve(SCREENSHOTS, '03a-run-lead-table-1280.png'),
  });
  await manualShot(page.getByRole('region', { name: `thread group ${run.loads[0].label}` }), 'run-overhead-table');
  await page.setViewportSize({ width: 1400, height: 900 });

  // Percentile choice goes into the URL and re-shapes every table.
  await page.getByRole('combobox', { name: 'Percentile', exact: true }).selectOption('p99');
  await expect(page).toHaveURL(/[?&]p=p99/);
  await expectBreakdownMatches(page, run, 'latency_p99');

  // Overlays: one chart per thread group, both variants drawn on it.
  const overlay = page.getByRole('region', { name: 'Over time: all variants per load level' });
  const firstChart = overlay.getByRole('figure').first();
  await expect(firstChart.locator('.js-plotly-plot .main-svg').first()).toBeVisible();
  await expect(firstChart.locator('.scatterlayer .trace')).toHaveCount(2);
  await expect(overlay.getByRole('figure')).toHaveCount(run.loads.length);
  await page.getByRole('combobox', { name: 'Series metric', exact: true }).selectOption('latency_p95');
  await expect(page).toHaveURL(/series=latency_p95/);
  await shot(page, '03-run-page');

  // Narrow the view, then share it.
  await page.getByRole('checkbox', { name: '10 threads' }).uncheck();
  await expect(page.getByRole('region', { name: 'thread group 10 threads' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Copy link to this view' }).click();
  const permalink = await page.getByLabel('Permalink').inputValue();
  expect(permalink).toContain(`/r/${slugA}?`);

  const fresh = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const other = await fresh.newPage();
  await other.goto(permalink);
  await expect(other.getByRole('combobox', { name: 'Percentile', exact: true })).toHaveValue('p99');
  await expect(other.getByRole('combobox', { name: 'Series metric', exact: true })).toHaveValue('latency_p95');
  await expect(other.getByRole('checkbox', { name: '10 threads' })).not.toBeChecked();
  await expect(other.getByRole('region', { name: 'thread group 10 threads' })).toHaveCount(0);
  await expectBreakdownMatches(other, { ...run, loads: run.loads.filter((l) => l.key !== 'threads:10') }, 'latency_p99');
  await shot(other, '04-permalink-fresh-context');
  await fresh.close();

  // Compare the two versions' runs, picked on the project page.
  await page.goto(`/p/${state.project}`);
  // The overhead trend above the runs table drawn first: a click must not race the page's last layout change.
  await expect(page.getByRole('region', { name: 'Overhead trend' }).locator('.js-plotly-plot .main-svg').first()).toBeVisible();
  await page.getByRole('checkbox', { name: `Pick run ${slugA} for comparison` }).check();
  await page.getByRole('checkbox', { name: `Pick run ${slugB} for comparison` }).check();
  await page.getByRole('link', { name: new RegExp(`^Compare`) }).click();
  await expect(page).toHaveURL(/\/compare\?a=.*&b=/);
  const b = await getRun(slugB);
  const table = page.getByRole('table', { name: /P75 latency: run/ });
  const load = run.loads.find((l) => l.key === 'threads:50')!;
  const row = table.getByRole('row', { name: new RegExp(`^agent API-URI-owner-3spans ${load.label}`) });
  const av = num(cellOf(run, 'agent', 'API-URI-owner-3spans', load.key), 'latency_p75');
  const bv = num(cellOf(b, 'agent', 'API-URI-owner-3spans', load.key), 'latency_p75');
  const cmp = row.locator('td[data-col="cmp"]');
  await expectShownNumber(cmp.locator('[data-part="reference"]'), av);
  await expectShownNumber(cmp.locator('[data-part="variant"]'), bv);
  await expectShownNumber(cmp.locator('[data-part="diff"]'), bv - av);
  const compared = await ok(api().GET('/api/v1/compare', { params: { query: { a: slugA, b: slugB, metric: 'latency_p75' } } }));
  const stat = compared.items.find((i) => i.a_variant === 'agent' && i.cell.scenario === 'API-URI-owner-3spans' && i.cell.load_key === load.key);
  expect(stat).toBeDefined();
  await expect(cmp.locator('[data-part="detail"]')).toContainText(stat!.result.verdict);
  await expectInterval(cmp.locator('[data-part="detail"]'), stat!.result);
  await shot(page, '05-compare');
  await manualShot(page, 'compare');
  expect(errors).toEqual([]);
});

test('N variants × scenario × load matrix shows ratios to the reference (hey)', async ({ page }) => {
  const run = await getRun(state.heyRun);
  await page.goto(`/r/${state.heyRun}?metric=throughput`);
  const table = page.getByRole('table', { name: /Throughput per variant, scenario and load/ });
  await expect(table).toBeVisible();
  const ref = run.variants.find((v) => v.is_reference)!;
  for (const load of run.loads) {
    const row = table.getByRole('row', { name: new RegExp(`^static ${load.label}`) });
    const refTps = num(cellOf(run, ref.name, 'static', load.key), 'throughput');
    await expectShownNumber(row.locator(`td[data-col="${ref.id}.value"]`), refTps);
    for (const v of run.variants.filter((x) => !x.is_reference)) {
      const tps = num(cellOf(run, v.name, 'static', load.key), 'throughput');
      const cell = row.locator(`td[data-col="${v.id}.cmp"]`);
      await expectShownNumber(cell.locator('[data-part="variant"]'), tps);
      await expectShownNumber(cell.locator('[data-part="ratio"]'), tps / refTps);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  const box = (await table.boundingBox())!;
  expect(box.x + box.width, 'right edge of the matrix').toBeLessThanOrEqual(1280);
  await shot(page, '06-hey-matrix');
});

test('JMH modes show each variant minus no-instrumentation in the score unit', async ({ page }) => {
  const slug = state.jmhRuns['2.8.x'];
  const run = await getRun(slug);
  await page.goto(`/r/${slug}`);
  const ref = run.variants.find((v) => v.name === 'no-instrumentation')!;
  const sdk = run.variants.find((v) => v.name === 'sdk-instrumentation')!;
  const modes = [...new Set(run.cells.filter((c) => typeof c.score === 'number').map((c) => c.mode))];
  expect(modes.length).toBeGreaterThan(0);
  for (const mode of modes) {
    const table = page.getByRole('table', { name: new RegExp(`^JMH ${mode} `) });
    await expect(table).toBeVisible();
    const sample = run.cells.find((c) => c.mode === mode && c.variant_id === ref.id && typeof c.score === 'number')!;
    const scenario = run.scenarios.find((s) => s.id === sample.scenario_id)!;
    const other = run.cells.find(
      (c) => c.mode === mode && c.variant_id === sdk.id && c.scenario_id === sample.scenario_id && c.load_id === sample.load_id,
    )!;
    const row = table.getByRole('row', { name: new RegExp(`^${scenario.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) }).first();
    await expectShownNumber(row.locator(`td[data-col="${ref.id}.score"]`), num(sample, 'score'));
    const cell = row.locator(`td[data-col="${sdk.id}.cmp"]`);
    await expectShownNumber(cell.locator('[data-part="diff"]'), num(other, 'score') - num(sample, 'score'));
    await expectShownNumber(cell.locator('[data-part="reference"]'), num(sample, 'score'));
  }
  // At 1280 px every mode's table fits: right edge inside the viewport.
  await page.setViewportSize({ width: 1280, height: 900 });
  for (const mode of modes) {
    const box = (await page.getByRole('table', { name: new RegExp(`^JMH ${mode} `) }).boundingBox())!;
    expect(box.x + box.width, `right edge of the ${mode} table`).toBeLessThanOrEqual(1280);
  }
  await shot(page, '07-jmh');
  await manualShot(page, 'run-jmh');
});

test('a project without runs says how to upload one', async ({ page }) => {
  const token = process.env.BENCHTRAIL_E2E_ADMIN_TOKEN!;
  const slug = `e2e-empty-${Date.now().toString(36)}`;
  await ok(api(token).POST('/api/v1/projects', { body: { slug, description: '', is_public: true } }));
  await page.goto(`/p/${slug}`);
  await expect(page.getByText('No runs yet.')).toBeVisible();
  await expect(page.getByText(new RegExp(`benchtrail upload .*--project ${slug}`))).toBeVisible();
  await page.goto('/r/no-such-run');
  await expect(page.getByRole('alert')).toContainText("Could not load run 'no-such-run'");
  await shot(page, '08-empty-project');
});
