import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Page } from '@playwright/test';
import { SCREENSHOTS } from './api';

mkdirSync(SCREENSHOTS, { recursive: true });

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage: true });
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
