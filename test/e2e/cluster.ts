import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import { unpackTool } from '../helpers/tools.mjs';
import { kube } from './kube.js';
import { freePort, startProcess, waitWhileRunning, type Started } from './processes.js';

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A certificate signed by the test CA; `ext` holds its extensions. */
function sign(dir: string, name: string, subject: string, ext: string): void {
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, ['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-sha256',
    '-extfile',
    `${name}.ext`,
  ]);
}

function signClientCert(dir: string, user: string): void {
  sign(dir, user, `/CN=${user}`, 'extendedKeyUsage=clientAuth\n');
}

/** CA, apiserver serving cert (SANs 127.0.0.1, localhost), admin client cert (system:masters), SA keys. */
function makePki(dir: string): void {
  openssl(dir, ['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-sha256', '-subj', '/CN=e2e-ca']);
  sign(dir, 'apiserver', '/CN=kube-apiserver', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  sign(dir, 'admin', '/O=system:masters/CN=e2e-admin', 'extendedKeyUsage=clientAuth\n');
  openssl(dir, ['genrsa', '-out', 'sa.key', '2048']);
  openssl(dir, ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
}

export interface TestCluster {
  readonly kubeconfig: string;
  /** A kubeconfig for a user with a client certificate of that name (no groups: RBAC decides). */
  kubeconfigFor(user: string): string;
  /** A second apiserver on the same etcd, for writes while the first is down. */
  startSecondApiserver(): Promise<{ kubeconfig: string; stop(): Promise<void> }>;
  readonly port: number;
  readonly dir: string;
  /** Stops the apiserver only (etcd keeps the data), for outage tests. */
  stopApiserver(): Promise<void>;
  startApiserver(): Promise<void>;
  /** SIGSTOP / SIGCONT the apiserver: its connections stay open and nothing answers (a frozen apiserver). */
  freezeApiserver(): void;
  thawApiserver(): void;
  stop(): Promise<void>;
  logs(): string;
}

function getReadyz(port: number, dir: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/readyz',
        ca: readFileSync(join(dir, 'ca.crt')),
        cert: readFileSync(join(dir, 'admin.crt')),
        key: readFileSync(join(dir, 'admin.key')),
        timeout: 2000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Whether etcd answers its /health with `"health":"true"` (it has a leader and serves reads). */
function getEtcdHealth(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/health', timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body = (body + chunk).slice(0, 1000)));
      res.on('end', () => resolve(res.statusCode === 200 && body.includes('"health":"true"')));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

/** The CN of the client certificate the apiserver presents to webhooks with `webhookClientCert`. */
export const WEBHOOK_CLIENT = 'kube-apiserver-webhook-client';

/**
 * The apiserver's side of mutual TLS with webhooks: an AdmissionConfiguration whose kubeconfig gives a client
 * certificate (signed by the test CA) for every webhook (`*`), as docs/install.md shows.
 */
function webhookClientConfig(dir: string): string {
  signClientCert(dir, WEBHOOK_CLIENT);
  const kubeconfig = join(dir, 'webhook-client.kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      users: [
        {
          name: '*',
          user: { 'client-certificate': join(dir, `${WEBHOOK_CLIENT}.crt`), 'client-key': join(dir, `${WEBHOOK_CLIENT}.key`) },
        },
      ],
    }),
  );
  const admission = join(dir, 'admission-configuration.yaml');
  writeFileSync(
    admission,
    JSON.stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AdmissionConfiguration',
      plugins: [
        {
          name: 'ValidatingAdmissionWebhook',
          configuration: {
            apiVersion: 'apiserver.config.k8s.io/v1',
            kind: 'WebhookAdmissionConfiguration',
            kubeConfigFile: kubeconfig,
          },
        },
      ],
    }),
  );
  return admission;
}

/** etcd and the kube-apiserver of this run's release (kube.ts) on loopback, with an admin kubeconfig. */
export async function startCluster(dir: string, options: { webhookClientCert?: boolean } = {}): Promise<TestCluster> {
  mkdirSync(dir, { recursive: true });
  const binary = join(dir, 'kube-apiserver');
  unpackTool(kube.apiserverTool, binary);
  const etcdBinary = kube.etcdTool === undefined ? 'etcd' : unpackTool(kube.etcdTool, join(dir, 'etcd-binary'));
  makePki(dir);
  const admissionConfig =
    options.webhookClientCert === true ? [`--admission-control-config-file=${webhookClientConfig(dir)}`] : [];
  const [etcdPort, peerPort, port] = [await freePort(), await freePort(), await freePort()];
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  const etcd = startProcess(etcdBinary, [
    `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
    '--log-level=error',
  ]);
  const tail = (started: Started): string => started.output().slice(-3000);
  await waitWhileRunning(etcd, 'etcd /health', () => getEtcdHealth(etcdPort), 30_000).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}\n${tail(etcd)}`);
  });
  const args = [
    `--etcd-servers=${etcdUrl}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${port}`,
    ...(kube.legacyFlags ? ['--insecure-port=0', '--logtostderr=true'] : []),
    `--tls-cert-file=${join(dir, 'apiserver.crt')}`,
    `--tls-private-key-file=${join(dir, 'apiserver.key')}`,
    `--client-ca-file=${join(dir, 'ca.crt')}`,
    `--service-account-key-file=${join(dir, 'sa.pub')}`,
    `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
    '--service-account-issuer=https://kubernetes.default.svc',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--authorization-mode=RBAC',
    `--enable-admission-plugins=NamespaceLifecycle,ServiceAccount,ValidatingAdmissionWebhook${
      kube.admissionPolicies ? ',ValidatingAdmissionPolicy' : ''
    }`,
    '--endpoint-reconciler-type=none',
    '--profiling=false',
    '--v=0',
    ...admissionConfig,
  ];
  let apiserver: Started | undefined;
  const startApiserver = async (): Promise<void> => {
    const started = startProcess(binary, args);
    apiserver = started;
    await waitWhileRunning(started, 'kube-apiserver /readyz', () => getReadyz(port, dir), 60_000).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${tail(started)}\netcd: ${tail(etcd)}`);
    });
  };
  await startApiserver();
  const b64 = (file: string): string => readFileSync(join(dir, file)).toString('base64');
  const writeKubeconfig = (file: string, user: string, serverPort: number): string => {
    const path = join(dir, file);
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          { name: 'e2e', cluster: { server: `https://127.0.0.1:${serverPort}`, 'certificate-authority-data': b64('ca.crt') } },
        ],
        users: [{ name: user, user: { 'client-certificate-data': b64(`${user}.crt`), 'client-key-data': b64(`${user}.key`) } }],
        contexts: [{ name: 'e2e', context: { cluster: 'e2e', user } }],
        'current-context': 'e2e',
      }),
    );
    return path;
  };
  const kubeconfig = writeKubeconfig('kubeconfig', 'admin', port);
  return {
    kubeconfig,
    kubeconfigFor: (user: string) => {
      signClientCert(dir, user);
      return writeKubeconfig(`kubeconfig-${user}`, user, port);
    },
    startSecondApiserver: async () => {
      const secondPort = await freePort();
      const second = startProcess(
        binary,
        args.map((a) => (a.startsWith('--secure-port=') ? `--secure-port=${secondPort}` : a)),
      );
      await waitWhileRunning(second, 'second kube-apiserver /readyz', () => getReadyz(secondPort, dir), 60_000);
      return {
        kubeconfig: writeKubeconfig('kubeconfig-second', 'admin', secondPort),
        stop: async () => void (await second.stop()),
      };
    },
    port,
    dir,
    stopApiserver: async () => {
      await apiserver?.stop();
    },
    startApiserver,
    freezeApiserver: () => void apiserver?.child.kill('SIGSTOP'),
    thawApiserver: () => void apiserver?.child.kill('SIGCONT'),
    stop: async () => {
      apiserver?.child.kill('SIGCONT');
      await apiserver?.stop();
      await etcd.stop();
    },
    logs: () => apiserver?.output() ?? '',
  };
}
