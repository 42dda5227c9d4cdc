/** The Go demo target (GET /ok, /slow) as a child of the test process, on a free loopback port. */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { REPO } from './api';

const BINARY = resolve(REPO, '.tools/bin/benchtrail-demo-target');

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => ok(port));
    });
  });
}

/** `args`: more of the target's flags, e.g. `-pprof` (its CPU profile) or `-trace <sink>` (its tracer). */
export async function startDemoTarget(args: readonly string[] = []): Promise<{ url: string; stop: () => Promise<void> }> {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run infra/tools/install.sh`);
  const port = await freePort();
  const child = spawn(BINARY, ['-addr', `127.0.0.1:${port}`, ...args], { stdio: 'ignore', env: { ...process.env, GOMAXPROCS: '1' } });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/ok`)).ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`demo target exited with ${child.exitCode}`);
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`demo target not answering on ${url} after 15 s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  return { url, stop };
}
