/**
 * CPU profiles end to end: a plan that profiles the Go demo target without and with its tracer (net/http/pprof)
 * runs on the real runner; the run page draws both variants' flame graphs and the differential one, and the
 * table of packages adding CPU names the tracer's code (agent code) among the top rows. A run without profiles
 * shows no profile section. Profiling every other repetition, the run also measures the profiler's own cost.
 */
import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { api, apiJson, getRun, loadState, ok, REPO, upload } from './support/api';
import { adminToken, shot } from './support/page';
import { startDemoTarget } from './support/target';

const state = loadState();

test('a profiled run draws flame graphs and names the agent code that adds CPU', async ({ page }) => {
  test.setTimeout(240_000);
  const token = adminToken();
  const sink = await startDemoTarget();
  const noAgent = await startDemoTarget(['-pprof']);
  const agent = await startDemoTarget(['-pprof', '-trace', sink.url]);
  try {
    const project = `e2e-profiles-${Date.now().toString(36)}`;
    await ok(api(token).POST('/api/v1/projects', { body: { slug: project, name: 'Profiles', description: 'pprof', is_public: true } }));
    // Every other repetition unprofiled: the run measures the profiler's own cost too.
    const profile = { runtime: 'go', agent_packages: ['(*tracer)'], repetitions: 'odd' };
    const plan = {
      version: 1, name: 'go-profile', tool: 'hey', pool: 'local',
      variants: [
        { name: 'no-agent', role: 'reference', target: noAgent.url, resources: { source: 'process' }, profile },
        { name: 'agent', target: agent.url, resources: { source: 'process' }, profile },
      ],
      scenarios: [{ name: 'echo', path: '/echo?q=1' }],
      loads: [{ concurrency: 4, duration_s: 2 }],
      warmup_s: 1, repetitions: 4, order: 'interleaved',
    };
    await apiJson(`/api/v1/projects/${project}/plans`, { method: 'POST', body: JSON.stringify(plan), headers: { 'Content-Type': 'application/json' } }, token);
    const started = await apiJson<{ slug: string }>(`/api/v1/projects/${project}/plans/go-profile/runs`, { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } }, token);
    await expect.poll(async () => (await getRun(started.slug)).status, { timeout: 180_000, intervals: [1000] }).toBe('completed');

    await page.goto(`/r/${started.slug}`);
    const section = page.getByRole('region', { name: /Where the CPU goes/ });
    await expect(section.getByRole('heading', { name: /^Where the CPU goes: profiles at 4 concurrency/ })).toBeVisible({ timeout: 30_000 });
    for (const title of ['Flame graph: no-agent', 'Flame graph: agent', 'Differential flame graph: agent − no-agent']) {
      const figure = section.getByRole('figure', { name: new RegExp(`^${title}`) });
      await expect(figure.locator('.js-plotly-plot .main-svg').first()).toBeVisible({ timeout: 30_000 });
      await expect(figure.getByRole('table')).toBeVisible();
    }
    const packages = section.getByRole('table', { name: /^Packages adding CPU/ });
    const top = packages.getByRole('row').filter({ hasText: '(*tracer)' });
    await expect(top).toHaveCount(1);
    await expect(top).toContainText('agent');
    const rows = await packages.getByRole('row').allInnerTexts();
    expect(rows.slice(1, 6).some((r) => r.includes('(*tracer)'))).toBe(true);
    await expect(section.getByRole('note', { name: 'Profile against sampled CPU' })).toContainText('Sampled process CPU says');
    await expect(section.getByRole('list', { name: "The profiler's own cost" })).toContainText(
      'throughput of profiled against unprofiled repetitions');
    const profiles = await apiJson<{ items: { repetition: number }[] }>(`/api/v1/runs/${started.slug}/profiles`);
    expect(profiles.items.map((p) => p.repetition).sort()).toEqual([1, 1, 3, 3]);
    await shot(page, '60-run-profiles');

    // Compare: a later run of the agent (its Go profiles uploaded, as a CI job would) against this one.
    const pprof = readFileSync(resolve(REPO, 'tests/fixtures/profiles/go-demo-traced.pb.gz'));
    const load = { kind: 'concurrency', value: 4, duration_s: 2 };
    const later = await upload(project, token, { agent_version: '2.0' }, [1, 2].map((repetition) => ({
      name: `agent-${repetition}.pb.gz`,
      content: pprof,
      spec: { variant: 'agent', format: 'pprof', load, profile: { runtime: 'go', repetition, step: repetition, requests: 20_000, agent_packages: ['(*tracer)'] } },
    })));
    await expect.poll(async () => (await getRun(later.run)).status, { timeout: 60_000 }).toBe('completed');
    await page.goto(`/compare?a=${started.slug}&b=${later.run}`);
    const across = page.getByRole('region', { name: /^Where the CPU changed/ });
    await expect(across.getByRole('heading', { name: /^Where the CPU changed/ })).toBeVisible({ timeout: 30_000 });
    await expect(across).toContainText(`run ${later.run} against run ${started.slug}`);
    await expect(across.getByRole('list', { name: 'Frames that grew' }).getByRole('listitem')).not.toHaveCount(0);
    await shot(page, '61-compare-profiles');
  } finally {
    await Promise.all([sink.stop(), noAgent.stop(), agent.stop()]);
  }
});

test('a run without profiles shows no profile section', async ({ page }) => {
  await page.goto(`/r/${state.heyRun}`);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await expect(page.locator('table').first()).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole('region', { name: /Where the CPU goes/ })).toHaveCount(0);
});
