// A start that fails half way (a port in use, after the certificate watcher and the cluster's watches started)
// must unwind: every plugin's onClose runs, nothing is left open, and the process exits on its own with one
// fatal line. Runs the built bundle, as the Deployment does.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { devCertPaths, ensureDevCerts } from '../../src/certs/dev-certs.js';
import { deploymentEnv } from '../helpers/deployment.mjs';
import { baseEnv, withExactEnv } from '../helpers/exact-env.mjs';

/** The fixed time a failed start has to exit in (issue: "within 2 s"); generous next to the ~0.2 s it takes. */
const EXIT_WITHIN_MS = 2_000;

const dir = mkdtempSync(join(tmpdir(), 'sw-start-failure-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** A kubeconfig whose apiserver refuses every connection: the watches start and keep retrying. */
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`,
);

const busy = (): Promise<{ server: Server; port: number }> =>
  new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port }));
  });

interface Exit {
  readonly code: number | null;
  readonly ms: number;
  readonly fatal: readonly { msg: string }[];
  readonly stderr: string;
}

async function serve(args: readonly string[]): Promise<Exit> {
  const paths = devCertPaths(dir);
  const started = performance.now();
  const serveArgs = [
    'dist/bundle/main.js',
    'serve',
    `--tls-cert-file=${paths.certFile}`,
    `--tls-private-key-file=${paths.keyFile}`,
    '--bind-address=127.0.0.1',
    ...args,
  ];
  const env = { ...baseEnv(), ...deploymentEnv(), KUBECONFIG: '', POD_NAMESPACE: '' };
  const child = spawn(...withExactEnv(process.execPath, serveArgs, env), { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), EXIT_WITHIN_MS * 5);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(killer);
  const fatal = output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((line) => line.level === 60);
  return { code, ms: performance.now() - started, fatal, stderr };
}

t.before(async () => {
  await ensureDevCerts(dir);
});

const cases: readonly { name: string; args: (port: number) => string[] }[] = [
  { name: 'the admission port in use, standalone', args: (port) => [`--port=${port}`, '--classes-from=test/fixtures/classes'] },
  {
    name: 'the admission port in use, with a cluster whose watches started',
    args: (port) => [`--port=${port}`, `--kubeconfig=${kubeconfig}`, '--namespace=default'],
  },
  {
    name: 'the probe port in use, after the admission port listens, with a cluster',
    args: (port) => ['--port=0', `--probe-port=${port}`, `--kubeconfig=${kubeconfig}`, '--namespace=default'],
  },
];

for (const { name, args } of cases) {
  t.test(`${name}: exits 1 on its own within ${EXIT_WITHIN_MS / 1000} s with one fatal line`, async (t) => {
    const { server, port } = await busy();
    t.teardown(() => server.close());
    const exit = await serve(args(port));
    t.equal(exit.code, 1, 'exit code 1 (not killed)');
    t.ok(exit.ms < EXIT_WITHIN_MS, `exited after ${Math.round(exit.ms)} ms`);
    t.equal(exit.fatal.length, 1, 'one fatal line');
    t.match(exit.fatal[0]?.msg, new RegExp(`^cannot start: listen EADDRINUSE: address already in use 127\\.0\\.0\\.1:${port}$`));
  });
}

t.test('an unreadable kubeconfig: exits 1 with one fatal line naming it', async (t) => {
  const exit = await serve(['--port=0', `--kubeconfig=${join(dir, 'missing')}`, '--namespace=default']);
  t.equal(exit.code, 1);
  t.ok(exit.ms < EXIT_WITHIN_MS, `exited after ${Math.round(exit.ms)} ms`);
  t.equal(
    exit.fatal[0]?.msg,
    `cannot start: cannot load the kubeconfig ${join(dir, 'missing')} (--kubeconfig, or KUBECONFIG): ENOENT: no such file or directory, open '${join(dir, 'missing')}'`,
    'the flag named',
  );
});

t.test('outside a pod without --namespace: a usage error, exit 2, one line naming the flag', async (t) => {
  const exit = await serve(['--port=0', `--kubeconfig=${kubeconfig}`]);
  t.equal(exit.code, 2);
  t.equal(
    exit.stderr,
    'snapshot-webhook: serving a cluster needs the namespace for the default-class Leases: pass --namespace NS or set POD_NAMESPACE\n',
  );
  t.same(exit.fatal, [], 'no fatal log line with a stack');
});
