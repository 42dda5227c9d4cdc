/**
 * Every page of the dashboard, as a keyboard and screen-reader user meets it: axe-core finds no
 * serious or critical violation (WCAG 2.1 A/AA rules), and a screenshot at 1280 px is kept.
 */
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { loadState } from './support/api';
import { shot } from './support/page';

const state = loadState();

async function expectAccessible(page: Page, name: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const bad = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')}`);
  expect(bad, `axe on ${name}`).toEqual([]);
}

/** Waits until no "Loading …" placeholder and every chart is drawn. */
async function settled(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle');
  await expect(page.locator('.state.loading, .chart-loading')).toHaveCount(0, { timeout: 30_000 });
  await page.waitForFunction(() =>
    [...document.querySelectorAll('.js-plotly-plot')].every((p) => p.querySelector('.main-svg')),
  );
}

const PAGES: [string, () => string][] = [
  ['projects', () => '/'],
  ['project', () => `/p/${state.alertProject}`],
  ['run', () => `/r/${state.jtlRuns[0]}`],
  ['run-jmh', () => `/r/${state.jmhRuns['2.8.x']}`],
  ['run-matrix', () => `/r/${state.heyRun}`],
  ['compare', () => `/compare?a=${state.jtlRuns[0]}&b=${state.jtlRuns[1]}`],
  ['history', () => `/p/${state.alertProject}/history?scenario=*&variant=agent`],
  ['alerts', () => `/p/${state.alertProject}/alerts`],
  ['plans', () => `/p/${state.planProject}/plans?plan=${state.plan}`],
];

test.use({ viewport: { width: 1280, height: 900 } });

for (const [name, path] of PAGES) {
  test(`${name} page has no serious or critical accessibility violation`, async ({ page }) => {
    await page.goto(path());
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
    await settled(page);
    await expectAccessible(page, name);
    await shot(page, `a11y-${name}`);
  });
}

test('the run page is usable from the keyboard: Tab reaches the view options and a select changes the view', async ({ page }) => {
  await page.goto(`/r/${state.jtlRuns[0]}`);
  await settled(page);
  const percentile = page.getByRole('combobox', { name: 'Percentile', exact: true });
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    if (await percentile.evaluate((el) => el === document.activeElement)) break;
  }
  await expect(percentile).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await expect(page).toHaveURL(/[?&]p=p90/);
});

test('the check itself finds a serious violation when there is one', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  // An unlabelled form control (axe "label", critical) injected into a real page.
  await page.evaluate(() => document.querySelector('main')?.append(Object.assign(document.createElement('input'), { type: 'text' })));
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa']).analyze();
  expect(results.violations.map((v) => v.id)).toContain('label');
});
