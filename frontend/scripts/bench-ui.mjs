// Time until a run page's charts are drawn, against a static HTML page that draws the same charts
// (same data and layout, taken from the run page itself) with the same Plotly bundle, in headless
// Chromium; prints bundle sizes. Needs a running stack: BENCHTRAIL_URL (or BENCHTRAIL_E2E_URL) and
// a run slug (argument, or BENCHTRAIL_BENCH_RUN; default: the newest run of the first project).
// A second case draws a 5,000-point history: the History page with the trail endpoint's answer
// stretched to 5,000 runs (same shape, served through Playwright's routing; the API itself is
// benchmarked by bench-api) against a static page drawing the same points, and the page's longest
// main-thread task after navigation.
// Last line: RESULT ratio=<run page/static> initial_js_gz_kb=<a> plotly_gz_kb=<b>
//            history_5k_ratio=<history page/static> history_longest_task_ms=<longest task>
// BENCH_SMOKE=1 (as bench/sizes.py): one visit of each page, a 50-point history; its numbers mean nothing.
import { createServer } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from '@playwright/test';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
// Sizes: full by default, tiny under BENCH_SMOKE=1 (make test runs every bench so); the same rule as bench/sizes.py.
const SMOKE = !['', '0'].includes(process.env.BENCH_SMOKE ?? '');
const size = (full, smoke, env) => (env && process.env[env] ? Number(process.env[env]) : SMOKE ? smoke : full);
const REPEATS = size(5, 1, 'BENCH_UI_REPEATS');

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
  // Debian's Chromium, as the e2e suite starts it (without the omnibox popup each context's window loads).
  executablePath: process.env.BENCHTRAIL_CHROMIUM ?? resolve(root, '../infra/scripts/chromium.sh'),
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', '--disable-quic', '--disable-dev-shm-usage'],
};

const HISTORY_POINTS = size(5000, 50);

/** The trail's real answer with its points stretched to HISTORY_POINTS runs of a slowly drifting value. */
function stretchTrail(detail) {
  const first = detail.points[0];
  const base = first?.value ?? 10;
  const t0 = Date.parse(first?.created_at ?? '2026-01-01T00:00:00Z');
  let state = 12345;
  const rand = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
  const points = Array.from({ length: HISTORY_POINTS }, (_, i) => ({
    run: `bench${i}`,
    agent_version: `1.${Math.floor(i / 100)}.${i % 100}`,
    commit: (i.toString(16) + 'c0ffee').padEnd(40, '0'),
    created_at: new Date(t0 + i * 3_600_000).toISOString(),
    value: base * (1 + 0.05 * Math.sin(i / 300) + 0.02 * (rand() - 0.5) + (i > HISTORY_POINTS * 0.7 ? 0.08 : 0)),
    error: null,
    is_valid: i % 97 !== 0,
  }));
  return { ...detail, points, change_points: [], alerts: [] };
}

/** Every trail request of the page answers with HISTORY_POINTS points. */
async function routeLongTrails(context) {
  await context.route(/\/api\/v1\/trails\/\d+(\?|$)/, async (route) => {
    const res = await route.fetch();
    const body = stretchTrail(await res.json());
    await route.fulfill({ response: res, json: body });
  });
}

/** Collects the longest main-thread task (Long Tasks API) from navigation on. */
const LONG_TASKS = () => {
  window.__longest = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
  }).observe({ type: 'longtask', buffered: true });
};

async function timeUntilCharts(browser, url, count, { longTrails = false, longest = false } = {}) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  if (longTrails) await routeLongTrails(context);
  const page = await context.newPage();
  if (longest) await page.addInitScript(LONG_TASKS);
  await page.goto(url, { waitUntil: 'commit' });
  // Drawn = every chart has its SVG and at least one trace group; time is from navigation start.
  await page.waitForFunction((n) => {
    const plots = [...document.querySelectorAll('.js-plotly-plot')];
    return plots.length >= n && plots.every((p) => p.querySelector('.main-svg .trace'));
  }, count, { timeout: 60_000, polling: 'raf' });
  const ms = await page.evaluate(() => performance.now());
  let longestMs = null;
  if (longest) {
    // Work queued by the draw (the table, hover layers) lands within the next moments: wait for a quiet second.
    await page.waitForTimeout(1500);
    longestMs = await page.evaluate(() => window.__longest);
  }
  await context.close();
  return longest ? { ms, longestMs } : ms;
}

/** The figures as drawn on a page: traces' points and the layout's axis types, for the static page. */
async function figuresOf(browser, url, { longTrails = false } = {}) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  if (longTrails) await routeLongTrails(context);
  const page = await context.newPage();
  await page.goto(url, { waitUntil: 'networkidle' });
  await page.waitForSelector('.js-plotly-plot .main-svg .trace', { timeout: 60_000 });
  await page.waitForLoadState('networkidle');
  const figures = await page.evaluate(() =>
    [...document.querySelectorAll('.js-plotly-plot')].map((gd) => ({
      data: gd.data.map((t) => ({ type: t.type, mode: t.mode, name: t.name, x: t.x, y: t.y, orientation: t.orientation })),
      layout: { title: gd.layout.title, height: gd.layout.height, xaxis: { type: gd.layout.xaxis.type }, yaxis: { rangemode: 'tozero' } },
    })),
  );
  await context.close();
  return figures;
}

function staticPage(figures, plotlyJs) {
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
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, url: `http://127.0.0.1:${server.address().port}/` })));
}

async function pickTrail(base) {
  const { items } = await api(base, '/api/v1/projects');
  for (const p of items) {
    const trails = await api(base, `/api/v1/projects/${p.slug}/trails`);
    const t = trails.items.find((x) => x.points > 0);
    if (t) return { project: p.slug, trail: t };
  }
  throw new Error('no trail on this stack: upload a run first');
}

async function main() {
  if (SMOKE) console.log('bench-ui: smoke mode (BENCH_SMOKE=1): the whole path at a tiny size; its numbers mean nothing');
  const base = (process.env.BENCHTRAIL_URL ?? process.env.BENCHTRAIL_E2E_URL ?? 'http://127.0.0.1:8400').replace(/\/+$/, '');
  console.log('bundle (dist/assets):');
  const { initialGz, plotlyGz } = bundleSizes();
  const slug = await pickRun(base);
  const runUrl = `${base}/r/${slug}`;
  const browser = await chromium.launch(LAUNCH);

  // One warm-up visit takes the drawn charts' data and layout for the static page.
  const figures = await figuresOf(browser, runUrl);
  if (!figures.length) throw new Error(`run ${slug} draws no chart`);
  const plotlyJs = readFileSync(join(root, 'node_modules/plotly.js-basic-dist-min/plotly-basic.min.js'));
  const { server, url: staticUrl } = await staticPage(figures, plotlyJs);

  const { project, trail } = await pickTrail(base);
  const historyUrl = `${base}/p/${encodeURIComponent(project)}/history?trail=${trail.id}&metric=latency_p75&loads=${encodeURIComponent(trail.load_key)}`;
  const historyFigures = await figuresOf(browser, historyUrl, { longTrails: true });
  const drawn = historyFigures[0]?.data[0]?.x?.length ?? 0;
  if (drawn !== HISTORY_POINTS) throw new Error(`the history page drew ${drawn} points, not ${HISTORY_POINTS}`);
  const { server: historyServer, url: historyStaticUrl } = await staticPage(historyFigures, plotlyJs);

  const runTimes = [];
  const staticTimes = [];
  const historyTimes = [];
  const historyStaticTimes = [];
  const longestTasks = [];
  for (let i = 0; i < REPEATS; i++) {
    runTimes.push(await timeUntilCharts(browser, runUrl, figures.length));
    staticTimes.push(await timeUntilCharts(browser, staticUrl, figures.length));
    const h = await timeUntilCharts(browser, historyUrl, historyFigures.length, { longTrails: true, longest: true });
    historyTimes.push(h.ms);
    longestTasks.push(h.longestMs);
    historyStaticTimes.push(await timeUntilCharts(browser, historyStaticUrl, historyFigures.length));
  }
  await browser.close();
  server.close();
  historyServer.close();
  const runMs = median(runTimes);
  const staticMs = median(staticTimes);
  console.log(`run ${slug}: ${figures.length} charts`);
  console.log(`run page   ${runTimes.map((t) => t.toFixed(0)).join(' ')} ms  median ${runMs.toFixed(0)} ms`);
  console.log(`static     ${staticTimes.map((t) => t.toFixed(0)).join(' ')} ms  median ${staticMs.toFixed(0)} ms`);
  const historyMs = median(historyTimes);
  const historyStaticMs = median(historyStaticTimes);
  console.log(`history ${HISTORY_POINTS} points, trail ${trail.id}: ${historyFigures.length} chart(s)`);
  console.log(`history    ${historyTimes.map((t) => t.toFixed(0)).join(' ')} ms  median ${historyMs.toFixed(0)} ms`);
  console.log(`static     ${historyStaticTimes.map((t) => t.toFixed(0)).join(' ')} ms  median ${historyStaticMs.toFixed(0)} ms`);
  console.log(`longest main-thread task ${longestTasks.map((t) => t.toFixed(0)).join(' ')} ms`);
  console.log(
    `RESULT ratio=${(runMs / staticMs).toFixed(2)} initial_js_gz_kb=${initialGz.toFixed(1)} plotly_gz_kb=${plotlyGz.toFixed(1)}` +
      ` history_5k_ratio=${(historyMs / historyStaticMs).toFixed(2)} history_longest_task_ms=${median(longestTasks).toFixed(0)}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
