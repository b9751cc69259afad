// CRD conversion through the real kube-apiserver: upstream's current group snapshot CRDs (v1beta1, v1beta2 and
// v1, storage v1beta2) call our POST /convert. An object written at v1beta2 with a status is read, listed and
// watched at v1beta1 and v1, updated at v1beta1 and read back: every value as written, int64s included.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import t from 'tap';
import { ApiextensionsV1Api, KubeConfig } from '@kubernetes/client-node';
import { parseLossless } from '../../src/conversion/lossless-json.js';
import { findUpstreamCrds } from '../helpers/tools.mjs';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds, storeV1, wireConversion } from './crds.js';
import { docBlocks } from '../helpers/doc-blocks.js';
import { stopAll, waitFor } from './processes.js';
import { startWebhook, type TestWebhook } from './webhook.js';

type Json = Record<string, unknown>;
const GROUP = 'groupsnapshot.storage.k8s.io';
const MAIN = resolve('dist/bundle/main.js');
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
  // The conversion component's stanza, with the loopback url and the webhook's caBundle.
  await wireConversion(kc, webhook.port, webhook.caBundle);
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

/** A content written at `version` with the sidecar's status (int64s beyond 2^53), in that version's shape. */
async function writeContent(version: string, name: string): Promise<void> {
  const body = JSON.stringify({
    apiVersion: `${GROUP}/${version}`,
    kind: 'VolumeGroupSnapshotContent',
    metadata: { name },
    spec: {
      driver: 'hostpath.csi.k8s.io',
      deletionPolicy: 'Retain',
      source: { volumeHandles: ['vol-1'] },
      volumeGroupSnapshotRef: { name: `group-${name}`, namespace: 'team-a' },
    },
  });
  const created = await api('POST', path(version), body);
  if (created.status !== 201) throw new Error(`POST ${version}: ${created.status} ${created.text.slice(0, 300)}`);
  const stored = (await get(version, name)).object;
  const status =
    version === 'v1beta1'
      ? '{"readyToUse":true,"volumeSnapshotHandlePairList":[{"volumeHandle":"vol-1","snapshotHandle":"snap-1"}]}'
      : `{"readyToUse":true,"volumeSnapshotInfoList":[{"volumeHandle":"vol-1","snapshotHandle":"snap-1","creationTime":${NANOS},"readyToUse":true,"restoreSize":${SIZE}}]}`;
  const put = await api(
    'PUT',
    `${path(version, name)}/status`,
    JSON.stringify({ ...stored, status: 'STATUS' }).replace('"STATUS"', status),
  );
  if (put.status !== 200) throw new Error(`PUT status ${version}: ${put.status} ${put.text.slice(0, 300)}`);
}

/** What an object holds at a version, apart from what the apiserver changes on every write. */
async function content(version: string, name: string): Promise<string> {
  const { object } = await get(version, name);
  const { resourceVersion, managedFields, generation, ...metadata } = object.metadata as Json;
  return JSON.stringify({ ...object, metadata });
}

t.test('written at each version, read at every version, rewritten at the storage version: nothing lost', async (t) => {
  const versions = ['v1beta1', 'v1beta2', 'v1'];
  for (const written of versions) await writeContent(written, `at-${written}`);
  const before = new Map<string, string>();
  for (const written of versions)
    for (const read of versions) {
      const text = await content(read, `at-${written}`);
      before.set(`${written}@${read}`, text);
      if (read === 'v1beta1')
        t.match(
          text,
          '"volumeSnapshotHandlePairList":[{"snapshotHandle":"snap-1","volumeHandle":"vol-1"}]',
          `${written} read at ${read}`,
        );
      else if (written === 'v1beta1')
        t.match(
          text,
          '"volumeSnapshotInfoList":[{"snapshotHandle":"snap-1","volumeHandle":"vol-1"}]',
          `${written} read at ${read}: the pairs`,
        );
      else t.equal(infoList(text), EXPECTED_INFO, `${written} read at ${read}: the info list, exact`);
    }
  // The storage-version migration: every object read and written back unchanged at the storage version (v1beta2).
  for (const written of versions) {
    const { text } = await get('v1beta2', `at-${written}`);
    const put = await api('PUT', path('v1beta2', `at-${written}`), text);
    t.equal(put.status, 200, `rewrite of at-${written}: ${put.text.slice(0, 200)}`);
  }
  for (const [key, text] of before) {
    const [written, read] = key.split('@') as [string, string];
    t.equal(await content(read, `at-${written}`), text, `after the rewrite, ${written} read at ${read}: the same`);
  }
});

t.test('with the webhook down, reads at another version fail clearly and nothing is written; back, all reads', async (t) => {
  const hook = webhook as TestWebhook;
  const stored = await content('v1beta2', 'at-v1');
  await hook.process.stop();
  for (const version of ['v1beta1', 'v1']) {
    const read = await api('GET', path(version, 'at-v1'));
    t.not(read.status, 200, `a read at ${version} fails: ${read.status}`);
    t.match(
      read.text,
      /conversion webhook for groupsnapshot\.storage\.k8s\.io\/v1beta2, Kind=VolumeGroupSnapshotContent failed/,
      'and says why',
    );
  }
  const write = await api(
    'PUT',
    path('v1', 'at-v1'),
    JSON.stringify({ ...(await get('v1beta2', 'at-v1')).object, apiVersion: `${GROUP}/v1` }),
  );
  t.not(write.status, 200, `a write at v1 fails: ${write.status}`);
  t.equal(await content('v1beta2', 'at-v1'), stored, 'the stored object is unchanged');
  webhook = await startWebhook(dir, (cluster as TestCluster).kubeconfig, [], true, hook.port);
  await waitFor('reads at v1 again', async () => (await api('GET', path('v1', 'at-v1'))).status === 200, 20_000, 250);
  t.equal(infoList((await get('v1', 'at-v1')).text), EXPECTED_INFO, 'back: read at v1, exact');
  t.match((await get('v1beta1', 'at-v1')).text, '"volumeSnapshotHandlePairList"', 'back: read at v1beta1');
});

t.test('stored at v1 (conversion-store-v1, then migrate-storage): with the webhook down, v1 goes on; nothing lost', async (t) => {
  const c = cluster as TestCluster;
  const kc = new KubeConfig();
  kc.loadFromFile(c.kubeconfig);
  const names = ['at-v1beta1', 'at-v1beta2', 'at-v1'];
  const before = new Map<string, string>();
  for (const name of names) before.set(name, await content('v1', name));
  await storeV1(kc);
  const migrate = spawnSync(process.execPath, [MAIN, 'migrate-storage', `--kubeconfig=${c.kubeconfig}`], { encoding: 'utf8' });
  t.equal(migrate.status, 0, `migrate-storage: ${migrate.stdout}${migrate.stderr}`);
  t.match(
    migrate.stdout,
    /^volumegroupsnapshotcontents: [1-9]\d* objects? rewritten at v1; storedVersions \[v1beta2, v1\] -> \[v1\]$/m,
    'every stored content rewritten at v1',
  );
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  const stored = await extensions.readCustomResourceDefinitionStatus({ name: `volumegroupsnapshotcontents.${GROUP}` });
  t.same(stored.status?.storedVersions, ['v1'], 'storedVersions trimmed to v1');

  const hook = webhook as TestWebhook;
  await hook.process.stop();
  for (const name of names) {
    t.equal(await content('v1', name), before.get(name), `webhook down: ${name} read at v1, every value as before`);
  }
  t.equal(infoList((await get('v1', 'at-v1')).text), EXPECTED_INFO, 'integers beyond 2^53 exact');
  const { text } = await get('v1', 'at-v1beta2');
  const write = await api('PUT', path('v1', 'at-v1beta2'), text);
  t.equal(write.status, 200, `webhook down: a write at v1 goes through (${write.text.slice(0, 200)})`);
  const older = await api('GET', path('v1beta2', 'at-v1'));
  t.not(older.status, 200, `webhook down: a read at v1beta2 still needs it (${older.status})`);
  t.match(older.text, /conversion webhook for groupsnapshot\.storage\.k8s\.io\/v1, Kind=VolumeGroupSnapshotContent failed/);
  webhook = await startWebhook(dir, c.kubeconfig, [], true, hook.port);
  await waitFor('reads at v1beta2 again', async () => (await api('GET', path('v1beta2', 'at-v1'))).status === 200, 20_000, 250);
});

t.test("docs/install.md's undo of the conversion stanza, twice with the webhook gone: every version reads", async (t) => {
  const c = cluster as TestCluster;
  await (webhook as TestWebhook).process.stop();
  const block = docBlocks('install', 'Remove it safely').find((b) => b.startsWith('for crd in ')) ?? '';
  t.match(block, /kubectl patch/, 'the page has the block');
  for (const round of ['wired', 'already undone']) {
    const r = spawnSync('bash', ['-euo', 'pipefail', '-c', block], {
      encoding: 'utf8',
      env: { ...process.env, KUBECONFIG: c.kubeconfig },
      timeout: 60_000,
    });
    t.equal(r.status, 0, `${round}: ${r.stdout}${r.stderr}`);
  }
  const kc = new KubeConfig();
  kc.loadFromFile(c.kubeconfig);
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  for (const plural of ['volumegroupsnapshots', 'volumegroupsnapshotcontents', 'volumegroupsnapshotclasses']) {
    const crd = await extensions.readCustomResourceDefinition({ name: `${plural}.${GROUP}` });
    t.same(crd.spec.conversion, { strategy: 'None' }, `${plural}: no conversion stanza left`);
    // The apiserver swaps a CRD's storage a moment after the patch is stored; until then a list at another version
    // may still call the stopped webhook. Bounded: 10 s.
    for (const version of ['v1beta1', 'v1beta2', 'v1']) {
      let list = { status: 0, text: '' };
      await waitFor(
        `${plural} listed at ${version}`,
        async () => (list = await api('GET', `/apis/${GROUP}/${version}/${plural}`)).status === 200,
        10_000,
        200,
      ).catch(() => undefined);
      t.equal(
        list.status,
        200,
        `${plural} listed at ${version} without the webhook ${list.status === 200 ? '' : list.text.slice(0, 300)}`,
      );
    }
  }
  t.equal(infoList((await get('v1', 'at-v1')).text), EXPECTED_INFO, 'a content read at v1 as before, exact');
  t.comment(`a content read at v1beta1 now: ${JSON.stringify((await get('v1beta1', 'at-v1')).object.status)}`);
});
