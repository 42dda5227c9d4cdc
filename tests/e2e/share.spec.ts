import { expect, test } from '@playwright/test';
import { api, baseUrl, loadState, ok } from './support/api';
import { adminToken, setToken, shot } from './support/page';

const state = loadState();

test('a run view is frozen under its own permalink, with Markdown tables and server-drawn charts', async ({ page, request }) => {
  const slug = state.jtlRuns[0];
  await page.goto(`/r/${slug}?p=p75`);
  await setToken(page, adminToken());
  await page.getByRole('button', { name: 'Freeze this view' }).click();
  const link = page.getByRole('status').getByRole('link', { name: /\/s\// });
  await expect(link).toBeVisible();
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
