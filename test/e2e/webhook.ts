import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AdmissionregistrationV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { kube } from './kube.js';
import { ensureDevCerts, devCertPaths } from '../../src/certs/dev-certs.js';
import { freePort, startProcess, waitFor, type Started } from './processes.js';
import { deploymentEnv, renderedManifests } from '../helpers/deployment.mjs';
import { baseEnv, withExactEnv } from '../helpers/exact-env.mjs';

const MAIN = fileURLToPath(new URL('../../dist/bundle/main.js', import.meta.url));

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

/**
 * Our built server, in cluster mode against the test apiserver, on a loopback port, with the Deployment's runtime
 * settings (NODE_OPTIONS, GLIBC_TUNABLES) and nothing of the test runner's environment.
 */
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
  const args = [
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
  ];
  const child = startProcess(...withExactEnv(process.execPath, args, { ...baseEnv(), ...deploymentEnv() }));
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

/**
 * The project's ValidatingWebhookConfigurations as this release installs them (the base with the release's
 * components, and `components` on top, rendered by kubectl kustomize), pointed at the loopback webhook with its
 * real caBundle: the default-class rule's, and the object checks' unless a component removed it.
 */
export function webhookConfigurations(
  port: number,
  caBundle: string,
  components: readonly string[] = [],
): (Record<string, unknown> & { metadata: { name: string } })[] {
  const configs = renderedManifests([...kube.components, ...components]).filter(
    (d) => d.kind === 'ValidatingWebhookConfiguration',
  ) as ({ metadata: { name: string }; webhooks: WebhookEntry[] } & Record<string, unknown>)[];
  if (configs.length === 0) throw new Error('the manifests render no ValidatingWebhookConfiguration');
  return configs.map((config) => ({
    ...config,
    webhooks: config.webhooks.map((w) => ({
      ...w,
      clientConfig: { url: `https://127.0.0.1:${port}${w.clientConfig.service?.path ?? '/validate'}`, caBundle },
    })),
  }));
}

/** Registers webhookConfigurations(...) with the apiserver, replacing any configuration of the same name. */
export async function registerWebhook(
  kc: KubeConfig,
  port: number,
  caBundle: string,
  components: readonly string[] = [],
): Promise<void> {
  const hooks = kc.makeApiClient(AdmissionregistrationV1Api);
  for (const body of webhookConfigurations(port, caBundle, components)) {
    await hooks.deleteValidatingWebhookConfiguration({ name: body.metadata.name }).catch(() => undefined);
    await hooks.createValidatingWebhookConfiguration({ body: body as never });
  }
}

/**
 * Waits until the apiserver calls the webhook: changing a bound VolumeSnapshotContent's reference uid is denied by
 * the webhook on every release (KEP-1900; no CRD rule checks it, matchConditions route contents, and no value is
 * `""`, which 1.20 refuses with typed CRDs). The probe content is deleted afterwards.
 */
export async function untilCalled(kc: KubeConfig, what = 'webhook registered'): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const at = { group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshotcontents' };
  const name = 'registration-probe';
  const probe = {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshotContent',
    metadata: { name },
    spec: {
      driver: 'probe.csi.example.com',
      deletionPolicy: 'Retain',
      source: { snapshotHandle: 'probe' },
      volumeSnapshotRef: { name: 'probe', namespace: 'probe', uid: 'uid-0' },
    },
  };
  await api.createClusterCustomObject({ ...at, body: probe });
  let last = '';
  let round = 0;
  await waitFor(
    what,
    async () => {
      const stored = (await api.getClusterCustomObject({ ...at, name })) as typeof probe;
      round += 1;
      stored.spec.volumeSnapshotRef.uid = `uid-${round}`;
      last = await api.replaceClusterCustomObject({ ...at, name, body: stored }).then(
        () => '(admitted)',
        (error: unknown) => String((error as { body?: unknown }).body ?? error),
      );
      return last.includes('denied the request');
    },
    15_000,
    200,
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; last answer: ${last.slice(0, 500)}`);
  });
  await api.deleteClusterCustomObject({ ...at, name });
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
