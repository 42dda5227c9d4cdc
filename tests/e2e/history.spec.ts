import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test } from '@playwright/test';
import { api, getRun, loadState, ok, REPO, type Schemas, XRAY_VERSIONS } from './support/api';
import { expectShownNumber } from './support/numbers';
import { adminToken, manualShot, setToken, shot } from './support/page';

const state = loadState();
const SCENARIO = 'AwsSdkBenchmark.awsV1Request';

/** The JMH score as printed in the raw result file, read here without the server's parser. */
function rawScore(version: string, variant: string, benchmark: string, mode: string): number {
  const text = readFileSync(resolve(REPO, `examples/data/aws-xray-java-agent/aws-xray-java-agent_${version}_${variant}.txt`), 'utf8');
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols[0] === benchmark && cols[1] === mode) return Number(cols[3]);
  }
  throw new Error(`no ${benchmark} ${mode} in ${version} ${variant}`);
}

test('X-Ray history spans the six agent versions; a point opens its run; overhead view', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const trails = (await ok(api().GET('/api/v1/projects/{slug}/trails', { params: { path: { slug: state.jmhProject } } }))).items;
  const trail = trails.find((t) => t.scenario === SCENARIO && t.variant === 'auto-instrumentation' && t.mode === 'thrpt')!;
  const detail = await ok(api().GET('/api/v1/trails/{trail_id}', { params: { path: { trail_id: trail.id }, query: { metric: 'score' } } }));
  expect(detail.points.map((p) => p.agent_version)).toEqual([...XRAY_VERSIONS]);

  await page.goto(`/p/${state.jmhProject}`);
  await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'History' }).click();
  await expect(page).toHaveURL(new RegExp(`/p/${state.jmhProject}/history`));
  await page.getByRole('combobox', { name: 'Scenario' }).selectOption(SCENARIO);
  await page.getByRole('combobox', { name: 'Variant' }).selectOption('auto-instrumentation');
  await page.getByRole('combobox', { name: 'Mode' }).selectOption('thrpt');
  await expect(page).toHaveURL(/mode=thrpt/);

  const figure = page.getByRole('figure').first();
  const table = figure.getByRole('table');
  await expect(table.getByRole('row')).toHaveCount(1 + XRAY_VERSIONS.length);
  // Semantic version order, as the API returns it, with each score as printed by JMH.
  for (const [i, version] of XRAY_VERSIONS.entries()) {
    const row = table.getByRole('row').nth(i + 1);
    await expect(row.getByRole('rowheader').first()).toHaveText(version);
    await expectShownNumber(row.locator('td[data-col="value"]'), detail.points[i].value);
    expect(detail.points[i].value).toBeCloseTo(rawScore(version, 'auto-instrumentation', SCENARIO, 'thrpt'), 6);
  }
  const points = figure.locator('.scatterlayer .trace').first().locator('.points path');
  await expect(points).toHaveCount(XRAY_VERSIONS.length);
  await shot(page, '10-history-xray');
  await manualShot(page, 'history');

  // A permalink reproduces the view; then a click on the 2.9.x point opens that run.
  const url = page.url();
  await page.goto(url);
  await expect(page.getByRole('combobox', { name: 'Mode' })).toHaveValue('thrpt');
  const target = page.getByRole('figure').first().locator('.scatterlayer .trace').first().locator('.points path').nth(2);
  const box = await target.boundingBox();
  if (!box) throw new Error('point not drawn');
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await expect(page).toHaveURL(new RegExp(`/r/${state.jmhRuns['2.9.x']}$`));
  await expect(page.getByRole('heading', { level: 1 })).toContainText(`Run ${state.jmhRuns['2.9.x']}`);

  // Overhead of auto-instrumentation against no-instrumentation, per version.
  await page.goBack();
  await page.getByRole('radio', { name: 'Overhead vs reference' }).check();
  await expect(page).toHaveURL(/kind=overhead/);
  await expect(page.getByRole('radio', { name: 'Overhead vs reference' })).toBeChecked();
  const overhead = await ok(api().GET('/api/v1/trails/{trail_id}/overhead', { params: { path: { trail_id: trail.id }, query: { metric: 'score' } } }));
  expect(overhead.reference_variant).toBe('no-instrumentation');
  const oTable = page.getByRole('figure').first().getByRole('table');
  await expect(oTable.getByRole('row')).toHaveCount(1 + XRAY_VERSIONS.length);
  for (const [i, version] of XRAY_VERSIONS.entries()) {
    const row = oTable.getByRole('row').nth(i + 1);
    await expect(row.getByRole('rowheader').first()).toHaveText(version);
    await expectShownNumber(row.locator('td[data-col="value"]'), overhead.points[i].value_pct);
    // Independently: 100 · (auto − none) / none from the raw files (the API's CI may differ, the level must not).
    const auto = rawScore(version, 'auto-instrumentation', SCENARIO, 'thrpt');
    const none = rawScore(version, 'no-instrumentation', SCENARIO, 'thrpt');
    expect(overhead.points[i].value_pct).toBeCloseTo((100 * (auto - none)) / none, 1);
  }
  await shot(page, '11-history-xray-overhead');
  await manualShot(page, 'history-overhead');
  expect(errors).toEqual([]);
});

test('history across versions with load levels as small multiples, change points and alerts marked', async ({ page }) => {
  await page.goto(`/p/${state.alertProject}/history?scenario=*&variant=agent`);
  const figures = page.getByRole('figure');
  await expect(figures).toHaveCount(3);
  await expect(page.getByRole('region', { name: 'History 50 threads' })).toBeVisible();
  const trails = (await ok(api().GET('/api/v1/projects/{slug}/trails', { params: { path: { slug: state.alertProject }, query: { scenario: '*', variant: 'agent' } } }))).items;
  const t50 = trails.find((t) => t.load_key === 'threads:50')!;
  const detail = await ok(
    api().GET('/api/v1/trails/{trail_id}', { params: { path: { trail_id: t50.id }, query: { metric: 'latency_p75' } } }),
  );
  expect(detail.points).toHaveLength(8);
  const region = page.getByRole('region', { name: 'History 50 threads' });
  const table = region.getByRole('table');
  for (const [i, p] of detail.points.entries()) {
    const row = table.getByRole('row').nth(i + 1);
    await expect(row.getByRole('rowheader').first()).toHaveText(`1.${i}.0`);
    await expectShownNumber(row.locator('td[data-col="value"]'), p.value);
  }
  // The step at 1.4.0 is a change point with an alert, on the chart and in the table.
  expect(detail.change_points.map((c) => c.run)).toContain(state.alertRuns[4]);
  const stepRow = table.getByRole('row').nth(5);
  await expect(stepRow.locator('td[data-col="change"]')).toContainText('regression');
  for (const a of detail.alerts.filter((x) => x.run === state.alertRuns[4])) {
    await expect(stepRow.locator('td[data-col="alerts"]')).toContainText(`#${a.id}`);
  }
  await expect(region.locator('.scatterlayer .trace')).toHaveCount(3);
  // The annotation is a titled vertical line at its agent version (index 6: 1.6.0).
  await expect(region.locator('.annotation-text', { hasText: 'JDK 21 on the load host' })).toBeVisible();
  await expect(region.locator('.shapelayer path')).toHaveCount(2); // the annotation and the change point
  // Versions are placed at 0, 1, 2...: no "x = 0" line runs up the first version as if it were a marker.
  await expect(region.locator('path.xzl')).toHaveCount(0);
  await shot(page, '12-history-small-multiples');

  // The same trail by commit: same numbers, rows labelled by commit.
  const runs = await Promise.all(detail.points.map((p) => getRun(p.run)));
  await page.getByRole('radio', { name: 'Commit' }).check();
  await expect(page).toHaveURL(/x=commit/);
  for (const [i, p] of detail.points.entries()) {
    const row = table.getByRole('row').nth(i + 1);
    await expect(row.getByRole('rowheader').first()).toHaveText(runs[i].commit!.slice(0, 10));
    await expectShownNumber(row.locator('td[data-col="value"]'), p.value);
  }
});

test('project overview shows each key overhead as a small trend, with the same numbers as the API', async ({ page }) => {
  await page.goto(`/p/${state.alertProject}`);
  const section = page.getByRole('region', { name: 'Overhead trend' });
  const table = section.getByRole('table');
  await expect(table.getByRole('row')).toHaveCount(1 + 8);
  const trails = (await ok(api().GET('/api/v1/projects/{slug}/trails', { params: { path: { slug: state.alertProject }, query: { scenario: '*', variant: 'agent' } } }))).items;
  const headers = await table.getByRole('columnheader').allInnerTexts();
  for (const t of trails) {
    const label = t.load_key.replace('threads:', '') + ' threads';
    const col = headers.findIndex((h) => h.includes(label));
    expect(col, `a column for ${label} in ${headers.join(' | ')}`).toBeGreaterThan(0);
    const overhead = await ok(api().GET('/api/v1/trails/{trail_id}/overhead', { params: { path: { trail_id: t.id }, query: { metric: 'latency_p75' } } }));
    expect(overhead.points).toHaveLength(8);
    for (const [i, p] of overhead.points.entries()) {
      const row = table.getByRole('row').nth(i + 1);
      // Every seeded run has an agent version (1.0.0 … 1.7.0).
      await expect(row.getByRole('rowheader')).toHaveText(`1.${i}.0`);
      expect(p.agent_version).toBe(`1.${i}.0`);
      await expectShownNumber(row.getByRole('cell').nth(col - 1), p.value_pct);
    }
  }
  await expect(section.locator('.scatterlayer .trace')).toHaveCount(trails.length);
  await shot(page, '13-project-overview-trend');
});

test('the JMH overhead trend reads as its chart: legend under the axis title, each mode toned its own way', async ({ page }) => {
  await page.goto(`/p/${state.jmhProject}`);
  const section = page.getByRole('region', { name: 'Overhead trend' });
  const table = section.getByRole('table');
  await expect(table.getByRole('row')).toHaveCount(1 + XRAY_VERSIONS.length);
  // Several long series names wrap into rows of legend: all of it stays under the x-axis title.
  const title = await section.locator('.xtitle').boundingBox();
  const legend = await section.locator('.legend').boundingBox();
  if (!title || !legend) throw new Error('axis title or legend not drawn');
  expect(legend.y).toBeGreaterThanOrEqual(title.y + title.height);
  // More time per operation (sample) is worse, and so is less throughput (thrpt): the API says which way each goes.
  const trails = (await ok(api().GET('/api/v1/projects/{slug}/trails', { params: { path: { slug: state.jmhProject } } }))).items;
  const headers = await table.getByRole('columnheader').evaluateAll((ths) => ths.map((th) => th.getAttribute('aria-label') ?? ''));
  const toned = new Set<string>();
  for (const [col, header] of headers.entries()) {
    if (col === 0) continue;
    const trail = trails.find((t) => header.includes(t.variant) && header.includes(t.scenario) && header.endsWith(t.mode))!;
    const overhead = await ok(api().GET('/api/v1/trails/{trail_id}/overhead', { params: { path: { trail_id: trail.id }, query: { metric: 'score' } } }));
    const last = overhead.points[overhead.points.length - 1];
    const worse = overhead.direction === 'lower' ? last.value_pct > 0 : last.value_pct < 0;
    const cell = table.getByRole('row').nth(XRAY_VERSIONS.length).getByRole('cell').nth(col - 1);
    await expectShownNumber(cell, last.value_pct);
    await expect(cell).toHaveClass(worse ? 'worse' : 'better');
    toned.add(overhead.direction);
  }
  expect([...toned].sort()).toEqual(['higher', 'lower']);   // both kinds of mode are on the page
});

test('annotations are added, edited and deleted on History with an uploader token', async ({ page }) => {
  const list = async (): Promise<Schemas['AnnotationOut'][]> =>
    (await ok(api().GET('/api/v1/projects/{slug}/annotations', { params: { path: { slug: state.alertProject } } }))).items;
  await page.goto(`/p/${state.alertProject}/history?scenario=*&variant=agent&loads=threads:50`);
  const panel = page.getByRole('region', { name: 'Annotations' });
  await expect(panel.getByRole('note')).toContainText('uploader');
  await setToken(page, adminToken());

  const form = panel.getByRole('form', { name: 'New annotation' });
  await form.getByLabel('Kind').selectOption('infra');
  await form.getByLabel('Title').fill('Load host moved to c6i');
  await form.getByLabel('Agent version').fill('1.2.0');
  await form.getByRole('button', { name: 'Add annotation' }).click();
  const item = panel.getByRole('listitem', { name: 'Annotation Load host moved to c6i' });
  await expect(item).toContainText('at version 1.2.0');
  let created = (await list()).find((a) => a.title === 'Load host moved to c6i');
  expect(created).toMatchObject({ kind: 'infra', agent_version: '1.2.0' });
  // Drawn on the chart at its version.
  const region = page.getByRole('region', { name: 'History 50 threads' });
  await expect(region.locator('.annotation-text', { hasText: 'Load host moved to c6i' })).toBeVisible();
  await shot(page, '14-history-annotations');

  await item.getByRole('button', { name: 'Edit annotation Load host moved to c6i' }).click();
  const edit = panel.getByRole('form', { name: 'Edit annotation Load host moved to c6i' });
  await edit.getByLabel('Title').fill('Load host moved to c6i.xlarge');
  await edit.getByRole('button', { name: 'Save' }).click();
  await expect(panel.getByRole('listitem', { name: 'Annotation Load host moved to c6i.xlarge' })).toBeVisible();
  created = (await list()).find((a) => a.id === created!.id);
  expect(created?.title).toBe('Load host moved to c6i.xlarge');

  page.once('dialog', (d) => void d.accept());
  await panel.getByRole('button', { name: 'Delete annotation Load host moved to c6i.xlarge' }).click();
  await expect(panel.getByRole('listitem', { name: 'Annotation Load host moved to c6i.xlarge' })).toHaveCount(0);
  expect((await list()).some((a) => a.id === created!.id)).toBe(false);
});
