import { expect, test } from '@playwright/test';
import { api, apiJson, getRun, loadState, ok, type Schemas } from './support/api';
import { adminToken, manualShot, setToken, shot } from './support/page';

const state = loadState();

test('plans: view the body, start a run, watch it live to completed', async ({ page }) => {
  test.setTimeout(150_000);
  const plans = (await ok(api().GET('/api/v1/projects/{slug}/plans', { params: { path: { slug: state.planProject } } }))).items;
  const plan = plans.find((p) => p.name === state.plan)!;

  await page.goto(`/p/${state.planProject}/plans`);
  const table = page.getByRole('table', { name: 'Plans' });
  await expect(table.getByRole('row', { name: new RegExp(`^${state.plan}`) })).toContainText('local');
  await table.getByRole('link', { name: state.plan, exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`plan=${state.plan}`));
  const body = page.getByLabel('Plan body');
  await expect(body).toContainText(`target: ${state.targetUrl}`);
  await page.getByRole('radio', { name: 'JSON' }).check();
  await expect(page).toHaveURL(/format=json/);
  await expect(page.getByRole('radio', { name: 'JSON' })).toBeChecked();
  expect(JSON.parse(await body.innerText())).toEqual(plan.body);

  await expect(page.getByRole('note').filter({ hasText: 'Starting a run needs a token' })).toBeVisible();
  await setToken(page, adminToken());
  const form = page.getByRole('form', { name: 'Start run' });
  await form.getByLabel('Agent version').fill('0.9.0-e2e');
  await form.getByLabel('Branch').fill('e2e');
  await form.getByRole('button', { name: /^Start run/ }).click();
  await expect(page).toHaveURL(/\/r\/[A-Za-z0-9_-]+$/);
  const slug = page.url().split('/r/')[1];
  const progress = page.getByRole('region', { name: 'Run progress' });
  await expect(progress).toBeVisible();
  await shot(page, '30-run-live');

  await expect(page.getByRole('heading', { level: 1 })).toContainText('completed', { timeout: 120_000 });
  const run = await getRun(slug);
  expect(run.status).toBe('completed');
  expect(run.agent_version).toBe('0.9.0-e2e');
  // The plan asked for 200 requests in each of its 3 repetitions (the default); the cell counted every one.
  const okScenario = run.scenarios.find((s) => s.name === 'ok')!;
  expect(run.cells.find((c) => c.scenario_id === okScenario.id)?.count).toBe(3 * 200);
  await expect(page.getByTestId('progress-percent')).toHaveText('100%');
  // The runner's per-step figures are live ones: once the run ended they would be its last (ingest) step's,
  // "0 requests"; the report keeps the last step and the log, the counts are the cells'.
  await expect(progress.getByText('Last step')).toBeVisible();
  await expect(progress.getByText(/(^|: )ingested$/)).toBeVisible();
  await expect(page.getByTestId('progress-requests')).toHaveCount(0);
  await expect(page.getByTestId('progress-rate')).toHaveCount(0);
  await shot(page, '31-run-completed');
  await manualShot(page, 'plan-run');
});

test('a running run is cancelled from its page', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto(`/p/${state.planProject}/plans?plan=hey-long`);
  await expect(page.getByRole('heading', { name: /^Plan hey-long/ })).toBeVisible();
  await setToken(page, adminToken());
  await page.getByRole('form', { name: 'Start run' }).getByRole('button', { name: /^Start run/ }).click();
  await expect(page).toHaveURL(/\/r\/[A-Za-z0-9_-]+$/);
  const slug = page.url().split('/r/')[1];
  const progress = page.getByRole('region', { name: 'Run progress' });
  // Wait until the runner reports load, so the cancel reaches a running tool, not a queued run.
  await expect(progress.getByRole('heading')).toContainText('Running', { timeout: 60_000 });
  await expect(page.getByTestId('progress-requests')).not.toHaveText('—', { timeout: 30_000 });
  // Server-sent events carry the progress (public project: no header needed).
  await expect(progress.getByRole('status')).toHaveText(/^Live:/);
  await shot(page, '33-run-running');
  await progress.getByRole('button', { name: 'Cancel run' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toContainText('cancelled', { timeout: 60_000 });
  const run = await getRun(slug);
  expect(run.status).toBe('cancelled');
  expect(run.cells).toHaveLength(0);
});

test('without server-sent events the run page falls back to polling and still follows the run', async ({ page }) => {
  test.setTimeout(120_000);
  let refused = 0;
  await page.route('**/api/v1/runs/*/events', (route) => {
    refused += 1;
    return route.abort('connectionrefused');
  });
  await page.goto(`/p/${state.planProject}/plans?plan=${state.plan}`);
  await setToken(page, adminToken());
  await page.getByRole('form', { name: 'Start run' }).getByRole('button', { name: /^Start run/ }).click();
  await expect(page).toHaveURL(/\/r\/[A-Za-z0-9_-]+$/);
  await expect(page.getByRole('heading', { level: 1 })).toContainText('completed', { timeout: 90_000 });
  expect(refused).toBeGreaterThan(0);
  const slug = page.url().split('/r/')[1];
  const run = await getRun(slug);
  expect(run.status).toBe('completed');
  await expect(page.getByTestId('progress-percent')).toHaveText('100%');
});

test('schedules: create, disable, edit cron; read back from the API', async ({ page }) => {
  await page.goto(`/p/${state.planProject}/plans`);
  await setToken(page, adminToken());
  const before = (await ok(api().GET('/api/v1/projects/{slug}/schedules', { params: { path: { slug: state.planProject } } }))).items;
  const create = page.getByRole('form', { name: 'New schedule' });
  await create.getByLabel('Plan').selectOption(state.plan);
  await create.getByLabel(/^Cron/).fill('15 3 * * *');
  await create.getByRole('button', { name: 'Add schedule' }).click();
  const table = page.getByRole('table', { name: 'Schedules' });
  await expect(table.getByRole('row')).toHaveCount(2 + before.length);
  const added = async (): Promise<Schemas['ScheduleOut']> => {
    const items = (await ok(api().GET('/api/v1/projects/{slug}/schedules', { params: { path: { slug: state.planProject } } }))).items;
    return items.filter((s) => !before.some((b) => b.id === s.id))[0];
  };
  const schedule = await added();
  expect([schedule.plan, schedule.cron, schedule.enabled]).toEqual([state.plan, '15 3 * * *', true]);
  const row = table.getByRole('row').filter({ has: page.getByRole('form', { name: `Cron of schedule ${schedule.id}`, exact: true }) });

  await row.getByRole('button', { name: 'Disable' }).click();
  await expect(row.getByRole('button', { name: 'Enable' })).toBeVisible();
  await row.getByRole('textbox', { name: 'Cron', exact: true }).fill('30 4 * * 1');
  await row.getByRole('button', { name: 'Save cron' }).click();
  // The button is also disabled while the request is in flight: wait for the server's state.
  await expect
    .poll(async () => {
      const s = await added();
      return [s.cron, s.enabled];
    })
    .toEqual(['30 4 * * 1', false]);

  // A bad cron is refused with the server's reason, and nothing changes.
  await row.getByRole('textbox', { name: 'Cron', exact: true }).fill('not a cron');
  await row.getByRole('button', { name: 'Save cron' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'Changing the schedule failed' })).toBeVisible();
  expect((await added()).cron).toBe('30 4 * * 1');
  await shot(page, '32-schedules');
});

test('a plan saved as YAML is shown as written, comments and key order kept', async ({ page }) => {
  const yamlText = [
    '# Smoke test of the local target: kept exactly as written.',
    'version: 1',
    'name: hey-yaml',
    'tool: hey',
    'pool: local',
    'loads:',
    '  - concurrency: 1',
    '    requests: 20   # a handful is enough',
    'scenarios:',
    '  - name: ok',
    '    path: /ok',
    'variants:',
    '  - name: target',
    '    role: reference',
    `    target: ${state.targetUrl}`,
    '',
  ].join('\n');
  // A YAML body: sent as written, so the typed client (JSON bodies) is not used here.
  await apiJson<Schemas['PlanOut']>(`/api/v1/projects/${state.planProject}/plans`, {
    method: 'POST', headers: { 'Content-Type': 'application/yaml' }, body: yamlText,
  }, adminToken());
  await page.goto(`/p/${state.planProject}/plans?plan=hey-yaml`);
  const body = page.getByLabel('Plan body');
  await expect(body).toContainText('# a handful is enough');
  expect((await body.innerText()).trimEnd()).toBe(yamlText.trimEnd());
  await expect(page.getByText('The YAML as it was saved')).toBeVisible();
  await shot(page, '32-plan-yaml');
});
