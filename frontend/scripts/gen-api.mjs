// Regenerates the OpenAPI document and the metric catalog from the backend (when its venv is
// present) and the typed client schema; both outputs are committed so the frontend builds without Python.
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repo = resolve(root, '..');
const python = process.env.BENCHTRAIL_PYTHON ?? resolve(repo, '.venv/bin/python');
const specPath = resolve(root, 'src/api/openapi.json');

if (process.argv.includes('--no-python') || !existsSync(python)) {
  console.log(`gen:api: using the committed ${specPath}`);
} else {
  const spec = execFileSync(python, ['-m', 'benchtrail.openapi'], {
    cwd: repo,
    env: { ...process.env, PYTHONPATH: resolve(repo, 'backend') },
    maxBuffer: 64 * 1024 * 1024,
  });
  writeFileSync(specPath, spec);
  console.log(`gen:api: wrote ${specPath}`);
  // The metric catalog (units, direction), so the dashboard never keeps a copy of its own.
  const metricsPath = resolve(root, 'src/api/metrics.json');
  writeFileSync(metricsPath, execFileSync(python, ['-m', 'benchtrail.metrics'], {
    cwd: repo, env: { ...process.env, PYTHONPATH: resolve(repo, 'backend') },
  }));
  console.log(`gen:api: wrote ${metricsPath}`);
}
execFileSync(process.execPath, [resolve(root, 'node_modules/openapi-typescript/bin/cli.js'), specPath,
  '-o', resolve(root, 'src/api/schema.d.ts')], { stdio: 'inherit' });
