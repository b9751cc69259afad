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
  if (separateProcess) {
    port = await freePort();
    const args = [
      `--tls-cert-file=${paths.certFile}`,
      `--tls-private-key-file=${paths.keyFile}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
    ];
    const child = spawn(
      process.execPath,
      ['dist/bundle/main.js', 'serve', ...args, '--classes-from=test/fixtures/classes', '--shutdown-delay=0', '--log-level=warn'],
      { stdio: 'inherit' },
    );
    const ready = port;
    await waitFor('the fuzz target', async () => (await httpsGet(ready, '/readyz', ca)).status === 200, 15_000, 50);
    shutdown = async () => {
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
    stop: async () => {
      agent.destroy();
      await shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
