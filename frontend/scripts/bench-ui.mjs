// Time until a run page's charts are drawn, against a static HTML page that draws the same charts
// (same data and layout, taken from the run page itself) with the same Plotly bundle, in headless
// Chromium; prints bundle sizes. Needs a running stack: BENCHTRAIL_URL (or BENCHTRAIL_E2E_URL) and
// a run slug (argument, or BENCHTRAIL_BENCH_RUN; default: the newest run of the first project).
// Last line: RESULT ratio=<run page/static> initial_js_gz_kb=<a> plotly_gz_kb=<b>
import { createServer } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from '@playwright/test';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const REPEATS = Number(process.env.BENCH_UI_REPEATS ?? 5);

function gzKb(buf) {
  return gzipSync(buf).length / 1024;
}

function bundleSizes() {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const initial = [...html.matchAll(/(?:src|href)="\/?(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
  const all = readdirSync(join(dist, 'assets')).filter((f) => f.endsWith('.js'));
  const plotly = all.filter((f) => f.startsWith('PlotlyChart-'));
  const sum = (files) => files.reduce((acc, f) => acc + gzKb(readFileSync(join(dist, f.startsWith('assets/') ? f : `assets/${f}`))), 0);
  for (const f of all) {
    const buf = readFileSync(join(dist, 'assets', f));
    const kind = initial.includes(`assets/${f}`) ? 'initial' : plotly.includes(f) ? 'lazy (plotly)' : 'lazy';
    console.log(`  ${f.padEnd(36)} ${(buf.length / 1024).toFixed(1).padStart(8)} kB  gzip ${gzKb(buf).toFixed(1).padStart(7)} kB  ${kind}`);
  }
  return { initialGz: sum(initial), plotlyGz: sum(plotly) };
}

async function api(base, path) {
  const res = await fetch(`${base}${path}`);
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function pickRun(base) {
  const given = process.argv[2] ?? process.env.BENCHTRAIL_BENCH_RUN;
  if (given) return given;
  const { items } = await api(base, '/api/v1/projects');
  for (const p of items) {
    const runs = await api(base, `/api/v1/projects/${p.slug}/runs?status=completed&per_page=1`);
    if (runs.items.length) return runs.items[0].slug;
  }
  throw new Error('no completed run on this stack: upload one first');
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const LAUNCH = {
  executablePath: process.env.BENCHTRAIL_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', '--disable-quic', '--disable-dev-shm-usage'],
};

async function timeUntilCharts(browser, url, count) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  await page.goto(url, { waitUntil: 'commit' });
  // Drawn = every chart has its SVG and at least one trace group; time is from navigation start.
  await page.waitForFunction((n) => {
    const plots = [...document.querySelectorAll('.js-plotly-plot')];
    return plots.length >= n && plots.every((p) => p.querySelector('.main-svg .trace'));
  }, count, { timeout: 60_000, polling: 'raf' });
  const ms = await page.evaluate(() => performance.now());
  await context.close();
  return ms;
}

async function main() {
  const base = (process.env.BENCHTRAIL_URL ?? process.env.BENCHTRAIL_E2E_URL ?? 'http://127.0.0.1:8400').replace(/\/+$/, '');
  console.log('bundle (dist/assets):');
  const { initialGz, plotlyGz } = bundleSizes();
  const slug = await pickRun(base);
  const runUrl = `${base}/r/${slug}`;
  const browser = await chromium.launch(LAUNCH);

  // One warm-up visit takes the drawn charts' data and layout for the static page.
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  await page.goto(runUrl, { waitUntil: 'networkidle' });
  await page.waitForSelector('.js-plotly-plot .main-svg', { timeout: 60_000 });
  await page.waitForLoadState('networkidle');
  const figures = await page.evaluate(() =>
    [...document.querySelectorAll('.js-plotly-plot')].map((gd) => ({
      data: gd.data.map((t) => ({ type: t.type, mode: t.mode, name: t.name, x: t.x, y: t.y, orientation: t.orientation })),
      layout: { title: gd.layout.title, height: gd.layout.height, xaxis: { type: gd.layout.xaxis.type }, yaxis: { rangemode: 'tozero' } },
    })),
  );
  await context.close();
  if (!figures.length) throw new Error(`run ${slug} draws no chart`);

  const plotlyJs = readFileSync(join(root, 'node_modules/plotly.js-cartesian-dist-min/plotly-cartesian.min.js'));
  const html = `<!doctype html><html><head><meta charset="utf-8"><script src="/plotly.js"></script></head><body>
${figures.map((_, i) => `<div id="c${i}" style="width:800px"></div>`).join('\n')}
<script>const figures=${JSON.stringify(figures)};figures.forEach((f,i)=>Plotly.newPlot('c'+i,f.data,f.layout,{displaylogo:false}));</script>
</body></html>`;
  const server = createServer((req, res) => {
    if (req.url === '/plotly.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript' });
      res.end(plotlyJs);
    } else {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(html);
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const staticUrl = `http://127.0.0.1:${server.address().port}/`;

  const runTimes = [];
  const staticTimes = [];
  for (let i = 0; i < REPEATS; i++) {
    runTimes.push(await timeUntilCharts(browser, runUrl, figures.length));
    staticTimes.push(await timeUntilCharts(browser, staticUrl, figures.length));
  }
  await browser.close();
  server.close();
  const runMs = median(runTimes);
  const staticMs = median(staticTimes);
  console.log(`run ${slug}: ${figures.length} charts`);
  console.log(`run page   ${runTimes.map((t) => t.toFixed(0)).join(' ')} ms  median ${runMs.toFixed(0)} ms`);
  console.log(`static     ${staticTimes.map((t) => t.toFixed(0)).join(' ')} ms  median ${staticMs.toFixed(0)} ms`);
  console.log(`RESULT ratio=${(runMs / staticMs).toFixed(2)} initial_js_gz_kb=${initialGz.toFixed(1)} plotly_gz_kb=${plotlyGz.toFixed(1)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
