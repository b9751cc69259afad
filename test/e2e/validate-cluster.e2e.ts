// `snapshot-webhook validate --kubeconfig` against a real apiserver with upstream's v8.6.0 CRDs: a kind at a version
// the cluster does not serve is an error naming the versions it serves (kubectl refuses it too), and the classes it
// reads make the default-class rule decide as the webhook would, order of the input included.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { KubeConfig } from '@kubernetes/client-node';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { stopAll } from './processes.js';
import { DRIVER, klass, snapshotObjects, VSCLASS } from './snapshot-objects.js';

const MAIN = 'dist/bundle/main.js';
const SERVED = 'test/fixtures/cli/served';
const MOVE = 'test/fixtures/cli/move-default';
const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-validate-'));
let cluster: TestCluster | undefined;
t.teardown(async () => {
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

const validate = (...args: string[]) => spawnSync(process.execPath, [MAIN, 'validate', ...args], { encoding: 'utf8' });

t.before(async () => {
  cluster = await startCluster(dir);
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  await installCrds(kc, 'current');
  await snapshotObjects(kc).create(VSCLASS, klass(VSCLASS, 'slow', DRIVER, true));
});

t.test('a kind at a version the cluster does not serve: an error naming the served versions', async (t) => {
  const kubeconfig = `--kubeconfig=${(cluster as TestCluster).kubeconfig}`;
  const r = validate(kubeconfig, `${SERVED}/v1beta1-snapshot.yaml`, `${SERVED}/v1-snapshot.yaml`);
  t.equal(r.status, 2, `exit 2: input the cluster would refuse\n${r.stdout}${r.stderr}`);
  t.match(
    r.stdout,
    `${SERVED}/v1beta1-snapshot.yaml:2: VolumeSnapshot apps/old-api: the cluster does not serve VolumeSnapshot at ` +
      'snapshot.storage.k8s.io/v1beta1, so kubectl would refuse it (no matches for kind "VolumeSnapshot" in version ' +
      '"snapshot.storage.k8s.io/v1beta1"): it serves VolumeSnapshot at snapshot.storage.k8s.io/v1; write it at snapshot.storage.k8s.io/v1',
  );
  t.notMatch(r.stdout, 'current-api', 'the v1 snapshot is checked and clean');
  const kubectl = spawnSync('kubectl', [kubeconfig, 'apply', '--dry-run=server', '-f', `${SERVED}/v1beta1-snapshot.yaml`], {
    encoding: 'utf8',
  });
  t.match(
    kubectl.stderr,
    'no matches for kind "VolumeSnapshot" in version "snapshot.storage.k8s.io/v1beta1"',
    'kubectl refuses it alike',
  );
  const offline = validate(`${SERVED}/v1beta1-snapshot.yaml`);
  t.equal(offline.status, 0, 'without a cluster, a deprecated version stays a warning');
  t.match(offline.stdout, 'warning: snapshot.storage.k8s.io/v1beta1 VolumeSnapshot is deprecated');
});

t.test("the cluster's default and one file that moves it: the order that works is named", async (t) => {
  const kubeconfig = `--kubeconfig=${(cluster as TestCluster).kubeconfig}`;
  const wrong = validate(kubeconfig, `${MOVE}/fast-first.yaml`);
  t.equal(wrong.status, 1);
  t.match(wrong.stdout, `this input removes that default later (${MOVE}/fast-first.yaml:11)`);
  const right = validate(kubeconfig, `${MOVE}/slow-first.yaml`);
  t.equal(right.status, 0, right.stdout);
});
