import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Locator, Page } from '@playwright/test';
import { REPO, SCREENSHOTS } from './api';

/** The manual's screenshots (committed): every run of these tests draws them again from its demo data. */
export const MANUAL_IMAGES = resolve(REPO, 'docs/images');

mkdirSync(SCREENSHOTS, { recursive: true });
mkdirSync(MANUAL_IMAGES, { recursive: true });

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * An image of the manual (docs/images/<name>.png): the viewport, or one region of the page. A region is cut from
 * the image of the whole page, never scrolled to: scrolled, the page's sticky controls would cover its top.
 */
export async function manualShot(target: Page | Locator, name: string): Promise<void> {
  const path = resolve(MANUAL_IMAGES, `${name}.png`);
  if ('goto' in target) {
    await target.screenshot({ path });
    return;
  }
  const page = target.page();
  await page.evaluate(() => window.scrollTo(0, 0));
  const box = await target.boundingBox();
  if (box === null) throw new Error(`${name}: the region is not on the page`);
  await page.screenshot({ path, fullPage: true, clip: box });
}

/** Sets the write token through the header control, as a user would. */
export async function setToken(page: Page, token: string): Promise<void> {
  await page.getByText(/^API token:/).click();
  await page.getByRole('form', { name: 'API token' }).getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Save token' }).click();
  await page.getByText('API token: set').waitFor();
}

export function adminToken(): string {
  const token = process.env.BENCHTRAIL_E2E_ADMIN_TOKEN;
  if (!token) throw new Error('BENCHTRAIL_E2E_ADMIN_TOKEN is not set');
  return token;
}
