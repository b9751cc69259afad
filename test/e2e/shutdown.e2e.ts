// SIGTERM in cluster mode, as the kubelet sends it: with the class watches live and a default-class claim just
// written to the Lease (released at exit), the webhook keeps answering through the Deployment's shutdown delay, stops its watches and
// exits 0 within the Deployment's terminationGracePeriodSeconds, and no request it accepted fails. Requests come
// until a second before the delay ends: by then the endpoint is gone from the Service. (One sent on a kept-alive
// connection at the instant the server closes can still be reset; the apiserver does not send then.)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { CoordinationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { CLASS_KIND_FACTS } from '../../src/classes/class-kinds.js';
import { httpsRequest } from '../helpers/https.js';
import { admissionReview, SNAPSHOT_CLASS_V1 } from '../helpers/review.mjs';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { stopAll } from './processes.js';
import { startWebhook } from './webhook.js';

const NAMESPACE = 'snapshot-webhook';
const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-shutdown-'));
let cluster: TestCluster | undefined;
t.teardown(async () => {
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

/** The shutdown delay and grace period the Deployment ships (manifests/base/deployment.yaml). */
function shipped(): { delaySeconds: number; graceSeconds: number } {
  type Pod = { terminationGracePeriodSeconds: number; containers: { args: string[] }[] };
  const deployment = parseAllDocuments(readFileSync('manifests/base/deployment.yaml', 'utf8'))
    .map((d) => d.toJS() as { kind?: string; spec: { template: { spec: Pod } } })
    .find((d) => d.kind === 'Deployment');
  const pod = deployment?.spec.template.spec as Pod;
  const delay = pod.containers[0]?.args.find((a) => a.startsWith('--shutdown-delay='));
  return { delaySeconds: Number(delay?.split('=')[1]), graceSeconds: pod.terminationGracePeriodSeconds };
}

const defaultClass = (name: string, driver: string): unknown =>
  admissionReview(SNAPSHOT_CLASS_V1, {
    uid: name,
    object: {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotClass',
      metadata: { name, annotations: { [CLASS_KIND_FACTS.VolumeSnapshotClass.defaultAnnotation]: 'true' } },
      driver,
      deletionPolicy: 'Delete',
    },
  });

t.test('SIGTERM with live watches and a claim in the Lease: every accepted request answered, exit 0 in time', async (t) => {
  const { delaySeconds, graceSeconds } = shipped();
  cluster = await startCluster(dir);
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  await installCrds(kc, 'untyped');
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } });
  const webhook = await startWebhook(dir, cluster.kubeconfig, [`--namespace=${NAMESPACE}`, `--shutdown-delay=${delaySeconds}`]);
  const ca = Buffer.from(webhook.caBundle, 'base64');
  const claimed = await httpsRequest(webhook.port, {
    path: '/validate',
    ca,
    body: JSON.stringify(defaultClass('gold', 'd.example.com')),
  });
  t.match(claimed.body, '"allowed":true', 'a new default is admitted');
  const lease = await kc
    .makeApiClient(CoordinationV1Api)
    .readNamespacedLease({ name: CLASS_KIND_FACTS.VolumeSnapshotClass.claimLease, namespace: NAMESPACE });
  t.ok(lease.metadata?.annotations?.[`snapshot-webhook.storage.k8s.io/default-claims`], 'its claim is in the Lease');

  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  t.teardown(() => agent.destroy());
  let stopped = false;
  /** When the kubelet sent SIGTERM: the endpoint is removed during the delay, so the apiserver stops sending. */
  let signalledAt = Number.POSITIVE_INFINITY;
  const endpointRemoved = (): boolean => Date.now() - signalledAt > (delaySeconds - 1) * 1000;
  const outcome = { answered: 0, refused: 0, failed: [] as string[] };
  const sender = async (i: number): Promise<void> => {
    for (let n = 0; !stopped && !endpointRemoved(); n++) {
      try {
        const body = JSON.stringify(defaultClass(`c-${i}-${n}`, `driver-${i}-${n}.example.com`));
        const answer = await httpsRequest(webhook.port, { path: '/validate', ca, body, agent });
        if (answer.status === 200) outcome.answered += 1;
        else outcome.failed.push(`status ${answer.status}: ${answer.body.slice(0, 200)}`);
      } catch (error) {
        // Never accepted: refused once the listener closed, or reset before its TLS handshake finished (it was
        // still in the kernel's accept queue). The apiserver tries another endpoint.
        const { code, syscall, message } = error as NodeJS.ErrnoException;
        if (code === 'ECONNREFUSED' || syscall === 'connect' || message.includes('before secure TLS connection')) {
          outcome.refused += 1;
          return;
        }
        outcome.failed.push((error as Error).message);
        return;
      }
    }
  };
  const senders = [0, 1, 2].map(sender);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const signalled = Date.now();
  signalledAt = signalled;
  const code = await webhook.process.stop('SIGTERM');
  const seconds = (Date.now() - signalled) / 1000;
  stopped = true;
  await Promise.all(senders);
  t.equal(code, 0, `exit code ${code} after ${seconds.toFixed(1)} s`);
  t.ok(
    seconds >= delaySeconds && seconds < graceSeconds,
    `exited after ${seconds.toFixed(1)} s: past the ${delaySeconds} s delay, inside the ${graceSeconds} s grace period`,
  );
  t.same(outcome.failed, [], `${outcome.answered} requests answered during the drain, none failed`);
  t.ok(outcome.answered > 0, 'requests were answered during the drain');
  const after = await kc
    .makeApiClient(CoordinationV1Api)
    .readNamespacedLease({ name: CLASS_KIND_FACTS.VolumeSnapshotClass.claimLease, namespace: NAMESPACE });
  t.equal(after.spec?.holderIdentity, undefined, 'the Lease is released: it names no holder');
  t.match(
    after.metadata?.annotations?.[`snapshot-webhook.storage.k8s.io/default-claims`],
    /"gold"/,
    'the claims stay (facts about admitted classes, honoured by the other replicas)',
  );
});
