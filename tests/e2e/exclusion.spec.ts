import { expect, test } from '@playwright/test';
import { api, getRun, loadState, ok, waitForAnalysis } from './support/api';
import { adminToken, setToken, shot } from './support/page';

const state = loadState();

test('a run is excluded from its trails with a reason, and put back', async ({ page }) => {
  const slug = state.heyRun;
  try {
    await page.goto(`/r/${slug}`);
    const badge = page.getByRole('heading', { level: 1 });
    await expect(badge).toContainText(/\bvalid\b/);
    await page.getByText('Exclude from history…').click();
    // Without a token the form says which role it needs before anything is tried.
    await expect(page.getByRole('note').filter({ hasText: 'needs a token' })).toBeVisible();

    await setToken(page, adminToken());
    await page.getByLabel('Reason').fill('e2e: the load generator shared its host');
    await page.getByRole('button', { name: 'Exclude', exact: true }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Excluded from its trails by' })).toContainText(
      'e2e: the load generator shared its host',
    );
    await expect(badge).toContainText('invalid');
    // The validity checks name who excluded it and why, as the API stores it.
    const run = await getRun(slug);
    expect(run.is_valid).toBe(false);
    const row = run.validity.find((v) => v.check === 'excluded');
    expect(row?.detail).toMatch(/^.+ excluded the run from its trails: e2e: the load generator shared its host$/);
    await expect(page.getByRole('listitem').filter({ hasText: String(row?.detail) })).toBeVisible();
    await shot(page, '35-run-excluded');
    await waitForAnalysis([slug]);

    await page.getByRole('button', { name: 'Put back in history' }).click();
    await expect(page.getByText('Exclude from history…')).toBeVisible();
    await expect(badge).not.toContainText('invalid');
    expect((await getRun(slug)).is_valid).toBe(true);
    await waitForAnalysis([slug]);
  } finally {
    // Later specs read this run as uploaded.
    await ok(api(adminToken()).DELETE('/api/v1/runs/{slug}/exclusion', { params: { path: { slug } } }));
    await waitForAnalysis([slug]);
  }
});
