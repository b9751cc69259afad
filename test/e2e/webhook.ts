import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { ensureDevCerts, devCertPaths } from '../../src/certs/dev-certs.js';
import { freePort, startProcess, waitFor, type Started } from './processes.js';

const MAIN = fileURLToPath(new URL('../../dist/bundle/main.js', import.meta.url));
const WEBHOOK_CONFIG = fileURLToPath(new URL('../../manifests/base/validating-webhook-configuration.yaml', import.meta.url));

export interface TestWebhook {
  readonly port: number;
  readonly caBundle: string;
  readonly process: Started;
  ready(): Promise<boolean>;
}

export function httpsGet(port: number, path: string, ca: Buffer, timeoutMs = 2000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, ca, servername: 'localhost', timeout: timeoutMs }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/** Our built server, in cluster mode against the test apiserver, on a loopback port. */
export async function startWebhook(
  dir: string,
  kubeconfig: string,
  extraArgs: readonly string[] = [],
  waitReady = true,
  fixedPort?: number,
): Promise<TestWebhook> {
  const certDir = join(dir, 'webhook-certs');
  await ensureDevCerts(certDir);
  const paths = devCertPaths(certDir);
  const ca = readFileSync(paths.caFile);
  const port = fixedPort ?? (await freePort());
  const child = startProcess(process.execPath, [
    MAIN,
    'serve',
    `--kubeconfig=${kubeconfig}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--tls-cert-file=${paths.certFile}`,
    `--tls-private-key-file=${paths.keyFile}`,
    '--shutdown-delay=0',
    ...(extraArgs.some((a) => a.startsWith('--namespace')) ? [] : ['--namespace=default']),
    ...(process.env.E2E_DEBUG ? ['--log-level=debug'] : []),
    ...extraArgs,
  ]);
  const ready = async (): Promise<boolean> => (await httpsGet(port, '/readyz', ca)).status === 200;
  if (waitReady) {
    await waitFor('webhook /readyz', ready, 20_000).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${child.output().slice(-3000)}`);
    });
  }
  return { port, caBundle: ca.toString('base64'), process: child, ready };
}

interface WebhookEntry {
  name: string;
  clientConfig: { service?: { path?: string }; url?: string; caBundle?: string };
  [key: string]: unknown;
}

/** The project's ValidatingWebhookConfiguration, pointed at the loopback webhook with its real caBundle. */
export function webhookConfiguration(port: number, caBundle: string): Record<string, unknown> {
  const config = parse(readFileSync(WEBHOOK_CONFIG, 'utf8')) as { webhooks: WebhookEntry[] } & Record<string, unknown>;
  config.webhooks = config.webhooks.map((w) => ({
    ...w,
    clientConfig: { url: `https://127.0.0.1:${port}${w.clientConfig.service?.path ?? '/validate'}`, caBundle },
  }));
  return config;
}

/** A decision line of the webhook's log, the fields the suites read. */
export interface DecisionLine {
  resource: string;
  operation: string;
  allowed: boolean;
  user?: string;
  reason?: string;
  name?: string;
  rule?: string;
  dryRun?: boolean;
  /** The decision's duration in milliseconds. */
  ms: number;
}

/** Gathers the webhook's decision lines for one user's requests as they are written (at most 100,000). */
export function followDecisions(webhook: Started, user: string): () => readonly DecisionLine[] {
  const decisions: DecisionLine[] = [];
  let partial = '';
  webhook.child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{') || !line.includes('"allowed":')) continue;
      const decision = JSON.parse(line) as DecisionLine;
      if (decision.user === user && decisions.length < 100_000) decisions.push(decision);
    }
  });
  return () => decisions;
}
