import { expect, test } from '@playwright/test';
import { api, loadState, ok } from './support/api';
import { expectShownNumber } from './support/numbers';
import { adminToken, manualShot, setToken, shot } from './support/page';


const state = loadState();

test('alerts list with filters in the URL; triage persists; links to the run and the trail', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const all = (await ok(api().GET('/api/v1/projects/{slug}/alerts', { params: { path: { slug: state.alertProject } } }))).items;
  expect(all.length).toBeGreaterThan(0);
  // The data has one step, at 1.4.0: every alert must start at that run and be a regression.
  expect(new Set(all.map((a) => a.run))).toEqual(new Set([state.alertRuns[4]]));
  expect(all.every((a) => a.direction === 'regression')).toBe(true);

  await page.goto(`/p/${state.alertProject}`);
  await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Alerts' }).click();
  const table = page.getByRole('table', { name: 'Alerts' });
  await expect(table.getByRole('row')).toHaveCount(1 + all.length);

  await page.getByRole('combobox', { name: 'kind' }).selectOption('overhead');
  await expect(page).toHaveURL(/kind=overhead/);
  const overheads = all.filter((a) => a.kind === 'overhead');
  await expect(table.getByRole('row')).toHaveCount(1 + overheads.length);
  await page.getByRole('combobox', { name: 'state' }).selectOption('new');
  await expect(page).toHaveURL(/state=new/);
  await expect(table.getByRole('row')).toHaveCount(1 + overheads.filter((a) => a.state === 'new').length);
  await shot(page, '20-alerts-list');
  await manualShot(page, 'alerts');

  // A filtered list is a permalink.
  await page.goto(page.url());
  await expect(page.getByRole('combobox', { name: 'kind' })).toHaveValue('overhead');
  await expect(table.getByRole('row')).toHaveCount(1 + overheads.filter((a) => a.state === 'new').length);

  const fresh = overheads.filter((a) => a.state === 'new');
  const target = fresh.find((a) => a.trail.load_key === 'threads:50' && a.trail.scenario === '*') ?? fresh[0];
  await table.getByRole('link', { name: `#${target.id}`, exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/p/${state.alertProject}/alerts/${target.id}$`));
  await expect(page.getByRole('heading', { level: 1 })).toContainText(`Alert #${target.id}`);
  await expectShownNumber(page.getByTestId('before'), target.before_value);
  await expectShownNumber(page.getByTestId('after'), target.after_value);
  // Without a token the page says so before anything is tried.
  await expect(page.getByRole('note').filter({ hasText: 'needs a token' })).toBeVisible();

  await setToken(page, adminToken());
  const triage = page.getByRole('form', { name: 'Triage' });
  await triage.getByLabel('State').selectOption('investigating');
  await triage.getByLabel('Assignee').fill('e2e-oncall');
  await triage.getByLabel('Notes').fill('Span export got slower in 1.4.0');
  await triage.getByLabel('Comment for this change').fill('looking into it');
  await triage.getByRole('button', { name: 'Save triage' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();

  const after = await ok(api().GET('/api/v1/alerts/{alert_id}', { params: { path: { alert_id: target.id } } }));
  expect(after.state).toBe('investigating');
  expect(after.assignee).toBe('e2e-oncall');
  expect(after.notes).toBe('Span export got slower in 1.4.0');
  const last = after.events[after.events.length - 1];
  expect([last.from_state, last.to_state]).toEqual(['new', 'investigating']);
  expect(last.note).toContain('looking into it');
  const events = page.getByRole('table', { name: 'State changes' });
  await expect(events.getByRole('row').last()).toContainText('investigating');
  await expect(events.getByRole('row').last()).toContainText('looking into it');
  await shot(page, '21-alert-triage');
  await manualShot(page, 'alert-triage');

  // After a reload the triage is what the server holds.
  await page.reload();
  await expect(page.getByRole('form', { name: 'Triage' }).getByLabel('State')).toHaveValue('investigating');
  await expect(page.getByRole('heading', { level: 1 })).toContainText('investigating');

  // To the trail in History: the alert's load level, drawn as overhead, with the alert in the table.
  const loadLabel = target.trail.load_key.replace('threads:', '');
  await page.getByRole('link', { name: new RegExp(`^agent · .* · ${target.trail.load_key}`) }).click();
  await expect(page).toHaveURL(/\/history\?.*kind=overhead/);
  const region = page.getByRole('region', { name: new RegExp(`History ${loadLabel} threads`) });
  await expect(region.getByRole('table')).toContainText(`#${target.id} regression (investigating)`);
  await shot(page, '22-alert-trail');

  // And to its run.
  await page.goto(`/p/${state.alertProject}/alerts/${target.id}`);
  await page.getByRole('link', { name: `run ${target.run}` }).click();
  await expect(page).toHaveURL(new RegExp(`/r/${target.run}$`));
  expect(errors).toEqual([]);
});
