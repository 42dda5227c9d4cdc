import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, test } from '@playwright/test';
import { api, fixture, getRun, loadState, ok, upload, waitForAnalysis, waitForRuns } from './support/api';
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

test('a run measured again from its stored files says so, with the same numbers', async ({ page }) => {
  // A run of its own: the other specs read theirs as uploaded.
  const file = 'akhastaf_webserver_hey_5b486fa.log';
  const { run: slug } = await upload(state.heyProject, adminToken(), { tool: 'hey', agent_version: 'reingest-e2e' }, [
    { name: file, content: fixture('hey-text', file), spec: { variant: 'base', format: 'hey-text', scenario: 'static', load: { kind: 'concurrency', value: 100 } } },
  ]);
  await waitForRuns([slug]);
  await waitForAnalysis([slug]);
  const before = await getRun(slug);
  expect(before.remeasured_at).toBeNull();
  // `benchtrail admin` on the stack's database and raw files (stack.py puts them in the environment). Run
  // without blocking the event loop: a blocked loop misses the API closing an idle keep-alive connection, and
  // the next request on that socket fails with "other side closed".
  const { stdout: out } = await promisify(execFile)('benchtrail', ['admin', 'reingest', '--json', '--', slug], { encoding: 'utf8' });
  expect(JSON.parse(out)).toEqual([
    { run: slug, ok: true, cells_before: before.cells.length, cells: before.cells.length, is_valid: before.is_valid },
  ]);
  await waitForAnalysis([slug]);
  const after = await getRun(slug);
  expect(after.remeasured_at).not.toBeNull();
  const numbers = (r: typeof before) => r.cells.map(({ id: _id, trail_id: _t, variant_id: _v, scenario_id: _s, load_id: _l, ...rest }) => rest);
  expect(numbers(after)).toEqual(numbers(before));

  await page.goto(`/r/${slug}`);
  const measuredAgain = page.getByRole('definition').filter({ hasText: 'from its stored files' });
  await expect(measuredAgain).toBeVisible();
  await expect(page.getByRole('term').filter({ hasText: 'Measured again' })).toBeVisible();
});
