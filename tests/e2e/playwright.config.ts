import { resolve } from 'node:path';
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
  // A failed test runs once more, and that run records its trace (below); the suite still fails: a test that passes
  // only on its retry is flaky, and flaky fails (failOnFlakyTests; tests/integration/test_dashboard_e2e.py also fails
  // on any failed attempt it reads in the output).
  retries: 1,
  failOnFlakyTests: true,
  timeout: 120_000,   // make test runs the suite beside other test processes on two cores
  expect: { timeout: 15_000 },
  reporter: [['list']],
  outputDir: '../../artifacts/e2e-results',
  use: {
    baseURL,
    viewport: { width: 1400, height: 900 },
    // A failed test's retry keeps its trace (DOM snapshots, network, console); every failed attempt keeps a screenshot
    // of its last state. Recording a trace for every test, to keep the failed ones' (retain-on-failure), cost 8 % of
    // the suite's CPU (212 CPU-seconds against 194 with none, alone); its screencast is off (6 % more when on).
    trace: { mode: 'on-first-retry', screenshots: false },
    screenshot: 'only-on-failure',
    launchOptions: {
      // Debian's Chromium, through infra/scripts/chromium.sh: without the omnibox popup each context's window loads.
      executablePath: process.env.BENCHTRAIL_CHROMIUM ?? resolve(__dirname, '../../infra/scripts/chromium.sh'),
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
