import { expect, test } from '@playwright/test';
import { api, ok } from './support/api';
import { adminToken, setToken, shot } from './support/page';

test('a private project is invisible without a token and appears with one', async ({ page }) => {
  const slug = `e2e-private-${Date.now().toString(36)}`;
  await ok(api(adminToken()).POST('/api/v1/projects', { body: { slug, name: 'Private e2e project', description: '', is_public: false } }));
  const viewer = await ok(
    api(adminToken()).POST('/api/v1/projects/{slug}/tokens', { params: { path: { slug } }, body: { name: 'e2e viewer', role: 'viewer' } }),
  );

  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'Projects' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Private e2e project' })).toHaveCount(0);
  await page.goto(`/p/${slug}`);
  await expect(page.getByRole('alert')).toBeVisible();

  await setToken(page, viewer.token);
  await page.goto('/');
  await expect(page.getByRole('link', { name: 'Private e2e project' })).toBeVisible();
  await page.goto(`/p/${slug}`);
  await expect(page.getByText('No runs yet.')).toBeVisible();
  await shot(page, '34-private-project-with-token');
});
