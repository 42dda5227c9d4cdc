import { expect, test } from '@playwright/test';
import { apiJson, upload, waitForAnalysis, waitForRuns } from './support/api';

/**
 * The PTS seeds' table on the run page: a consumer and a provider per variant, uploaded as Benchtrail
 * JSON with `process` (3 repetitions each, as a runner sends them), shown as their own lead-table
 * columns "consumer CPU", "consumer RSS", "provider CPU", "provider RSS" next to the RT.
 */
test('per-process columns in the lead table', async ({ page }) => {
  const token = process.env.BENCHTRAIL_E2E_ADMIN_TOKEN!;
  const slug = `e2e-pts-${Date.now().toString(36)}`;
  await apiJson('/api/v1/projects', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ slug, name: 'PTS Go pair', is_public: true }),
  }, token);
  const load = { kind: 'rate', value: 1000, duration_s: 60 };
  // Per repetition; means: no-agent consumer 23.4 % / 40 MB, provider 15 % / 30 MB; agent 32.5 / 44, 18 / 31.
  const reps = (cpu: number[], rss: number[]) => cpu.map((c, i) => ({ load, stats: { cpu_pct: c, rss_mb: rss[i] } }));
  const variant = (name: string, rt: number, consumer: [number[], number[]], provider: [number[], number[]]) => ({
    name,
    scenarios: [
      { name: 'echo', loads: [{ load, stats: { latency_mean: rt, count: 180000 } }] },
      { name: null, loads: [
        ...reps(...consumer).map((m) => ({ ...m, process: 'consumer' })),
        ...reps(...provider).map((m) => ({ ...m, process: 'provider' })),
      ] },
    ],
  });
  const doc = {
    format: 'benchtrail', version: 1, tool: 'benchtrail-runner',
    variants: [
      variant('no-agent', 33, [[23.0, 23.4, 23.8], [39, 40, 41]], [[14, 15, 16], [30, 30, 30]]),
      variant('agent', 34, [[32.0, 32.5, 33.0], [43, 44, 45]], [[17, 18, 19], [31, 31, 31]]),
    ],
  };
  const run = await upload(slug, token, { tool: 'benchtrail', reference: 'no-agent' }, [
    { name: 'pts.benchtrail.json', content: JSON.stringify(doc), spec: { variant: 'no-agent', format: 'benchtrail-json' } },
  ]);
  // The interval below is the analysis's (the run's stored overheads), done after the ingest completes the run.
  await waitForRuns([run.run]);
  await waitForAnalysis([run.run]);
  await page.goto(`/r/${run.run}`);
  const lead = page.getByRole('region', { name: /per load level/ }).first();
  for (const name of ['consumer CPU', 'consumer RSS', 'provider CPU', 'provider RSS', 'Mean RT']) {
    await expect(lead.getByRole('columnheader', { name, exact: false }).first()).toBeVisible();
  }
  const names = ['Scenario', 'consumer CPU (%)', 'consumer RSS (MB)', 'provider CPU (%)', 'provider RSS (MB)', 'Mean RT (ms)'];
  for (const [i, name] of names.entries()) {
    await expect(lead.getByRole('columnheader').nth(i)).toHaveAccessibleName(name);
  }
  const row = lead.getByRole('row', { name: /echo/ }).first();
  // consumer CPU 23.4 / 32.5 / +9.1, provider RSS 30 / 31 / +1 (hand arithmetic on the means above)
  await expect(row).toContainText('23.4');
  await expect(row).toContainText('32.5');
  await expect(row).toContainText(/\+9\.1/);
  // Student's t over 3 + 3 repetitions: pooled variance (0.16 + 0.25) / 2 = 0.205, SE = sqrt(0.205 * 2/3)
  // = 0.3697, t(0.975, 4) = 2.776: 9.1 ± 1.026 -> [+8.07, +10.1]
  await expect(row).toContainText('[+8.07, +10.1]');
});
