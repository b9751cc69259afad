// CRD conversion through the real kube-apiserver: upstream's current group snapshot CRDs (v1beta1, v1beta2 and
// v1, storage v1beta2) call our POST /convert. An object written at v1beta2 with a status is read, listed and
// watched at v1beta1 and v1, updated at v1beta1 and read back: every value as written, int64s included.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ApiextensionsV1Api, KubeConfig } from '@kubernetes/client-node';
import { parseLossless } from '../../src/conversion/lossless-json.js';
import { findUpstreamCrds } from '../helpers/tools.mjs';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { stopAll, waitFor } from './processes.js';
import { startWebhook, type TestWebhook } from './webhook.js';

type Json = Record<string, unknown>;
const GROUP = 'groupsnapshot.storage.k8s.io';
const NANOS = '1767323045123456789';
const SIZE = '9007199254740993';

const dir = mkdtempSync(join(tmpdir(), 'sw-conversion-'));
let cluster: TestCluster | undefined;
let webhook: TestWebhook | undefined;
t.teardown(async () => {
  await webhook?.process.stop();
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

/** A request to the apiserver as admin, JSON text both ways (client-node would round int64s through doubles). */
function api(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  const c = cluster as TestCluster;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: c.port,
        method,
        path,
        ca: readFileSync(join(c.dir, 'ca.crt')),
        cert: readFileSync(join(c.dir, 'admin.crt')),
        key: readFileSync(join(c.dir, 'admin.key')),
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        timeout: 10_000,
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
const path = (version: string, name = ''): string =>
  `/apis/${GROUP}/${version}/volumegroupsnapshotcontents${name ? `/${name}` : ''}`;
async function get(version: string, name: string): Promise<{ text: string; object: Json }> {
  const { status, text } = await api('GET', path(version, name));
  if (status !== 200) throw new Error(`GET ${version}/${name}: ${status} ${text.slice(0, 500)}`);
  return { text, object: parseLossless(text) as Json };
}
const infoList = (text: string): string => /"volumeSnapshotInfoList":(\[[^\]]*\])/.exec(text)?.[1] ?? '(none)';
const EXPECTED_INFO = `[{"creationTime":${NANOS},"readyToUse":true,"restoreSize":${SIZE},"snapshotHandle":"snap-1","volumeHandle":"vol-1"}]`;

/** The first event of a watch of the contents at `version` (the object as it exists). */
function firstWatchEvent(version: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const c = cluster as TestCluster;
    const req = request(
      {
        host: '127.0.0.1',
        port: c.port,
        path: `${path(version)}?watch=true&resourceVersion=0&timeoutSeconds=5`,
        ca: readFileSync(join(c.dir, 'ca.crt')),
        cert: readFileSync(join(c.dir, 'admin.crt')),
        key: readFileSync(join(c.dir, 'admin.key')),
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('\n')) {
            req.destroy();
            resolve(text);
          }
        });
        res.on('end', () => resolve(text));
      },
    );
    req.on('error', (error) => (error.message.includes('socket hang up') ? undefined : reject(error)));
    req.end();
  });
}

t.before(async () => {
  const crds = findUpstreamCrds();
  if (crds.dir === undefined) throw new Error(crds.missing);
  cluster = await startCluster(dir);
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  await installCrds(kc, 'current');
  webhook = await startWebhook(dir, cluster.kubeconfig);
  // Point the three group CRDs at the webhook, as the conversion component does with the Service.
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  for (const plural of ['volumegroupsnapshotcontents', 'volumegroupsnapshots', 'volumegroupsnapshotclasses']) {
    const crd = await extensions.readCustomResourceDefinition({ name: `${plural}.${GROUP}` });
    crd.spec.conversion = {
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: { url: `https://127.0.0.1:${webhook.port}/convert`, caBundle: webhook.caBundle },
      },
    };
    await extensions.replaceCustomResourceDefinition({ name: crd.metadata?.name as string, body: crd });
  }
});

t.test('written at v1beta2, read, listed and watched at v1beta1 and v1, updated at v1beta1: every value kept', async (t) => {
  const content = {
    apiVersion: `${GROUP}/v1beta2`,
    kind: 'VolumeGroupSnapshotContent',
    metadata: { name: 'content-1' },
    spec: {
      driver: 'hostpath.csi.k8s.io',
      deletionPolicy: 'Retain',
      source: { volumeHandles: ['vol-1'] },
      volumeGroupSnapshotRef: { name: 'group-1', namespace: 'team-a' },
    },
  };
  const created = await api('POST', path('v1beta2'), JSON.stringify(content));
  t.equal(created.status, 201, created.text.slice(0, 300));
  const stored = (await get('v1beta2', 'content-1')).object;
  // The sidecar's status, through the status subresource, with int64 values beyond 2^53.
  const status = `{"creationTime":"2026-01-02T03:04:05Z","readyToUse":true,"volumeGroupSnapshotHandle":"group-handle","volumeSnapshotInfoList":[{"volumeHandle":"vol-1","snapshotHandle":"snap-1","creationTime":${NANOS},"readyToUse":true,"restoreSize":${SIZE}}]}`;
  const withStatus = JSON.stringify({ ...stored, status: 'STATUS' }).replace('"STATUS"', status);
  const put = await api('PUT', `${path('v1beta2', 'content-1')}/status`, withStatus);
  t.equal(put.status, 200, put.text.slice(0, 300));

  await waitFor(
    'the apiserver converts through the webhook',
    async () => (await api('GET', path('v1beta1', 'content-1'))).status === 200,
    20_000,
    250,
  );
  const beta1 = await get('v1beta1', 'content-1');
  t.match(
    beta1.text,
    '"volumeSnapshotHandlePairList":[{"snapshotHandle":"snap-1","volumeHandle":"vol-1"}]',
    'v1beta1: the pair list',
  );
  t.match(beta1.text, `\\"creationTime\\":${NANOS}`, 'v1beta1: the full list kept in the annotation, exact');
  t.equal(infoList((await get('v1', 'content-1')).text), EXPECTED_INFO, 'v1: the info list, exact');

  const listed = await api('GET', path('v1beta1'));
  t.match(
    listed.text,
    '"volumeSnapshotHandlePairList":[{"snapshotHandle":"snap-1","volumeHandle":"vol-1"}]',
    'listed at v1beta1',
  );
  t.equal(infoList((await api('GET', path('v1'))).text), EXPECTED_INFO, 'listed at v1');
  // A watch from "now" starts at the apiserver's watch cache, which may not have the status write yet.
  let watched = '';
  await waitFor(
    'the watch cache to hold the status write',
    async () => (watched = await firstWatchEvent('v1beta1')).includes('"volumeSnapshotHandlePairList"'),
    10_000,
    250,
  );
  t.match(watched, /"type":"ADDED".*"volumeSnapshotHandlePairList"/, 'watched at v1beta1');
  t.equal(infoList(await firstWatchEvent('v1')), EXPECTED_INFO, 'watched at v1, exact');

  // An UPDATE at v1beta1 (a label added by an older client) keeps the list through the annotation.
  const relabeled = { ...beta1.object, metadata: { ...(beta1.object.metadata as Json), labels: { tier: 'gold' } } };
  const update = await api('PUT', path('v1beta1', 'content-1'), JSON.stringify(relabeled));
  t.equal(update.status, 200, update.text.slice(0, 300));
  const back = await get('v1beta2', 'content-1');
  t.equal(infoList(back.text), EXPECTED_INFO, 'v1beta2 after the v1beta1 update: the info list, exact');
  t.same((back.object.metadata as Json).labels, { tier: 'gold' }, 'and the label');
  t.notMatch(back.text, 'volume-snapshot-info-list', 'and the annotation gone');
  t.equal(infoList((await get('v1', 'content-1')).text), EXPECTED_INFO, 'v1 after the update, exact');
});

t.test('a VolumeGroupSnapshotClass written at v1beta1 reads at v1 and v1beta2 unchanged but for apiVersion', async (t) => {
  const klass = {
    apiVersion: `${GROUP}/v1beta1`,
    kind: 'VolumeGroupSnapshotClass',
    metadata: { name: 'class-1' },
    driver: 'd',
    deletionPolicy: 'Delete',
    parameters: { a: 'b' },
  };
  const created = await api('POST', `/apis/${GROUP}/v1beta1/volumegroupsnapshotclasses`, JSON.stringify(klass));
  t.equal(created.status, 201, created.text.slice(0, 300));
  for (const version of ['v1', 'v1beta2']) {
    const read = JSON.parse((await api('GET', `/apis/${GROUP}/${version}/volumegroupsnapshotclasses/class-1`)).text) as Json;
    t.same(
      [read.apiVersion, read.driver, read.deletionPolicy, read.parameters],
      [`${GROUP}/${version}`, 'd', 'Delete', { a: 'b' }],
      version,
    );
  }
});
