import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { devCertPaths, ensureDevCerts } from '../src/certs/dev-certs.js';
import { FIXTURES } from './helpers/fixtures.js';
import { httpsRequest } from './helpers/https.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- manifest YAML is read freely here

/** The Deployment's NODE_OPTIONS: the server is attacked with the heap it ships with. */
function deploymentNodeOptions(): string {
  const docs = parseAllDocuments(readFileSync('manifests/base/deployment.yaml', 'utf8')).map((d) => d.toJS() as Doc);
  const container = docs.find((d) => d.kind === 'Deployment')?.spec.template.spec.containers[0];
  return container.env.find((e: { name: string }) => e.name === 'NODE_OPTIONS').value as string;
}

/** A DELETE review (allowed unchecked) carrying `extra`: what anyone who reaches the port can send. */
const hostile = (extra: string): string =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'hostile',
      kind: { group: '', version: 'v1', kind: 'X' },
      resource: { group: '', version: 'v1', resource: 'x' },
      operation: 'DELETE',
      extra: 'EXTRA',
    },
  }).replace('"EXTRA"', extra);

t.test('bodies within the size limit cannot exhaust the shipped heap; the server keeps answering', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sw-hostile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await ensureDevCerts(dir);
  const paths = devCertPaths(dir);
  const ca = readFileSync(paths.caFile);
  const child = spawn(
    process.execPath,
    [
      'dist/bundle/main.js',
      'serve',
      `--tls-cert-file=${paths.certFile}`,
      `--tls-private-key-file=${paths.keyFile}`,
      '--port=0',
    ].concat(['--bind-address=127.0.0.1', '--classes-from=test/fixtures/classes', '--shutdown-delay=0']),
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '', NODE_OPTIONS: deploymentNodeOptions() } },
  );
  t.teardown(() => void (child.exitCode === null && child.kill('SIGKILL')));
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const m = /"port":(\d+),"classes"/.exec(output);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', () => reject(new Error(`server exited: ${output.slice(-2000)}`)));
  });
  const post = (body: string) => httpsRequest(port, { path: '/validate', body, ca });
  const objects = await post(hostile(`[${Array(1_400_000).fill('{}').join(',')}]`));
  t.same([objects.status, JSON.parse(objects.body).code], [413, 'SW_TOO_COMPLEX'], '1,400,000 empty objects (4 MB) are refused');
  for (const [what, fill, count] of [
    ['numbers', '1', 3_500_000],
    ['decimals', '1.5', 1_800_000],
    ['empty strings', '""', 2_300_000],
  ] as const) {
    const answer = await post(hostile(`[${Array(count).fill(fill).join(',')}]`));
    t.equal(answer.status, 200, `${count.toLocaleString('en')} ${what} (about 7 MB) are read and answered`);
  }
  const normal = await post(readFileSync(`${FIXTURES}samples/second-default-class.json`, 'utf8'));
  t.match(normal.body, '"allowed":false', 'and the next real request is answered');
  t.equal(child.exitCode, null, 'the process is alive');
});
