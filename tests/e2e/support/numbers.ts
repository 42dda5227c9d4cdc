import { expect, type Locator } from '@playwright/test';

/**
 * The UI rounds by magnitude (≥100: 1 decimal, ≥1: 2 decimals, else 3 significant digits); a shown
 * number must be the API's value within half a unit of its last shown digit.
 */
export async function expectShownNumber(cell: Locator, expected: number | null): Promise<void> {
  const text = (await cell.innerText()).trim();
  if (expected === null) {
    expect(text).toBe('—');
    return;
  }
  const shown = Number(text.replace(/[+×%]/g, '').replace('−', '-'));
  expect(Number.isFinite(shown), `cell text '${text}' is a number`).toBe(true);
  const decimals = (text.replace(/[+×%]/g, '').split('.')[1] ?? '').length;
  const tolerance = 0.5 * 10 ** -decimals + 1e-9;
  expect(Math.abs(shown - expected), `shown ${text}, API ${expected}`).toBeLessThanOrEqual(tolerance);
}
