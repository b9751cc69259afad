import { deploymentEnv } from '../helpers/deployment.mjs';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devCertPaths, ensureDevCerts } from '../../src/certs/dev-certs.js';
import { parseServeOptions } from '../../src/config/serve-options.js';
import { createLogger } from '../../src/log/logger.js';
import { startServer } from '../../src/server/serve.js';
import { memoryLog } from '../helpers/app.js';
import { freePort, waitFor } from '../e2e/processes.js';
import { httpsGet } from '../e2e/webhook.js';
import type { FuzzCase } from './envelope-arbitrary.js';

/** Every answer must come within this; the webhook's own timeout is 5 s. */
export const DEADLINE_MS = 5_000;

export interface FuzzTarget {
  send(c: FuzzCase): Promise<{ status: number; body: string; ms: number }>;
  /** The server's own /metrics, and how long it took to answer. */
  metrics(): Promise<{ text: string; ms: number }>;
  /** Why the server is gone, if it is (separate process only). */
  crashed(): string | undefined;
  /** Bytes of log lines the server wrote (separate process only). */
  logBytes(): number;
  stop(): Promise<void>;
}

/**
 * The real server on a loopback HTTPS socket, and a keep-alive client for it. In-process for the test suite
 * (coverage); `separateProcess` runs the built bundle in its own process, as volume runs need.
 */
export async function startFuzzTarget(separateProcess = false): Promise<FuzzTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'sw-fuzz-'));
  await ensureDevCerts(dir);
  const paths = devCertPaths(dir);
  const ca = readFileSync(paths.caFile);
  const options = parseServeOptions(
    [
      `--tls-cert-file=${paths.certFile}`,
      `--tls-private-key-file=${paths.keyFile}`,
      '--port=0',
      '--bind-address=127.0.0.1',
      '--classes-from=test/fixtures/classes',
      '--shutdown-delay=0',
    ],
    {},
  );
  let port: number;
  let shutdown: () => Promise<void>;
  let logBytes = 0;
  let exitedWith: string | undefined;
  let stopping = false;
  if (separateProcess) {
    port = await freePort();
    const args = [
      `--tls-cert-file=${paths.certFile}`,
      `--tls-private-key-file=${paths.keyFile}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
    ];
    // As it ships: info logging (a decision line per case, read and counted here) and the Deployment's runtime
    // settings (its heap sizes and allocator tunables).
    const child = spawn(
      process.execPath,
      ['dist/bundle/main.js', 'serve', ...args, '--classes-from=test/fixtures/classes', '--shutdown-delay=0'],
      { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...deploymentEnv() } },
    );
    child.stdout.on('data', (chunk: Buffer) => (logBytes += chunk.length));
    child.once('exit', (code, signal) => {
      if (!stopping) exitedWith = `the server exited (${code ?? signal}) during the run`;
    });
    const ready = port;
    await waitFor('the fuzz target', async () => (await httpsGet(ready, '/readyz', ca)).status === 200, 15_000, 50);
    shutdown = async () => {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    };
  } else {
    // Decisions are logged to memory and dropped: the fuzz run makes millions of them.
    const log = memoryLog();
    log.stream.on('data', () => undefined);
    const server = await startServer(options, createLogger('warn', log.stream));
    port = server.port;
    shutdown = () => server.shutdown('fuzz done');
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  return {
    send: (c) =>
      new Promise((resolve, reject) => {
        const started = performance.now();
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path: '/validate',
            method: 'POST',
            ca,
            servername: 'localhost',
            agent,
            headers: { 'content-type': 'application/json' },
            timeout: DEADLINE_MS,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), ms: performance.now() - started }),
            );
            res.on('error', reject);
          },
        );
        req.on('timeout', () => req.destroy(new Error(`no answer within ${DEADLINE_MS} ms`)));
        req.on('error', reject);
        req.end(c.body);
      }),
    metrics: async () => {
      const started = performance.now();
      const answer = await httpsGet(port, '/metrics', ca, 10_000);
      return { text: answer.body, ms: performance.now() - started };
    },
    crashed: () => exitedWith,
    logBytes: () => logBytes,
    stop: async () => {
      agent.destroy();
      await shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
