/**
 * A deterministic JMeter 2.13-style JTL (CSV with header): thread groups of 10, 20 and 50 threads
 * run one after another, two labels, closed-loop threads. The agent file adds a fixed per-request
 * overhead so the expected differences are known in kind, while the numbers themselves are
 * computed by the server from every sample and checked against the API.
 */
export const THREAD_GROUPS = [10, 20, 50] as const;
export const LABELS = ['API-URI-owner-3spans', 'API-URI-vets-10spans'] as const;

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface JtlOptions {
  seed: number;
  /** Added latency per span, ms (owner = 3 spans, vets = 10 spans). */
  perSpanMs: number;
  startMs: number;
  requestsPerThread: number;
}

export function generateJtl(opts: JtlOptions): string {
  const rand = mulberry32(opts.seed);
  const header =
    'timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,bytes,grpThreads,allThreads,Latency';
  const rows: [number, string][] = [];
  THREAD_GROUPS.forEach((threads, g) => {
    const groupStart = opts.startMs + g * 120_000;
    for (let t = 1; t <= threads; t++) {
      let ts = groupStart + Math.floor(rand() * 500);
      for (let i = 0; i < opts.requestsPerThread; i++) {
        const label = LABELS[(t + i) % 2];
        const spans = label.includes('3spans') ? 3 : 10;
        const base = 8 + threads * 0.6 + spans * 1.5;
        // Log-normal-ish service time, with an occasional slow request for a real tail.
        const u = Math.max(rand(), 1e-9);
        let elapsed = Math.round(base * Math.exp(0.35 * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand())));
        if (rand() < 0.01) elapsed *= 6;
        elapsed += Math.round(spans * opts.perSpanMs);
        elapsed = Math.max(1, elapsed);
        const ok = rand() > 0.004;
        const code = ok ? '200' : '500';
        const msg = ok ? 'OK' : 'Internal Server Error';
        rows.push([
          ts,
          `${ts},${elapsed},${label},${code},${msg},TG${threads} ${g + 1}-${t},text,${ok},${ok ? 1024 : 120},${threads},${threads},${Math.max(1, elapsed - 1)}`,
        ]);
        // Think time spreads a thread group over ~15 s, so the time series have points to overlay.
        ts += elapsed + 250 + Math.floor(rand() * 200);
      }
    }
  });
  // JMeter writes rows in completion order, not start order.
  rows.sort((a, b) => a[0] - b[0]);
  return [header, ...rows.map((r) => r[1])].join('\n') + '\n';
}
