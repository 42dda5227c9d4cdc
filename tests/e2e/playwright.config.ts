import { defineConfig } from '@playwright/test';

// Runs against a real stack: BENCHTRAIL_E2E_URL serves the API and the built dashboard.
const baseURL = process.env.BENCHTRAIL_E2E_URL;
if (!baseURL) {
  throw new Error('BENCHTRAIL_E2E_URL is not set: start the stack (infra/scripts/teststack.py) and pass its URL');
}

export default defineConfig({
  testDir: '.',
  testMatch: /.*\.spec\.ts$/,
  globalSetup: './global-setup.ts',
  workers: 1,
  retries: 0,
  timeout: 120_000,   // make test runs the suite beside other test processes on two cores
  expect: { timeout: 15_000 },
  reporter: [['list']],
  outputDir: '../../artifacts/e2e-results',
  use: {
    baseURL,
    viewport: { width: 1400, height: 900 },
    // A failed test keeps its trace (DOM snapshots, network, console) and a screenshot of its last state. The trace's
    // screencast is off: its frames were 6 % of the suite's CPU (261 CPU-seconds with it, 246 without, alone).
    trace: { mode: 'retain-on-failure', screenshots: false },
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.BENCHTRAIL_CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
        '--disable-dev-shm-usage',
      ],
    },
  },
});
