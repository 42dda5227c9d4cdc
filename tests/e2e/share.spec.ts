import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { api, apiJson, baseUrl, loadState, ok } from './support/api';
import { adminToken, setToken, shot } from './support/page';

const state = loadState();

test('a run view is frozen under its own permalink, with Markdown tables and server-drawn charts', async ({ page, request }) => {
  // Freezing computes the run's overheads of six metrics (bootstrap): over a minute on a loaded 2-core machine.
  test.setTimeout(180_000);
  const slug = state.jtlRuns[0];
  await page.goto(`/r/${slug}?p=p75`);
  await setToken(page, adminToken());
  await page.getByRole('button', { name: 'Freeze this view' }).click();
  const link = page.getByRole('status').getByRole('link', { name: /\/s\// });
  await expect(link).toBeVisible({ timeout: 120_000 });
  await link.click();
  await expect(page).toHaveURL(/\/s\/[\w-]+$/);
  const snapshotSlug = page.url().split('/s/')[1];

  const frozen = await ok(api().GET('/api/v1/snapshots/{slug}', { params: { path: { slug: snapshotSlug } } }));
  expect(frozen.view).toEqual({ path: `/r/${slug}`, query: 'p=p75' });
  expect(frozen.data.run).toMatchObject({ slug });
  await expect(page.getByLabel("The snapshot's tables as Markdown")).toHaveText(frozen.markdown.trim(), { useInnerText: true });
  await expect(page.getByRole('link', { name: 'open the live view' })).toHaveAttribute('href', `/r/${slug}?p=p75`);

  // The images load from their URLs alone, without the dashboard: what a README embeds.
  const image = page.getByRole('img', { name: /^latency_p75 / });
  await expect(image).toBeVisible();
  const svg = await request.get(`${baseUrl()}/api/v1/snapshots/${snapshotSlug}/charts/latency_p75.svg`);
  expect(svg.status()).toBe(200);
  expect(svg.headers()['content-type']).toBe('image/svg+xml');
  expect(await svg.text()).toContain('API-URI-owner-3spans');
  await shot(page, '40-snapshot');
});

test('a compare view is frozen under its own permalink; its chart loads as an image without the dashboard', async ({ page, request }) => {
  // Several images are drawn on the server (matplotlib): seconds each on a loaded 2-core machine.
  test.setTimeout(180_000);
  const [a, b] = state.jtlRuns;
  await page.goto(`/compare?a=${a}&b=${b}&metric=latency_p75`);
  await setToken(page, adminToken());
  await expect(page.getByRole('heading', { name: new RegExp(`Compare ${a}`) })).toBeVisible();

  // The live chart's image: the SVG link answers an image on its own, and its Markdown is offered.
  const svgLink = page.getByRole('link', { name: 'SVG', exact: true });
  const href = await svgLink.getAttribute('href');
  expect(href).toContain(`/api/v1/compare/chart.svg?a=${a}&b=${b}&metric=latency_p75`);
  const live = await request.get(href!);
  expect(live.status()).toBe(200);
  expect(live.headers()['content-type']).toBe('image/svg+xml');
  await page.getByRole('button', { name: /^Copy Markdown for the image of/ }).click();
  await expect(page.getByRole('textbox', { name: /^Markdown for the image of/ })).toHaveValue(/^!\[.*\]\(http.*compare\/chart\.svg/);
  await expectNoSeriousAxe(page, 'compare');

  await page.getByRole('button', { name: 'Freeze this view' }).click();
  const link = page.getByRole('status').getByRole('link', { name: /\/s\// });
  await expect(link).toBeVisible({ timeout: 60_000 });
  await link.click();
  await expect(page).toHaveURL(/\/s\/[\w-]+$/);
  const snapshotSlug = page.url().split('/s/')[1];

  type Frozen = {
    kind: string;
    markdown: string;
    view: { path: string; query: string };
    data: { compare: { a: string; b: string; items: { result: { rel_diff: number | null } }[] } };
  };
  const frozen = await apiJson<Frozen>(`/api/v1/snapshots/${snapshotSlug}`);
  expect(frozen.kind).toBe('compare');
  expect(frozen.view).toEqual({ path: '/compare', query: `a=${a}&b=${b}&metric=latency_p75` });
  expect([frozen.data.compare.a, frozen.data.compare.b]).toEqual([a, b]);
  // The frozen numbers are the live API's numbers at the time of freezing.
  const now = await apiJson<Frozen['data']['compare']>(`/api/v1/compare?a=${a}&b=${b}&metric=latency_p75`);
  expect(frozen.data.compare.items.map((i) => i.result.rel_diff)).toEqual(now.items.map((i) => i.result.rel_diff));
  await expect(page.getByLabel("The snapshot's tables as Markdown")).toHaveText(frozen.markdown.trim(), { useInnerText: true });
  await expect(page.getByRole('link', { name: 'open the live view' })).toHaveAttribute('href', `/compare?a=${a}&b=${b}&metric=latency_p75`);

  const image = page.getByRole('img', { name: /change per cell with its 95% interval \(frozen\)$/ });
  await expect(image).toBeVisible();
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0);
  const svg = await request.get(`${baseUrl()}/api/v1/snapshots/${snapshotSlug}/chart.svg`);
  expect(svg.status()).toBe(200);
  expect(svg.headers()['content-type']).toBe('image/svg+xml');
  const first = frozen.data.compare.items.find((i) => i.result.rel_diff !== null)!;
  // Each bar is labelled with its change, three significant digits: the first frozen item's is there.
  const labels = [...(await svg.text()).matchAll(/>([+-]?[\d,]+(?:\.\d+)?)%</g)].map((m) => Number(m[1].replace(/,/g, '')));
  const pct = 100 * first.result.rel_diff!;
  const tolerance = 0.5 * 10 ** (Math.floor(Math.log10(Math.abs(pct))) - 2);
  expect(labels.length).toBe(frozen.data.compare.items.filter((i) => i.result.rel_diff !== null).length);
  expect(labels.some((v) => Math.abs(v - pct) <= tolerance + 1e-9), `${pct} in ${labels.join(', ')}`).toBe(true);
  const png = await request.get(`${baseUrl()}/api/v1/snapshots/${snapshotSlug}/chart.png`);
  expect(png.status()).toBe(200);
  expect((await png.body()).subarray(1, 4).toString()).toBe('PNG');
  await expectNoSeriousAxe(page, 'compare snapshot');
  await shot(page, '41-snapshot-compare');
});

async function expectNoSeriousAxe(page: Page, name: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const bad = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')}`);
  expect(bad, `axe on ${name}`).toEqual([]);
}
